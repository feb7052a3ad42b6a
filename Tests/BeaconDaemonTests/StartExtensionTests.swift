import BeaconTestSupport
import DaemonSupport
import Testing

/// What systemd is told while a long start makes progress: more time at the first progress, then at most every
/// `every`, each message asking for `grant` from when it is sent.
@Suite(.timeLimit(.minutes(20))) struct StartExtensionTests {
    @Test func asksForMoreTimeAtFirstProgressThenAtMostEveryInterval() {
        let clock = ManualClock()
        var more = StartExtension(notifier: nil, clock: clock, every: .seconds(5), grant: .seconds(30))
        #expect(
            more.due(status: "loading: 0 MiB read")
                == ["EXTEND_TIMEOUT_USEC=30000000", "STATUS=loading: 0 MiB read"])
        clock.advance(by: .milliseconds(4_999))
        #expect(more.due(status: "loading: 1 MiB read") == nil, "within the interval of the last message")
        clock.advance(by: .milliseconds(1))
        #expect(more.due(status: "loading: 2 MiB read")?.first == "EXTEND_TIMEOUT_USEC=30000000")
        clock.advance(by: .seconds(1))
        #expect(more.due(status: "loading: 3 MiB read") == nil, "the interval runs from the last message sent")
    }

    @Test func aFractionOfASecondIsGivenInMicroseconds() {
        var more = StartExtension(notifier: nil, clock: ManualClock(), grant: .milliseconds(1_500))
        #expect(more.due(status: "x")?.first == "EXTEND_TIMEOUT_USEC=1500000")
    }

    /// The messages reach a real notify socket, one datagram each, and nothing between them: the one sent after the
    /// interval comes second.
    @Test func progressReachesTheNotifySocket() async throws {
        let directory = try TemporaryDirectory("start-extension")
        defer { directory.remove() }
        let listener = try NotifyListener(path: directory.file("notify.sock"))
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.path]))
        let clock = ManualClock()
        var more = StartExtension(notifier: notifier, clock: clock)
        more.progress("loading: 0 MiB read")
        more.progress("loading: 1 MiB read")
        clock.advance(by: .seconds(5))
        more.progress("loading: 2 MiB read")
        let last = await listener.firstIndex(within: 10) { $0.contains("STATUS=loading: 2 MiB read") }
        #expect(last == 1, "\(listener.all)")
        #expect(
            listener.all == [
                ["EXTEND_TIMEOUT_USEC=30000000", "STATUS=loading: 0 MiB read"],
                ["EXTEND_TIMEOUT_USEC=30000000", "STATUS=loading: 2 MiB read"],
            ])
    }
}
