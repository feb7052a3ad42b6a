public import BeaconWire

/// The identity of one sighting event, the same however often it is computed: a retry, a restart or a second
/// replay of the same capture produces the same id, which the registry uses to ignore repeats
/// (`Idempotency-Key`).
///
/// It is a 128-bit FNV-1a hash of the station, the beacon (UUID, major, minor), the visit's first-seen time
/// and the event within the visit (enter, the n-th update, exit), shown as an RFC 9562 version 8 UUID.
public struct SightingID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt128

    public init(rawValue: UInt128) { self.rawValue = rawValue }

    public init(station: String, beacon: BeaconIdentity, firstSeen: CaptureTime, kind: SightingKind, sequence: Int) {
        var hash = FNV1a128()
        hash.add(station.utf8)
        hash.add(0)  // field separator: "ab"+"c" and "a"+"bc" must differ
        hash.add(beacon.uuid.rawValue, bytes: 16)
        hash.add(UInt128(beacon.major), bytes: 2)
        hash.add(UInt128(beacon.minor), bytes: 2)
        hash.add(UInt128(UInt64(bitPattern: firstSeen.nanosecondsSinceEpoch)), bytes: 8)
        hash.add(kind.rawValue.utf8)
        hash.add(0)
        hash.add(UInt128(UInt64(sequence)), bytes: 8)
        // Version 8 (custom) in bits 48-51 of the UUID, variant 0b10 in bits 64-65, as RFC 9562 asks.
        var value = hash.value
        value = value & ~(UInt128(0xF) << 76) | UInt128(0x8) << 76
        value = value & ~(UInt128(0x3) << 62) | UInt128(0x2) << 62
        rawValue = value
    }

    /// Lower-case 8-4-4-4-12.
    public var description: String { BeaconUUID(rawValue: rawValue).description.lowercased() }
}

/// FNV-1a with the 128-bit parameters from the FNV reference (offset basis and prime).
struct FNV1a128 {
    private(set) var value: UInt128 = 0x6C62_272E_07BB_0142_62B8_2175_6295_C58D
    private static let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013B

    mutating func add(_ byte: UInt8) {
        value = (value ^ UInt128(byte)) &* Self.prime
    }

    mutating func add(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { add(byte) }
    }

    /// The low `bytes` bytes of `integer`, most significant first.
    mutating func add(_ integer: UInt128, bytes: Int) {
        for index in stride(from: bytes - 1, through: 0, by: -1) {
            add(UInt8(truncatingIfNeeded: integer >> UInt128(8 * index)))
        }
    }
}
