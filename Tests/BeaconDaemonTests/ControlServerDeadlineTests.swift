import BeaconControl
import BeaconPOSIX
import BeaconTestSupport
import Foundation
import LockedValue
import Logging
import ServiceLifecycle
import Testing

/// The control server's 2 s for a request line, on a clock the test moves: a client that says nothing is answered
/// with the reason when its time is up on the server's clock, not before, and is no hindrance to others meanwhile.
@Suite(.timeLimit(.minutes(20))) struct ControlServerDeadlineTests {
    /// Deadlines that pass only when the test moves its clock, kept until then: how many wait, and when each is due.
    final class SteppedTimer: Sendable {
        private struct Waiting {
            var due: Duration
            var expire: @Sendable () -> Void
        }

        private struct State {
            var now = Duration.zero
            var next = 0
            var waiting: [Int: Waiting] = [:]
        }

        private let state = LockedValue(State())

        var timer: ControlTimer {
            ControlTimer { [self] after, expire in
                let id = state.withLock { state in
                    defer { state.next += 1 }
                    state.waiting[state.next] = Waiting(due: state.now + after, expire: expire)
                    return state.next
                }
                return { [self] in _ = state.withLock { $0.waiting.removeValue(forKey: id) } }
            }
        }

        var waiting: Int { state.withLock { $0.waiting.count } }

        /// Moves the clock on, and expires (in the order they were set) the deadlines it passed.
        func advance(by step: Duration) {
            let due = state.withLock { state in
                state.now += step
                let now = state.now
                let due = state.waiting.filter { $0.value.due <= now }.sorted { $0.key < $1.key }
                for (id, _) in due { state.waiting[id] = nil }
                return due.map(\.value.expire)
            }
            for expire in due { expire() }
        }
    }

    /// A client connected to `path` that sends nothing; non-blocking, so that a test can look for an answer.
    static func silentClient(_ path: String) throws -> UnixSocket {
        try UnixSocket.connect(path: path, timeoutSeconds: 30)
    }

    /// What has come on `descriptor` so far, without waiting.
    static func received(_ descriptor: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
    }

    @Test func aSilentClientIsAnsweredWhenItsTimeIsUpOnTheServersClock() async throws {
        let directory = try TemporaryDirectory("beacond-control")
        defer { directory.remove() }
        let path = directory.file("control.sock")
        let clock = SteppedTimer()
        let refreshes = Collected<Int>()
        let server = try ControlServer(
            path: path, status: { preconditionFailure("no client of this test asks for the status") },
            refresh: { refreshes.add(1) }, retryDeadLetters: { .success(0) }, logger: Logger(label: "control-test"),
            timer: clock.timer)
        let group = ServiceGroup(services: [server], logger: Logger(label: "control-test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // Up once it answers: a loaded machine (the sanitizer step, every suite starting at once) may take a while
            // to start the service's thread and loop, and the silent client's deadline is only set once it is served.
            let up = ContinuousClock.now
            var answered = false
            while !answered, ContinuousClock.now - up < .seconds(120) {
                answered =
                    (try? await Task.detached { try ControlClient.send("refresh", path: path) }.value)?.ok == true
            }
            try #require(answered, "the control server did not answer within 120 s")
            let silent = try Self.silentClient(path)
            // Its deadline is set when the server has it: one waiting on the server's clock.
            #expect(await eventually { clock.waiting == 1 }, "\(clock.waiting) deadlines")
            // Refreshes are answered while it says nothing, each with a deadline of its own that its answer ends.
            func refreshTwice() async throws {
                for _ in 0..<2 {
                    let answer = try await Task.detached { try ControlClient.send("refresh", path: path) }.value
                    #expect(answer.ok && answer.message == "refresh requested", "\(answer.error ?? "")")
                }
            }
            try await refreshTwice()
            clock.advance(by: .milliseconds(1_999))
            #expect(clock.waiting == 1, "its deadline passed before its 2 s were up on the server's clock")
            try await refreshTwice()
            #expect(Self.received(silent.descriptor).isEmpty, "answered before its 2 s were up on the server's clock")
            // Each answered after it was made (a first one the loop above gave up on may be made late, so the count
            // is at least, not exactly, one more than the four here).
            #expect(refreshes.all.count >= 5, "the first, and four while the silent client waited")
            clock.advance(by: .milliseconds(1))
            var answer = ""
            #expect(
                await eventually {
                    answer += Self.received(silent.descriptor)
                    return answer.contains("\n")
                })
            #expect(answer.contains("no request line"), "\(answer)")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(!FileManager.default.fileExists(atPath: path), "the socket is removed at the stop")
    }
}
