import AsyncHTTPClient
import BeaconDelivery
import BeaconOutbox
import BeaconRegistryClient
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// An outbox beacond 0.2.0 wrote (Fixtures/outbox: 19 sightings queued for a registry that was down, one of them
/// tried once, and one dead letter), opened by this beacond with a second sink configured: it migrates with nothing
/// lost, and every sighting in it reaches the registry.
@Suite(.timeLimit(.minutes(20))) struct OutboxUpgradeTests {
    static let fixture = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/outbox/outbox-0.2.0.sqlite").path

    @Test func anOutboxFromTheReleaseBeforeSinksMigratesAndEverySightingInItIsDelivered() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("outbox.sqlite")
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: path)
        let outbox = try Outbox(path: path, sinks: [Outbox.registry, "mqtt"])

        // What was queued is owed to the registry, the attempt and its error kept; the new sink is owed nothing
        // from before it was configured. The dead letter is the registry's.
        let statistics = try outbox.statistics()
        #expect(statistics.depth == 19 && statistics.deadLetters == 1)
        let registry = try #require(statistics.sinks.first)
        #expect(registry.sink == Outbox.registry && registry.depth == 19 && registry.deadLetters == 1)
        #expect(registry.attempts == 1 && registry.lastError?.contains("HTTP 503") == true, "\(registry)")
        #expect(statistics.sinks.last == SinkBacklog(sink: "mqtt", depth: 0, deadLetters: 0))
        #expect(try outbox.deadLetters().map(\.sink) == [Outbox.registry])
        let journal = try outbox.journal(since: 0, limit: 100)
        #expect(journal.count == 20, "the status journal came through")
        let everySighting = Set(journal.recent.map(\.sightingID))

        // The registry is back, and whatever made it refuse the dead letter fixed.
        #expect(try outbox.requeueDeadLetters() == 1)
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            let configuration = httpConfiguration(server)
            let client = HTTPRegistry.makeHTTPClient(configuration)
            let poster = SightingPoster(
                outbox: outbox, sink: HTTPRegistry(configuration: configuration, client: client),
                clock: ContinuousClock(), logger: capturingLogger().0, wallClock: milliseconds)
            let task = Task { await poster.run(idlePoll: .milliseconds(50)) }
            #expect(try await eventually { try outbox.statistics().sinks.first?.depth == 0 })
            task.cancel()
            await task.value
            try await client.shutdown()
            #expect(Set(server.sightings.keys) == everySighting && everySighting.count == 20)
            #expect(server.posts.count == 20, "each once")
        }
    }
}
