import BeaconTestSupport
import BeaconWire
import Foundation
import Synchronization
import Testing

@testable import BeaconCapture

/// The stall watchdog driving real bytes: a fake controller (H4 over a socketpair), a fake management
/// channel (mgmt over a socketpair) and a file standing in for /dev/rfkill. HCIDEVDOWN/UP on a socketpair
/// fails (ENOTTY) as it would on a kernel that refuses it: an injected failure the ladder must climb past.
@Suite(.timeLimit(.minutes(20))) struct StallRecoveryTests {
    static let milliseconds: Int64 = 1_000_000
    /// Stall after 150 ms, 150 ms per step, rest 2 s after a failed ladder.
    static let policy = RecoveryLadder.Policy(
        stallAfter: 150 * milliseconds, stepGrace: 150 * milliseconds, backoffBase: 2_000 * milliseconds,
        backoffCap: 4_000 * milliseconds)

    final class Events: @unchecked Sendable {
        var reports: [AdapterReport] = []
        var names: [String] {
            reports.map { report in
                switch report.event {
                case .ladder(.stalled): "stalled"
                case .ladder(.take(let step)): "take \(step.rawValue)"
                case .ladder(.recovered(let step)): "recovered \(step.map { "\($0.rawValue)" } ?? "-")"
                case .ladder(.gaveUp): "gave up"
                case .stepFailed(let step, _): "failed \(step.rawValue)"
                case .gone: "gone"
                case .back: "back"
                }
            }
        }
    }

    /// The capture's clock, standing still until a test moves it: the watchdog decides when the test says. Its
    /// gathering pause moves it too, and takes no real time.
    final class SteppedClock: Sendable {
        private let nanoseconds = Atomic<Int64>(1_000_000_000)

        func advance(milliseconds: Int64) { nanoseconds.add(milliseconds * 1_000_000, ordering: .relaxed) }

        var capture: CaptureClock {
            CaptureClock(
                monotonicNanoseconds: { self.nanoseconds.load(ordering: .relaxed) },
                pause: { self.advance(milliseconds: Int64($0)) })
        }
    }

    static func settings(_ clock: SteppedClock) -> CaptureSettings {
        var settings = CaptureSettings(intervalMilliseconds: 100, windowMilliseconds: 100, recovery: policy)
        settings.clock = clock.capture
        return settings
    }

    static func capture(
        _ controller: FakeController, _ management: FakeManagement, rfkill: String, events: Events,
        clock: SteppedClock
    ) throws -> HCICapture {
        let capture = HCICapture(
            sockets: [controller.socket], settings: settings(clock), openManagement: { management.open() },
            rfkillPath: rfkill
        ) { events.reports.append($0) }
        try capture.start()
        return capture
    }

    /// Rounds of the capture until `done`, for at most `milliseconds` of its clock: each round `round` (a real poll,
    /// for what the fake devices send), then `step` milliseconds more on the clock. A test slows the
    /// clock while it waits for the controller's answer to a step, so that the step's grace cannot run out on a
    /// slow machine meanwhile. At most a minute of real time.
    static func rounds(
        _ clock: SteppedClock, milliseconds: Int64, until done: () -> Bool = { false }, step: () -> Int64 = { 20 },
        _ round: () throws -> Void
    ) rethrows {
        let deadline = Date().addingTimeInterval(60)
        var moved: Int64 = 0
        while moved < milliseconds && !done() && Date() < deadline {
            try round()
            let step = step()
            clock.advance(milliseconds: step)
            moved += step
        }
    }

    /// Polls `capture` in such rounds, each waiting up to `wait` real milliseconds for the fake devices.
    static func poll(
        _ capture: HCICapture, _ clock: SteppedClock, milliseconds: Int64, until done: () -> Bool = { false },
        wait: Int32 = 2, step: () -> Int64 = { 20 }
    ) throws {
        try rounds(clock, milliseconds: milliseconds, until: done, step: step) {
            try capture.poll(timeoutMilliseconds: wait) { _ in }
        }
    }

    @Test func aSilentRadioClimbsEveryStepPastFailuresThenRests() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let rfkill = directory.file("rfkill")
        _ = FileManager.default.createFile(atPath: rfkill, contents: nil)
        let controller = FakeController(extended: false)
        let management = FakeManagement()
        let events = Events()
        let clock = SteppedClock()
        let capture = try Self.capture(controller, management, rfkill: rfkill, events: events, clock: clock)
        let started = controller.opcodes.count
        try Self.poll(capture, clock, milliseconds: 5_000) { events.names.contains("gave up") }

        #expect(events.names == ["stalled", "take 0", "take 1", "take 2", "failed 2", "take 3", "failed 3", "gave up"])
        // Re-enable: disable, features, disable, parameters, enable. Power-cycle: the same after mgmt off/on.
        let afterStart = Array(controller.opcodes[started...])
        #expect(afterStart == [0x200C, 0x2003, 0x200C, 0x200B, 0x200C, 0x200C, 0x2003, 0x200C, 0x200B, 0x200C])
        #expect(management.commands == [MgmtPacket.setPowered(false, index: 7), MgmtPacket.setPowered(true, index: 7)])
        #expect(management.commands.first == [0x05, 0x00, 0x07, 0x00, 0x01, 0x00, 0x00])
        // rfkill: idx 0, type 2 (Bluetooth), op 3 (change all), soft 0, hard 0.
        #expect(FileManager.default.contents(atPath: rfkill).map(Array.init) == [0, 0, 0, 0, 2, 3, 0, 0])
        // (No Bluetooth in this kernel: the ioctl's socket cannot even be opened. In the VM test it works.)
        guard case .stepFailed(.resetDevice, let error) = events.reports[4].event else {
            Issue.record("no failure")
            return
        }
        #expect(error.description.contains("hci7"))

        // Resting: no command for the whole backoff (2 s), and the next ladder once it is over.
        let resting = controller.opcodes.count
        try Self.poll(capture, clock, milliseconds: 1_960)
        #expect(controller.opcodes.count == resting)
        #expect(events.names.count == 8)
        try Self.poll(capture, clock, milliseconds: 400) { controller.opcodes.count > resting }
        #expect(controller.opcodes.count > resting, "a second ladder after the rest")
        #expect(events.names.count > 8)
    }

    @Test func aReportAfterTheRescanEndsTheLadderThere() throws {
        let controller = FakeController(extended: true, reportOnScanEnable: PcapWriterTests.iBeaconReport(minor: 3))
        let management = FakeManagement()
        let events = Events()
        let clock = SteppedClock()
        let capture = try Self.capture(controller, management, rfkill: "/nonexistent", events: events, clock: clock)
        // The enable edge at start produces one report; then silence, a stall, a rescan, another report. Once the
        // rescan is taken the clock moves a millisecond a round: its 150 ms of grace are 150 real polls of 20 ms.
        try Self.poll(
            capture, clock, milliseconds: 5_000, until: { events.names.contains("recovered 0") }, wait: 20,
            step: { events.names.contains("take 0") ? 1 : 20 })
        #expect(events.names == ["stalled", "take 0", "recovered 0"])
        #expect(management.commands.isEmpty)
    }

    @Test func aRefusedPowerCycleNamesTheCapability() throws {
        let controller = FakeController(extended: false)
        let management = FakeManagement(status: 0x14)
        let events = Events()
        let clock = SteppedClock()
        let capture = try Self.capture(controller, management, rfkill: "/nonexistent", events: events, clock: clock)
        try Self.poll(capture, clock, milliseconds: 5_000) { events.names.contains("failed 1") }
        let failure = events.reports.compactMap { report -> HCIError? in
            if case .stepFailed(.powerCycle, let error) = report.event { error } else { nil }
        }.first
        #expect(failure?.code == .permission)
        #expect(failure?.description.contains("CAP_NET_ADMIN") == true)
        // Only the "off" was tried: a refused off is not followed by an on.
        #expect(management.commands.count == 1)
    }

    /// With a station beacon, other adverts do not count as liveness: only what the owner passes to `heard`.
    @Test func withAStationBeaconOnlyItKeepsTheWatchdogQuiet() throws {
        let controller = FakeController(extended: false)
        let events = Events()
        let clock = SteppedClock()
        var settings = Self.settings(clock)
        settings.livenessFromAnyAdvert = false
        let capture = HCICapture(
            sockets: [controller.socket], settings: settings, openManagement: { FakeManagement().open() },
            rfkillPath: "/nonexistent"
        ) { events.reports.append($0) }
        try capture.start()
        // Other adverts every round: still a stall, since the station is silent.
        try Self.rounds(clock, milliseconds: 5_000, until: { events.names.contains("take 0") }) {
            controller.send(PcapWriterTests.iBeaconReport(minor: 9))
            try capture.poll(timeoutMilliseconds: 2) { _ in }
        }
        #expect(events.names.prefix(2) == ["stalled", "take 0"])
        // The station heard (the owner calls `heard`): the ladder ends at the rescan.
        try Self.rounds(clock, milliseconds: 100, until: { events.names.contains("recovered 0") }, step: { 1 }) {
            controller.send(PcapWriterTests.iBeaconReport(minor: 1))
            try capture.poll(timeoutMilliseconds: 20) { record in capture.heard(adapter: record.adapter) }
        }
        #expect(events.names == ["stalled", "take 0", "recovered 0"])
    }

    @Test func anAdapterThatGoesAwayIsReportedAndNotPolledAgain() throws {
        let controller = FakeController(extended: false)
        let events = Events()
        let clock = SteppedClock()
        let capture = HCICapture(
            sockets: [controller.socket],
            settings: {
                var settings = CaptureSettings(intervalMilliseconds: 100, windowMilliseconds: 100)
                settings.clock = clock.capture
                return settings
            }(),
            openManagement: { () throws(HCIError) -> MgmtSocket in throw HCIError(.io, "none") },
            rfkillPath: "/nonexistent"
        ) { events.reports.append($0) }
        try capture.start()
        controller.hangUp()
        try Self.poll(capture, clock, milliseconds: 2_000) { events.names.contains("gone") }
        #expect(events.names.first == "gone")
        #expect(capture.adapters.map { $0.present } == [false])
        // Reopening "hci7" fails here (no Bluetooth in this kernel), every 2 s of the clock: it stays away, quietly.
        try Self.poll(capture, clock, milliseconds: 5_000)
        #expect(events.names == ["gone"])
    }
}
