import AsyncHTTPClient
import BeaconDelivery
import BeaconEngine
import BeaconOutbox
import BeaconRegistryClient
import BeaconTestSupport
import BeaconWire
import DaemonSupport
import LockedValue
import RegistryTestServer
import Testing

/// The poster and sightings heard before the system clock was synchronised, against a real registry on loopback:
/// they wait, go with their times corrected once the clock is right, or go marked after waiting too long.
@Suite(.serialized, .timeLimit(.minutes(20))) struct PendingTimePosterTests {
    static let hour: Int64 = 3_600_000_000_000
    /// The truth: the wall clock at monotonic zero.
    static let truth = EngineHarness.origin.nanosecondsSinceEpoch

    /// A pair of clocks the test moves: monotonic seconds, whether NTP has set the wall clock (3 h behind until then).
    final class Clocks: Sendable {
        let state = LockedValue((monotonic: Int64(120_000_000_000), synchronized: false))
        func reading() -> ClockReading {
            state.withLock { state in
                ClockReading(
                    wall: state.monotonic + PendingTimePosterTests.truth
                        - (state.synchronized ? 0 : 3 * PendingTimePosterTests.hour),
                    monotonic: state.monotonic, synchronized: state.synchronized, bootID: "boot-1")
            }
        }
    }

    /// One sighting heard at monotonic 60–90 s, queued at 100 s while the clock was 3 h behind.
    static func queueOne(_ outbox: Outbox) throws -> Sighting {
        let sighting = makeSightings(1)[0]
        let pending = PendingTime(
            firstSeen: 60_000_000_000, lastSeen: 90_000_000_000, queuedAt: 100_000_000_000, bootID: "boot-1",
            offset: truth - 3 * hour)
        try outbox.enqueue(
            [
                OutgoingSighting.outboxItem(
                    sighting, stationID: "cafe-1", latitude: 51.5, longitude: -0.12, offset: pending.offset,
                    pending: pending)
            ],
            now: milliseconds())
        return sighting
    }

    static func run(
        _ server: RegistryServer, clocks: Clocks, wait: Duration,
        _ body: (Outbox, SightingPoster<ContinuousClock>) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let configuration = httpConfiguration(server)
        let client = HTTPRegistry.makeHTTPClient(configuration)
        let outbox = try Outbox(path: directory.file("outbox.sqlite"))
        let (logger, _) = capturingLogger()
        let poster = SightingPoster(
            outbox: outbox, sink: HTTPRegistry(configuration: configuration, client: client),
            clock: ContinuousClock(),
            backoff: Backoff(base: .milliseconds(20), cap: .milliseconds(200)), logger: logger, wallClock: milliseconds,
            systemClocks: { clocks.reading() }, clockWait: wait)
        let task = Task { await poster.run(idlePoll: .milliseconds(100)) }
        // The client is shut down however the body ends: one left running is a fatal error when it is freed (a
        // #require that failed under the whole suite's load once took the test process down with it).
        do {
            try await body(outbox, poster)
        } catch {
            task.cancel()
            await task.value
            try? await client.shutdown()
            throw error
        }
        task.cancel()
        await task.value
        try await client.shutdown()
    }

    @Test func aSightingHeardBeforeSynchronisationGoesWithItsTimesCorrected() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.requireKey(secretKey)
            let clocks = Clocks()
            try await Self.run(server, clocks: clocks, wait: .seconds(600)) { outbox, poster in
                let sighting = try Self.queueOne(outbox)
                // Looked at twice and held back twice: a poster that sent it after one look would never look again.
                #expect(await eventually(within: 30) { poster.statistics.clockChecks >= 2 })
                #expect(poster.statistics.waitingForClock)
                #expect(server.posts.isEmpty, "sent before the clock was known")
                // NTP steps the clock 3 h forward and says it is synchronised.
                clocks.state.withLock { $0 = (monotonic: 130_000_000_000, synchronized: true) }
                #expect(await eventually(within: 30) { server.sightings[sighting.id.description] != nil })
                let body = try #require(server.sightings[sighting.id.description])
                #expect(
                    body["firstSeen"] == "2024-06-01T08:01:00.000000Z"
                        && body["lastSeen"] == "2024-06-01T08:01:30.000000Z")
                #expect(body["date"] == "2024-06-01T08:01:30.000000Z" && body["clockSynchronized"] == nil)
                #expect(!poster.statistics.waitingForClock)
                #expect(try outbox.pendingTimes() == 0)
            }
        }
    }

    @Test func aClockThatStaysUnsynchronisedSendsItMarked() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.requireKey(secretKey)
            let clocks = Clocks()
            // Queued at monotonic 100 s; the clock reads 120 s: with a 25 s wait, it goes once 125 s have passed.
            try await Self.run(server, clocks: clocks, wait: .seconds(25)) { outbox, poster in
                let sighting = try Self.queueOne(outbox)
                #expect(await eventually(within: 30) { poster.statistics.clockChecks >= 2 })
                #expect(server.posts.isEmpty, "sent before its wait was over")
                clocks.state.withLock { $0.monotonic = 126_000_000_000 }
                #expect(await eventually(within: 30) { server.sightings[sighting.id.description] != nil })
                let body = try #require(server.sightings[sighting.id.description])
                let raw = try #require(server.posts.first { $0.body["sightingId"] == sighting.id.description }?.raw)
                #expect(raw.contains(#""clockSynchronized":false"#), "\(raw)")
                #expect(body["lastSeen"] == "2024-06-01T05:01:30.000000Z", "the best time known: 3 h behind")
            }
        }
    }
}
