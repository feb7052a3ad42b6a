import BeaconMQTT
import BeaconTestSupport
import Foundation
import Testing

/// The client's reconnection backoff, timed on a manual clock: each wait is read off the clock before the test ends
/// it, so the waits the backoff chose are seen whole, and nothing is tried while the clock stands still. The broker
/// is away: a port bound and never listened on. (The reset once it is back is MQTTClientTests' and MQTTDaemonTests' broker restarts,
/// on the system clock: on this clock it failed once in the whole suite, the connection never made.)
@Suite(.timeLimit(.minutes(20))) struct MQTTReconnectTests {
    /// The backoff's windows (`Backoff(base: 2 s, cap: 60 s)`): half to all of 2 s, doubling, to 30–60 s.
    static let windows: [ClosedRange<Double>] = [1...2, 2...4, 4...8, 8...16, 16...32, 30...60, 30...60]

    /// The wait the network thread is in now, once it is in one.
    static func currentWait(_ clock: ManualClock) async -> Duration? {
        guard await eventually(within: 600, { clock.sleepers == 1 }) else { return nil }
        return clock.soonestWait
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test func aBrokerAwayIsTriedAfterWaitsDoublingToTheCap() async throws {
        // A port bound and never listened on: every attempt is refused, and no other test's server can take it.
        let (refusing, port) = try LoopbackPort.refusing()
        defer { close(refusing) }
        let clock = ManualClock()
        var settings = MQTTSettings(host: "127.0.0.1", port: port, clientID: "reconnect")
        settings.reconnectClock = .on(clock)
        let client = try MQTTClient(settings)
        try client.start()
        defer { client.stop() }

        var waits: [Double] = []
        for _ in Self.windows {
            guard let wait = await Self.currentWait(clock) else { break }
            waits.append(Self.seconds(wait))
            clock.advance(by: wait)  // the attempt fails (nothing listens), and the next wait begins
        }
        #expect(waits.count == Self.windows.count, "\(waits)")
        for (wait, window) in zip(waits, Self.windows) { #expect(window.contains(wait), "\(waits)") }
        #expect(client.connection != .connected)
    }
}
