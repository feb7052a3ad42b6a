import AsyncHTTPClient
import BeaconDelivery
import BeaconEngine
import BeaconOutbox
import BeaconRegistryClient
import BeaconTestSupport
import BeaconWire
import DaemonSupport
import Foundation
import RegistryTestServer
import StationSettings
import Testing

/// The poster against a real HTTP server on loopback that injects faults. Serialized, and every wait for an outcome
/// generous (a fast run never waits it out): under ThreadSanitizer with the whole suite on two cores, Swift's thread
/// pool, which runs the test server and the client alike, can be busy for seconds at a time.
@Suite(.serialized, .timeLimit(.minutes(20))) struct PosterTests {
    /// A poster on `server` with backoffs of a few milliseconds on `clock`. A test that waits an unanswered request
    /// out gives a short `deadline` (a station's is 20 s); the others keep a long one, which costs them nothing and
    /// spares an answer they expect a timeout of its own.
    func withPoster<C: Clock>(
        _ server: RegistryServer, authentication: RegistryConfiguration.Authentication = .query,
        deadline: Duration = .seconds(30), bodyWait: Duration = .seconds(2), clock: C,
        _ body: (Outbox, SightingPoster<C>, String) async throws -> Void
    ) async throws where C.Duration == Duration {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var configuration = httpConfiguration(server, authentication: authentication)
        configuration.requestTimeout = deadline
        configuration.answerBodyWait = bodyWait
        let client = HTTPRegistry.makeHTTPClient(configuration)
        let outbox = try Outbox(path: directory.file("outbox.sqlite"))
        let (logger, handler) = capturingLogger()
        let poster = SightingPoster(
            outbox: outbox, sink: HTTPRegistry(configuration: configuration, client: client), clock: clock,
            backoff: Backoff(base: .milliseconds(2), cap: .milliseconds(10)), logger: logger, wallClock: milliseconds)
        let task = Task { await poster.run(idlePoll: .milliseconds(100)) }
        do {
            try await body(outbox, poster, directory.path)
        } catch {
            task.cancel()
            try? await client.shutdown()
            throw error
        }
        task.cancel()
        await task.value
        try await client.shutdown()
        #expect(!logText(handler).contains(secretKey), "the API key never reaches the log")
    }

    @Test func everySightingArrivesOnceInOrderThroughFaults() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.requireKey(secretKey)
            // (Answers that take their time are the two tests below.)
            server.inject([
                .status(500), .dropConnection, .status(503), .retryAfter(seconds: 0), .status(408), .garbage,
                .status(502),
            ])
            let sightings = makeSightings(10)
            try await withPoster(server, clock: ContinuousClock()) { outbox, poster, _ in
                try outbox.enqueue(items(sightings), now: milliseconds())
                poster.nudge()
                #expect(try await eventually(within: 60) { try outbox.statistics().depth == 0 })
                #expect(
                    poster.statistics.retries == 5,
                    "500, 503, 429, 408 and 502; the 2xx answers with a broken or garbage body count as delivered")
            }
            let expected = sightings.map(\.id.description)
            #expect(Set(server.sightings.keys) == Set(expected), "every sighting arrived")
            // Repeats (a request that reached the server before its answer was lost) carry the same id.
            for post in server.posts { #expect(post.idempotencyKey == post.body["sightingId"]) }
            var firstArrival: [String] = []
            for post in server.posts where !firstArrival.contains(post.body["sightingId"]!) {
                firstArrival.append(post.body["sightingId"]!)
            }
            #expect(firstArrival == expected, "oldest first")
            // The body carries the registry's required fields and beacond's own.
            let body = try #require(server.sightings[expected[0]])
            #expect(body["bikeId"] == "bike-0" && body["stationId"] == "cafe-1" && body["kind"] == "enter")
            #expect(body["latitude"] == "51.5" && body["longitude"] == "-0.12" && body["date"]?.hasSuffix("Z") == true)
            #expect(server.requests.allSatisfy { $0.query?.contains("key=\(secretKey)") == true })
        }
    }

    /// An answer that does not come is given up on at the request's deadline (here 500 ms) and the sighting retried:
    /// the server never answers that first request, so only the deadline can have ended it.
    @Test func anUnansweredPostIsGivenUpOnAtTheDeadlineAndRetried() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.inject([.unanswered])
            try await withPoster(server, deadline: .milliseconds(500), clock: ContinuousClock()) { outbox, poster, _ in
                try outbox.enqueue(items(Array(makeSightings(1).prefix(1))), now: milliseconds())
                poster.nudge()
                #expect(try await eventually(within: 60) { try outbox.statistics().depth == 0 })
                #expect(poster.statistics.retries >= 1 && server.sightings.count == 1)
            }
        }
    }

    /// A 2xx whose body then trickles (for 50 s) is delivered, not retried: its body is given up on after the
    /// answer's body wait (here 200 ms), outside the request's deadline, and the registry has the sighting.
    @Test func aTrickledBodyAfterA2xxIsDeliveredNotRetried() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.inject([.trickle(every: .milliseconds(50), bytes: 1_000)])
            try await withPoster(server, bodyWait: .milliseconds(200), clock: ContinuousClock()) { outbox, poster, _ in
                try outbox.enqueue(items(Array(makeSightings(1).prefix(1))), now: milliseconds())
                poster.nudge()
                // The poster writes the delivery down, then counts it: the count is the later of the two signals.
                #expect(
                    try await eventually(within: 60) {
                        try outbox.statistics().depth == 0 && poster.statistics.delivered == 1
                    })
                #expect(poster.statistics.retries == 0)
            }
            #expect(server.requestCount == 1)
        }
    }

    /// A 429's Retry-After (1 s) is the wait the poster takes on its clock, where backoff alone would have waited
    /// 1-2 ms; nothing is sent before it is over.
    @Test func retryAfterIsHonoured() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.inject([.retryAfter(seconds: 1)])
            let clock = ManualClock()
            try await withPoster(server, clock: clock) { outbox, poster, _ in
                try outbox.enqueue(items(Array(makeSightings(1).prefix(1))), now: milliseconds())
                poster.nudge()
                #expect(await eventually(within: 60) { poster.statistics.retries == 1 && clock.sleepers == 1 })
                let deadline = try #require(clock.deadlines.first)
                #expect(clock.now.duration(to: deadline) == .seconds(1), "the wait is the registry's Retry-After")
                clock.advance(to: deadline.advanced(by: .nanoseconds(-1)))
                #expect(server.requestCount == 1 && clock.sleepers == 1, "nothing sent before the wait is over")
                clock.advance(to: deadline)
                #expect(try await eventually(within: 60) { try outbox.statistics().depth == 0 })
            }
            #expect(server.requestCount == 2)
        }
    }

    @Test func refusedSightingsAreDeadLetteredAndTheRestDelivered() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            // Malformed for this registry: those two alone (a refused key holds everything: RegistryMisbehaviourTests).
            server.inject([.status(400), .status(422)])
            let sightings = makeSightings(3)
            try await withPoster(server, authentication: .bearer, clock: ContinuousClock()) { outbox, _, _ in
                try outbox.enqueue(items(sightings), now: milliseconds())
                #expect(try await eventually { try outbox.statistics().depth == 0 })
                let dead = try outbox.deadLetters()
                #expect(Set(dead.map(\.sightingID)) == Set(sightings.prefix(2).map(\.id.description)))
                #expect(Set(dead.compactMap(\.status)) == [400, 422])
                #expect(dead.allSatisfy { !$0.reason.contains(secretKey) })
            }
            #expect(server.sightings.count == sightings.count - 2)
            #expect(server.requests.allSatisfy { $0.authorization == "Bearer \(secretKey)" && $0.query == nil })
        }
    }

    /// The wiring of the backoff (its exact spread is PosterPolicyTests'): each failed attempt is followed by a wait
    /// of the policy's length on the poster's clock, a manual one here, and no attempt comes before it is over.
    @Test func anUnreachableRegistryLosesNothingAndWaitsEachBackoffOnItsClock() async throws {
        let server = RegistryServer()
        try await server.start()
        let port = server.port
        await server.stop()  // nothing listens there now
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let configuration = RegistryConfiguration(
            location: .http(base: "http://127.0.0.1:\(port)"), apiKey: APIKey(secretKey), stationID: "cafe-1",
            connectTimeout: .milliseconds(100), requestTimeout: .milliseconds(500))
        let client = HTTPRegistry.makeHTTPClient(configuration)
        let outbox = try Outbox(path: directory.file("outbox.sqlite"))
        let (logger, handler) = capturingLogger()
        let clock = ManualClock()
        let poster = SightingPoster(
            outbox: outbox, sink: HTTPRegistry(configuration: configuration, client: client), clock: clock,
            backoff: Backoff(base: .milliseconds(100), cap: .milliseconds(400)), logger: logger, wallClock: milliseconds
        )
        try outbox.enqueue(items(makeSightings(2)), now: milliseconds())
        let task = Task { await poster.run() }
        let windows: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(400)]
        for (attempt, window) in windows.enumerated() {
            #expect(
                await eventually(within: 60) { poster.statistics.retries == attempt + 1 && clock.sleepers == 1 },
                "attempt \(attempt + 1) and its wait")
            guard let deadline = clock.deadlines.first else {
                Issue.record("no wait after attempt \(attempt + 1)")
                break
            }
            let wait = clock.now.duration(to: deadline)
            #expect(
                wait >= window / 2 && wait <= window,
                "attempt \(attempt + 1) waits \(wait), not half to all of \(window)")
            clock.advance(to: deadline.advanced(by: .nanoseconds(-1)))
            #expect(poster.statistics.retries == attempt + 1 && clock.sleepers == 1, "nothing before the wait is over")
            clock.advance(to: deadline)
        }
        task.cancel()
        await task.value
        try await client.shutdown()
        #expect(try outbox.statistics().depth == 4, "nothing lost")
        #expect(poster.statistics.lastError?.contains("REDACTED") == true)
        #expect(!logText(handler).contains(secretKey))
    }
}

@Suite(.timeLimit(.minutes(20))) struct ConnectionResetTests {
    @Test func aResetConnectionIsRetriedNotDeadLettered() async throws {
        // (the reason text shows what the client made of it: "connection reset" or "connection closed")
        let reset = try ResetServer()
        defer { reset.stop() }
        let configuration = RegistryConfiguration(
            location: .http(base: reset.baseURL), apiKey: APIKey(secretKey), stationID: "cafe-1",
            connectTimeout: .milliseconds(500), requestTimeout: .seconds(2))
        let client = HTTPRegistry.makeHTTPClient(configuration)
        let registry = HTTPRegistry(configuration: configuration, client: client)
        let item = items(makeSightings(1))[0]
        let outcome = await registry.deliver(try #require(OutgoingSighting(stored: item.body)))
        guard case .retry(nil, let reason) = outcome else {
            Issue.record("expected a retry, got \(outcome)")
            try await client.shutdown()
            return
        }
        #expect(reason.contains("key=REDACTED") && !reason.contains(secretKey))
        await #expect(throws: RegistryError.self) {
            try await registry.fetchMissing(validators: nil, regions: [.findMyBike])
        }
        try await client.shutdown()
    }
}

/// A stop (graceful shutdown) lets the post under way finish and writes its answer down, so the next start does
/// not post that sighting again; a cancellation would drop the answer (DaemonEndToEndTests saw the repeat under load).
@Suite(.timeLimit(.minutes(20))) struct PosterStopTests {
    @Test func aStopWaitsForThePostUnderWayAndRecordsIt() async throws {
        let server = RegistryServer()
        try await server.start()
        try await withTeardown({ await server.stop() }) {
            server.hold()  // the first post stays under way until released
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            // The post is held while the test sees it arrive and stops the poster; its deadline is not the subject,
            // and the helpers' 8 s passed in that time once in a loaded AddressSanitizer run.
            var configuration = httpConfiguration(server)
            configuration.requestTimeout = .seconds(300)
            let client = HTTPRegistry.makeHTTPClient(configuration)
            try await withTeardown({ try? await client.shutdown() }) {
                let outbox = try Outbox(path: directory.file("outbox.sqlite"))
                let poster = SightingPoster(
                    outbox: outbox, sink: HTTPRegistry(configuration: configuration, client: client),
                    clock: ContinuousClock(),
                    logger: capturingLogger().0, wallClock: milliseconds)
                try outbox.enqueue(items(makeSightings(3)), now: milliseconds())
                let queued = try outbox.statistics().depth
                let running = Task { await poster.run(idlePoll: .milliseconds(100)) }
                // The first post has arrived (the server notes a request when it comes, a post once answered): under way.
                #expect(await eventually(within: 60) { server.requests.count == 1 })
                poster.stop()
                #expect(poster.statistics.delivered == 0 && server.posts.isEmpty, "its answer has not come")
                server.release()
                await running.value
                let left = try outbox.statistics()
                #expect(
                    left.depth == queued - 1 && poster.statistics.delivered == 1,
                    "the post under way was recorded as delivered, and no other started: \(left) \(poster.statistics)")
                #expect(server.posts.count == 1)
            }
        }
    }
}
