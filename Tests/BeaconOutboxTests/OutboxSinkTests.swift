import BeaconEngine
import BeaconOutbox
import BeaconTestSupport
import Testing

/// One committed sighting, a delivery state per sink: each sink's line moves on its own, and a sighting leaves the
/// queue once every sink has answered for it.
@Suite(.timeLimit(.minutes(20))) struct OutboxSinkTests {
    static let registry = Outbox.registry
    static let mqtt = "mqtt"

    static func item(_ n: Int, _ kind: SightingKind = .enter) -> OutboxItem {
        OutboxItem(sightingID: "s-\(n)", kind: kind, body: "{\"n\":\(n)}")
    }

    func backlog(_ outbox: Outbox, _ sink: String) throws -> SinkBacklog? {
        try outbox.statistics().sinks.first { $0.sink == sink }
    }

    @Test func eachSinkHasItsOwnLineAndASightingLeavesWhenAllHaveIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let outbox = try Outbox(path: directory.file("outbox.sqlite"), sinks: [Self.registry, Self.mqtt])
        try outbox.enqueue([Self.item(1), Self.item(2)], now: 1)
        // The registry takes both; the broker is away.
        while let entry = try outbox.oldest(for: Self.registry) {
            try outbox.markDelivered(entry, sink: Self.registry, now: 2)
        }
        let first = try #require(try outbox.oldest(for: Self.mqtt))
        try outbox.markAttempt(first, sink: Self.mqtt, error: "broker away")
        #expect(try outbox.statistics().depth == 2, "still owed to the broker")
        #expect(try backlog(outbox, Self.registry) == SinkBacklog(sink: Self.registry, depth: 0, deadLetters: 0))
        #expect(
            try backlog(outbox, Self.mqtt)
                == SinkBacklog(sink: Self.mqtt, depth: 2, deadLetters: 0, attempts: 1, lastError: "broker away"))
        #expect(try outbox.oldest(for: Self.mqtt)?.sightingID == "s-1", "a failed attempt keeps it first in line")
        // Not delivered yet, so a replay producing it again does not queue it twice.
        #expect(try outbox.enqueue([Self.item(1)], now: 3).duplicates == 1)

        try outbox.markDelivered(first, sink: Self.mqtt, now: 4)
        #expect(try outbox.statistics().depth == 1)
        #expect(try outbox.journal(since: 0).recent.first { $0.sightingID == "s-1" }?.delivery == .delivered)
        #expect(try outbox.journal(since: 0).recent.first { $0.sightingID == "s-2" }?.delivery == .queued)
        try outbox.markDelivered(try #require(try outbox.oldest(for: Self.mqtt)), sink: Self.mqtt, now: 5)
        #expect(try outbox.statistics().depth == 0)
        #expect(try outbox.enqueue([Self.item(1), Self.item(2)], now: 6).duplicates == 2, "delivered everywhere")
    }

    @Test func aSinkThatRefusesGetsTheDeadLetterAndTheOthersStillDeliver() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let outbox = try Outbox(path: directory.file("outbox.sqlite"), sinks: [Self.registry, Self.mqtt])
        try outbox.enqueue([Self.item(1)], now: 1)
        let entry = try #require(try outbox.oldest(for: Self.registry))
        try outbox.markDead(entry, sink: Self.registry, status: 422, reason: "HTTP 422", now: 2)
        #expect(try outbox.oldest(for: Self.registry) == nil)
        #expect(try outbox.oldest(for: Self.mqtt)?.sightingID == "s-1", "the broker is still owed it")
        try outbox.markDelivered(try #require(try outbox.oldest(for: Self.mqtt)), sink: Self.mqtt, now: 3)
        #expect(try outbox.statistics().depth == 0)
        let dead = try outbox.deadLetters()
        #expect(dead.map(\.sink) == [Self.registry] && dead.map(\.sightingID) == ["s-1"])
        #expect(try backlog(outbox, Self.registry)?.deadLetters == 1 && backlog(outbox, Self.mqtt)?.deadLetters == 0)

        // Put back, it is owed to the registry alone: the broker has it.
        #expect(try outbox.requeueDeadLetters() == 1)
        #expect(try outbox.oldest(for: Self.registry)?.sightingID == "s-1")
        #expect(try outbox.oldest(for: Self.mqtt) == nil)
        #expect(try outbox.deadLetters().isEmpty)
    }

    @Test func aSinkTakenOutOfTheConfigurationIsOwedNothingMore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("outbox.sqlite")
        do {
            let outbox = try Outbox(path: path, sinks: [Self.registry, Self.mqtt])
            try outbox.enqueue([Self.item(1), Self.item(2)], now: 1)
            try outbox.markDelivered(try #require(try outbox.oldest(for: Self.registry)), sink: Self.registry, now: 2)
            try outbox.close()
        }
        // MQTT is taken out: s-1, which only the broker was still owed, has been everywhere it goes now.
        let outbox = try Outbox(path: path, sinks: [Self.registry])
        #expect(outbox.abandoned == 1)
        #expect(try outbox.statistics().depth == 1)
        #expect(try outbox.oldest(for: Self.registry)?.sightingID == "s-2")
        #expect(try outbox.enqueue([Self.item(1)], now: 3).duplicates == 1, "and it is not queued again")
        #expect(try outbox.statistics().sinks.map(\.sink) == [Self.registry])
    }

    @Test func evictionTakesASightingOutOfEverySinksLine() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let outbox = try Outbox(path: directory.file("outbox.sqlite"), capacity: 2, sinks: [Self.registry, Self.mqtt])
        try outbox.enqueue([Self.item(1, .update), Self.item(2), Self.item(3)], now: 1)
        #expect(try outbox.statistics().depth == 2 && outbox.statistics().evicted == 1)
        for sink in [Self.registry, Self.mqtt] {
            #expect(try outbox.oldest(for: sink)?.sightingID == "s-2", "the evicted update is gone from \(sink)'s line")
            #expect(try backlog(outbox, sink)?.depth == 2)
        }
    }
}
