import BeaconTestSupport
import BikeRegistryCore
import Foundation
import Testing

@testable import BikeRegistryServer

/// Connections have limits (issue 37, item 4): a request's head must come within 10 s of its first byte, an idle
/// connection is closed after 60 s, and a server under many idle and slow connections still answers a new client
/// within a second, starting as systemd starts it (a soft descriptor limit of 1024).
@Suite(.timeLimit(.minutes(20))) struct ConnectionLimitTests {
    typealias Deadlines = ConnectionDeadlines<TestClock>

    /// The deadlines' state machine, on a clock that does not move by itself.
    @Test func eachPhaseHasItsDeadline() {
        let start = TestClock.Instant.seconds(0)
        var deadlines = Deadlines(head: .seconds(10), idle: .seconds(60), now: start)
        #expect(deadlines.deadline == .seconds(60), "a new connection's first byte within the idle time")
        deadlines.bytesRead(at: .seconds(5))
        #expect(deadlines.deadline == .seconds(15), "the head within 10 s of its first byte")
        deadlines.bytesRead(at: .seconds(14))
        #expect(deadlines.deadline == .seconds(15), "more of the head does not move it")
        #expect(!deadlines.expired(at: .seconds(14.9)) && deadlines.expired(at: .seconds(15)))
        deadlines.headRead(at: .seconds(6))
        #expect(deadlines.deadline == .seconds(66), "the body within the idle time")
        deadlines.requestRead()
        #expect(deadlines.deadline == nil, "none while the server answers")
        #expect(!deadlines.expired(at: .seconds(10_000)))
        deadlines.answerWritten(at: .seconds(20))
        #expect(deadlines.deadline == .seconds(80), "idle again from the answer's end")
    }

    @Test func pipelinedRequestsKeepTheConnectionAnsweringUntilTheLastAnswer() {
        var deadlines = Deadlines(head: .seconds(10), idle: .seconds(60), now: .seconds(0))
        for at in [1.0, 2.0] {
            deadlines.bytesRead(at: .seconds(at))
            deadlines.headRead(at: .seconds(at))
            deadlines.requestRead()
        }
        deadlines.answerWritten(at: .seconds(3))
        #expect(deadlines.deadline == nil, "one answer still owed")
        deadlines.answerWritten(at: .seconds(4))
        #expect(deadlines.deadline == .seconds(64))
    }

    /// A head sent a byte at a time is cut at its deadline (1 s here); the server had no such deadline, and a
    /// head a byte a second held its connection for as long as the client liked. The head here would take 30 s to
    /// send; the cut is allowed 4 s past the deadline, for a loaded machine (the whole suite beside it, in CI).
    @Test func aHeadTrickledAByteAtATimeIsCutAtItsDeadline() async throws {
        let directory = try TemporaryDirectory("bike-registry-connections")
        defer { directory.remove() }
        let registry = try await RegistryHarness(.sqlite, directory: directory.path) { configuration in
            configuration.requestHeadTimeout = .seconds(1)
        }
        try await withTeardown({ await registry.stop() }) {
            let connection = try RawConnection(port: registry.port)
            let head = "GET /static/style.css HTTP/1.1\r\nHost: x\r\nX-Slow: " + String(repeating: "a", count: 300)
            let held = await connection.trickle(head, every: 0.1)
            #expect(held.map { $0 < .seconds(5) } ?? false, "cut after \(held.map { "\($0)" } ?? "never")")
        }
    }

    /// A connection that sends nothing, and one left open after its answer, are closed after the idle time (3 s).
    /// The idle time runs from the connection's start too, so it is long enough for a request sent at once to be read
    /// first: at 1 s the ThreadSanitizer run of 5d78eed, on two loaded cores, saw the kept connection closed
    /// unanswered.
    @Test func anIdleConnectionIsClosed() async throws {
        let directory = try TemporaryDirectory("bike-registry-connections")
        defer { directory.remove() }
        let idle = Duration.seconds(3)
        let registry = try await RegistryHarness(.sqlite, directory: directory.path) { configuration in
            configuration.idleTimeout = idle
        }
        try await withTeardown({ await registry.stop() }) {
            let silent = try RawConnection(port: registry.port)
            #expect(await silent.closed(within: 10), "a connection that never sent a byte")
            let kept = try RawConnection(port: registry.port)
            // Its idle time starts when the server has answered, which is after this.
            let sent = ContinuousClock.now
            kept.send("GET /static/style.css HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await kept.status() == 200)
            #expect(await kept.closed(within: 10), "a kept-alive connection after its answer")
            #expect(ContinuousClock.now - sent >= idle, "not before its idle time")
        }
    }

    /// 2,000 idle connections and 100 clients trickling their heads, against the real server started with a soft
    /// descriptor limit of 1024 (what systemd gives a service whatever its LimitNOFILE=): a new client is answered
    /// within 1 s, five times over. Before, the server kept the 1024 it was given, and new clients timed out once
    /// idle connections had taken them. The crowd is a process of its own (`Tests/load/crowd.py`): this one spawns
    /// processes beside it, which Foundation cannot do with thousands of descriptors open.
    /// The rounds start once the server has taken the whole crowd (the "arrival", bounded at 10 s): the first round
    /// of e6f7ec9's CI run took 1.1 s, the rest 29 to 69 ms, while the server was still accepting the crowd's queue.
    /// A speed, so not run in `.ci/run`'s sanitizer step (BEACOND_LOAD_TESTS=off), where 2,000 connections against a
    /// sanitized server starved the PostgreSQL tests beside it; it runs in the plain step on every commit.
    @Test(.disabled(if: LoadTests.areOff))
    func aNewClientIsAnsweredBesideTwoThousandIdleAndAHundredSlowConnections() async throws {
        let directory = try TemporaryDirectory("bike-registry-connections")
        defer { directory.remove() }
        let port = try LoopbackPort.free()
        let server = try DaemonProcess(
            [
                "-c", "ulimit -S -n 1024 && exec \"$0\" \"$@\"", BeacondRun.registryBinary.path, "serve", "--listen",
                "127.0.0.1:\(port)", "--database", directory.file("registry.sqlite"),
            ], executable: URL(fileURLWithPath: "/bin/sh"), logDirectory: directory.path, name: "registry")
        defer { server.terminate() }
        #expect(await eventually(within: 30) { server.stderr.contains("bike-registry listening") }, "\(server.stderr)")

        let crowd = try await BeacondRun.run(
            executable: "/usr/bin/python3",
            [
                Fixtures.repositoryRoot.appendingPathComponent("Tests/load/crowd.py").path, String(port), "2000", "100",
                "5",
            ])
        let result = try #require(
            try JSONSerialization.jsonObject(with: Data(crowd.stdout.utf8)) as? [String: Any], "\(crowd.stderr)")
        let arrival = try #require(result["arrival"] as? [String: Any])
        #expect(arrival["status"] as? Int == 200, "\(arrival)")
        #expect((arrival["ms"] as? Double ?? .infinity) < 10_000, "the crowd taken: \(arrival)")
        let answers = try #require(result["answers"] as? [[String: Any]])
        #expect(answers.count == 5)
        for answer in answers {
            #expect(answer["status"] as? Int == 200, "\(answers)")
            #expect((answer["ms"] as? Double ?? .infinity) < 1_000, "\(answers)")
        }
        #expect(result["notConnected"] as? Int == 0, "the server took every connection of the crowd: \(result)")
        #expect(result["closed"] as? Int == 0, "no connection of the crowd was closed before its time: \(result)")
        #expect(!server.stderr.contains("descriptor limit"), "\(server.stderr)")
    }
}
