/// The HCI commands beacond sends to scan, as H4 packets (Core spec Vol 4 Part E §7.8), and the answers it
/// reads back. Pure bytes: the socket that carries them lives in BeaconCapture.
public enum HCICommand {
    /// LE controller commands (OGF 0x08).
    public enum Opcode: UInt16, Sendable, CaseIterable {
        case leReadLocalSupportedFeatures = 0x2003
        case leSetScanParameters = 0x200B
        case leSetScanEnable = 0x200C
        case leSetExtendedScanParameters = 0x2041
        case leSetExtendedScanEnable = 0x2042
    }

    /// An H4 command packet: type 0x01, opcode (little-endian), parameter length, parameters.
    public static func packet(_ opcode: Opcode, _ parameters: [UInt8] = []) -> [UInt8] {
        [0x01, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), UInt8(parameters.count)] + parameters
    }

    /// Scan interval and window in the controller's 0.625 ms units, clamped to the spec's 0x0004…0x4000.
    public static func slots(milliseconds: Double) -> UInt16 {
        UInt16(max(4, min(0x4000, (milliseconds / 0.625).rounded())))
    }

    /// Passive scanning (no scan requests: a beacon's scan response tells beacond nothing), public own
    /// address, accept all advertisers.
    public static func setScanParameters(intervalMilliseconds: Double, windowMilliseconds: Double) -> [UInt8] {
        let interval = slots(milliseconds: intervalMilliseconds)
        let window = min(interval, slots(milliseconds: windowMilliseconds))
        return packet(.leSetScanParameters, [0x00] + le16(interval) + le16(window) + [0x00, 0x00])
    }

    /// Duplicate filtering off: a beacon heard again must be reported again, or RSSI and presence go stale.
    public static func setScanEnable(_ enable: Bool) -> [UInt8] {
        packet(.leSetScanEnable, [enable ? 1 : 0, 0x00])
    }

    /// The extended form on the LE 1M PHY, with the same choices as the legacy one.
    public static func setExtendedScanParameters(intervalMilliseconds: Double, windowMilliseconds: Double) -> [UInt8] {
        let interval = slots(milliseconds: intervalMilliseconds)
        let window = min(interval, slots(milliseconds: windowMilliseconds))
        return packet(.leSetExtendedScanParameters, [0x00, 0x00, 0x01, 0x00] + le16(interval) + le16(window))
    }

    /// Enable or disable, duplicates not filtered, scanning until disabled (duration and period 0).
    public static func setExtendedScanEnable(_ enable: Bool) -> [UInt8] {
        packet(.leSetExtendedScanEnable, [enable ? 1 : 0, 0x00, 0x00, 0x00, 0x00, 0x00])
    }

    /// Whether the LE features (the 8 bytes of LE Read Local Supported Features) include "LE Extended
    /// Advertising" (bit 12), which is what makes the extended scan commands available, whatever the
    /// controller's HCI version says.
    public static func supportsExtendedScanning(features: [UInt8]) -> Bool {
        features.count > 1 && features[1] & 0x10 != 0
    }

    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    /// What a controller said to a command: Command Complete (its return parameters, status first) or
    /// Command Status (a status alone).
    public struct Completion: Equatable, Sendable {
        public var opcode: UInt16
        public var status: UInt8
        /// Return parameters after the status byte (Command Complete only).
        public var parameters: [UInt8]

        /// Reads an H4 event packet (type byte included); nil when it is not a completion.
        public init?(h4 packet: UnsafeRawBufferPointer) {
            guard packet.count >= 3, packet[0] == 0x04 else { return nil }
            let length = Int(packet[2])
            guard packet.count >= 3 + length else { return nil }
            switch packet[1] {
            case 0x0E where length >= 4:  // Command Complete: ncmd, opcode, status, return parameters
                opcode = UInt16(packet[4]) | UInt16(packet[5]) << 8
                status = packet[6]
                parameters = Array(packet[7..<(3 + length)])
            case 0x0F where length >= 4:  // Command Status: status, ncmd, opcode
                status = packet[3]
                opcode = UInt16(packet[5]) | UInt16(packet[6]) << 8
                parameters = []
            default:
                return nil
            }
        }
    }
}
