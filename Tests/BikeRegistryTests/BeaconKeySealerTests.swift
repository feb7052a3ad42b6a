import BikeRegistryCore
import BikeRegistryStore
import Testing

/// Rotating beacons' keys as the database holds them: sealed with AES-256-GCM under the key file's key, bound to the
/// beacon's name.
@Suite(.timeLimit(.minutes(20))) struct BeaconKeySealerTests {
    /// 00 01 02 … 1f, as a key file writes it (a newline after it, as `openssl rand -hex 32 > FILE` leaves).
    static let keyFile = (0..<32).map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() + "\n"
    static let beaconKey: [UInt8] = [
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
    ]

    /// Sealed by an independent implementation (Python's `cryptography`, AESGCM, nonce 00 01 … 0b, additional
    /// data "beacon_0001"): the registry opens what the format says it holds.
    @Test func opensAKeySealedByAnotherImplementation() throws {
        let sealer = try BeaconKeySealer(keyFileText: Self.keyFile)
        #expect(sealer.keyID == "630dcd29")
        let sealed = "v1:630dcd29:AAECAwQFBgcICQoLRxP0KIGwpGwF2D0wfTSWkgHIrHmAcNUlgYUZIAveZ64="
        #expect(try sealer.open(sealed, beacon: "beacon_0001") == Self.beaconKey)
    }

    @Test func sealsWithAFreshNonceAndOpensOnlyForTheSameBeacon() throws {
        let sealer = try BeaconKeySealer(keyFileText: Self.keyFile)
        let first = sealer.seal(Self.beaconKey, beacon: "beacon_0001")
        let second = sealer.seal(Self.beaconKey, beacon: "beacon_0001")
        #expect(first != second, "each seal has its own nonce")
        #expect(first.hasPrefix("v1:630dcd29:"))
        #expect(!first.contains("00112233"), "the key is not in the sealed text")
        #expect(try sealer.open(first, beacon: "beacon_0001") == Self.beaconKey)
        #expect(throws: BeaconKeySealer.Failure.damaged) { try sealer.open(first, beacon: "beacon_0002") }
    }

    @Test func anotherKeyFileOrAnAlteredSealIsNamed() throws {
        let sealer = try BeaconKeySealer(keyFileText: Self.keyFile)
        let other = try BeaconKeySealer(keyFileText: String(repeating: "ab", count: 32))
        let sealed = sealer.seal(Self.beaconKey, beacon: "b")
        #expect(throws: BeaconKeySealer.Failure.otherKey("630dcd29")) { try other.open(sealed, beacon: "b") }
        var bytes = Array(sealed.utf8)
        bytes[bytes.count - 3] = bytes[bytes.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: BeaconKeySealer.Failure.damaged) {
            try sealer.open(String(decoding: bytes, as: UTF8.self), beacon: "b")
        }
        #expect(throws: BeaconKeySealer.Failure.damaged) { try sealer.open("v2:630dcd29:AAAA", beacon: "b") }
        #expect(throws: BeaconKeySealer.Failure.damaged) { try sealer.open("v1:630dcd29:not base64!", beacon: "b") }
    }

    @Test(arguments: [
        "", "00", String(repeating: "0", count: 63), String(repeating: "g", count: 64),
        String(repeating: "0", count: 66),
    ])
    func aKeyFileThatIsNot256BitsOfHexIsRefused(text: String) {
        #expect(throws: BeaconKeySealer.Failure.keyFile) { try BeaconKeySealer(keyFileText: text) }
    }
}
