/// The kernel's Bluetooth management protocol (BlueZ doc/mgmt-api.txt), as far as the recovery ladder
/// uses it: Set Powered, and the Command Complete / Command Status events that answer it. Pure bytes; the
/// control-channel socket lives in BeaconCapture.
public enum MgmtPacket {
    public static let setPowered: UInt16 = 0x0005
    static let commandComplete: UInt16 = 0x0001
    static let commandStatus: UInt16 = 0x0002

    /// A command: opcode, controller index, parameter length (all little-endian), parameters.
    public static func command(_ opcode: UInt16, index: UInt16, _ parameters: [UInt8] = []) -> [UInt8] {
        HCICommand.le16(opcode) + HCICommand.le16(index) + HCICommand.le16(UInt16(parameters.count)) + parameters
    }

    public static func setPowered(_ on: Bool, index: UInt16) -> [UInt8] {
        command(setPowered, index: index, [on ? 1 : 0])
    }

    /// The answer to a command: which command, for which controller, and its mgmt status (0 success).
    public struct Reply: Equatable, Sendable {
        public var opcode: UInt16
        public var index: UInt16
        public var status: UInt8

        /// Parses a Command Complete or Command Status event; nil for any other event or a short packet.
        public init?(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count >= 9 else { return nil }
            let event = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
            guard event == MgmtPacket.commandComplete || event == MgmtPacket.commandStatus else { return nil }
            let length = Int(UInt16(bytes[4]) | UInt16(bytes[5]) << 8)
            guard length >= 3, bytes.count >= 6 + length else { return nil }
            index = UInt16(bytes[2]) | UInt16(bytes[3]) << 8
            opcode = UInt16(bytes[6]) | UInt16(bytes[7]) << 8
            status = bytes[8]
        }
    }

    /// mgmt status codes a person might meet here, in words.
    public static func describe(status: UInt8) -> String {
        switch status {
        case 0x00: "success"
        case 0x0A: "busy"
        case 0x0D: "invalid parameters"
        case 0x0F: "not powered"
        case 0x11: "invalid index (no such adapter)"
        case 0x12: "rfkilled"
        case 0x14: "permission denied"
        default: "mgmt status 0x\(String(status, radix: 16))"
        }
    }
}
