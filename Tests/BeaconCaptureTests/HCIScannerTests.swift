import BeaconCapture
import BeaconWire
import Testing

/// The scan command sequence, byte for byte, against a fake controller speaking H4 over a socketpair.
@Suite(.timeLimit(.minutes(20))) struct HCIScannerTests {
    @Test func aLegacyControllerGetsTheLegacyCommands() throws {
        let controller = FakeController(extended: false)
        let scanner = HCIScanner(socket: controller.socket)
        #expect(try scanner.start(intervalMilliseconds: 100, windowMilliseconds: 50) == .legacy)
        #expect(controller.opcodes == [0x2003, 0x200C, 0x200B, 0x200C])
        // Disable (enable 0, filter 0); passive, 160 × 0.625 ms, 80 × 0.625 ms, public, accept all; enable, no duplicate filter.
        #expect(controller.commands[1] == [0x01, 0x0C, 0x20, 0x02, 0x00, 0x00])
        #expect(controller.commands[2] == [0x01, 0x0B, 0x20, 0x07, 0x00, 0xA0, 0x00, 0x50, 0x00, 0x00, 0x00])
        #expect(controller.commands[3] == [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00])
        #expect(scanner.stop() == nil)
        #expect(controller.commands.last == [0x01, 0x0C, 0x20, 0x02, 0x00, 0x00])
        #expect(controller.opcodes.count == 5)
        // Stopping twice sends nothing more.
        #expect(scanner.stop() == nil)
        #expect(controller.opcodes.count == 5)
    }

    @Test func anExtendedControllerGetsTheExtendedCommandsWhateverItsVersion() throws {
        let controller = FakeController(extended: true)
        let scanner = HCIScanner(socket: controller.socket)
        #expect(try scanner.start(intervalMilliseconds: 100, windowMilliseconds: 100) == .extended)
        #expect(controller.opcodes == [0x2003, 0x2042, 0x2041, 0x2042])
        #expect(controller.commands[1] == [0x01, 0x42, 0x20, 0x06, 0, 0, 0, 0, 0, 0])
        // Public address, accept all, LE 1M only: passive, interval = window = 160 slots.
        #expect(controller.commands[2] == [0x01, 0x41, 0x20, 0x08, 0x00, 0x00, 0x01, 0x00, 0xA0, 0x00, 0xA0, 0x00])
        #expect(controller.commands[3] == [0x01, 0x42, 0x20, 0x06, 0x01, 0x00, 0, 0, 0, 0])
        scanner.stop()
        #expect(controller.commands.last == [0x01, 0x42, 0x20, 0x06, 0, 0, 0, 0, 0, 0])
    }

    @Test func commandDisallowedOnTheFirstDisableIsFine() throws {
        // 0x0C, Command Disallowed: the controller was not scanning. Not an error.
        let controller = FakeController(extended: false, firstStatuses: [0x200C: 0x0C])
        let scanner = HCIScanner(socket: controller.socket)
        #expect(try scanner.start(intervalMilliseconds: 100, windowMilliseconds: 100) == .legacy)
        #expect(controller.opcodes == [0x2003, 0x200C, 0x200B, 0x200C])
    }

    @Test func aRefusedEnableIsAnErrorNamingIt() {
        let controller = FakeController(extended: false, statuses: [0x200C: 0x0C])
        let error = Self.startFailure(HCIScanner(socket: controller.socket))
        #expect(error?.code == .controller)
        #expect(error.map { $0.description.contains("LE Set Scan Enable") && $0.description.contains("0xc") } == true)
    }

    @Test func aRefusedParameterSetIsAnErrorWithItsStatus() {
        let controller = FakeController(extended: false, statuses: [0x200B: 0x12])
        let scanner = HCIScanner(socket: controller.socket)
        let error = Self.startFailure(scanner)
        #expect(error?.code == .controller)
        #expect(
            error.map { $0.description.contains("LE Set Scan Parameters") && $0.description.contains("0x12") } == true)
        #expect(scanner.mode == nil)
        #expect(scanner.stop() == nil, "nothing was enabled, so nothing is disabled")
    }

    @Test func aSilentControllerTimesOut() {
        let controller = FakeController(extended: false, silent: [0x2003])
        #expect(Self.startFailure(HCIScanner(socket: controller.socket))?.code == .timeout)
    }

    /// The error `start` throws; an issue, and nil, when it succeeds against a controller that should fail it.
    static func startFailure(_ scanner: HCIScanner) -> HCIError? {
        do throws(HCIError) {
            try scanner.start(intervalMilliseconds: 100, windowMilliseconds: 100)
        } catch {
            return error
        }
        Issue.record("start succeeded against a controller that should have failed it")
        return nil
    }

    @Test func advertsInterleavedWithAnswersAreSkippedWhileWaiting() throws {
        let controller = FakeController(extended: false)
        // A report arriving before the answer must not be taken for it.
        controller.send([0x04, 0x3E, 0x03, 0x02, 0x00, 0x00])
        let scanner = HCIScanner(socket: controller.socket)
        #expect(try scanner.start(intervalMilliseconds: 10, windowMilliseconds: 10) == .legacy)
    }

    @Test func slotsAreClampedToTheSpec() {
        #expect(HCICommand.slots(milliseconds: 0) == 4)
        #expect(HCICommand.slots(milliseconds: 2.5) == 4)
        #expect(HCICommand.slots(milliseconds: 100) == 160)
        #expect(HCICommand.slots(milliseconds: 10_240) == 0x4000)
        #expect(HCICommand.slots(milliseconds: 99_999) == 0x4000)
    }
}
