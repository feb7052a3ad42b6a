import BeaconWire
import Testing

/// AD structure rules, on byte arrays annotated as in BlueZ's unit/test-eir.c.
@Suite(.timeLimit(.minutes(20))) struct AdvertisingDataTests {
    static let iBeacon: [UInt8] = [
        0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,  // length 26, manufacturer data, Apple, iBeacon type and length
        0x21, 0xEE, 0xCF, 0x71, 0xD5, 0xC7, 0x4A, 0x00, 0x9B, 0x90, 0x27, 0xC9, 0x4B, 0x51, 0x46, 0xEA,  // UUID
        0x00, 0x01, 0xBE, 0xEF, 0xC5,  // major 1, minor 0xBEEF, measured power -59
    ]
    static let flags: [UInt8] = [0x02, 0x01, 0x06]

    func summarize(_ bytes: [UInt8]) -> AdvertisingDataSummary {
        bytes.withUnsafeBytes { AdvertisingData.summarize($0) }
    }

    @Test func iBeaconAfterFlagsIsDecoded() throws {
        let summary = summarize(Self.flags + Self.iBeacon)
        let beacon = try #require(summary.beacon)
        #expect(summary.kind == .iBeacon)
        #expect(beacon.major == 1 && beacon.minor == 0xBEEF && beacon.measuredPower == -59)
        #expect(beacon.uuid.description == "21EECF71-D5C7-4A00-9B90-27C94B5146EA")
    }

    @Test func zeroLengthStructureEndsTheData() {
        let summary = summarize(Self.flags + [0x00] + Self.iBeacon)
        #expect(summary.beacon == nil)
        #expect(!summary.hadBadStructure)
    }

    @Test func structureRunningPastTheDataIsDropped() {
        let cut = summarize(Self.flags + Self.iBeacon.dropLast())
        #expect(cut.beacon == nil && cut.hadBadStructure)
        let after = summarize(Self.iBeacon + [0x05, 0x09, 0x41])
        #expect(after.beacon != nil && after.hadBadStructure)
    }

    @Test func iBeaconPrefixWithWrongLengthIsAppleOther() {
        var long = Self.iBeacon + [0x00]
        long[0] = 0x1B
        let summary = summarize(long)
        #expect(summary.kind == .appleOther && summary.beacon == nil && summary.hadMalformedIBeacon)
    }

    @Test func otherBeaconFamiliesAreClassified() {
        #expect(summarize([0x1B, 0xFF, 0x18, 0x01, 0xBE, 0xAC] + [UInt8](repeating: 0, count: 22)).kind == .altBeacon)
        #expect(summarize([0x03, 0x03, 0xAA, 0xFE]).kind == .eddystone)
        #expect(summarize([0x05, 0xFF, 0x06, 0x00, 0x01, 0x09]).kind == .other)
        #expect(summarize([]).kind == .other)
    }

    /// An advert carrying several families is the most specific of them, whatever their order: iBeacon, then
    /// AltBeacon, Eddystone, other Apple, other.
    @Test func theMostSpecificKindWins() {
        let appleOther: [UInt8] = [0x05, 0xFF, 0x4C, 0x00, 0x10, 0x05]
        let eddystone: [UInt8] = [0x03, 0x03, 0xAA, 0xFE]
        let altBeacon: [UInt8] = [0x1B, 0xFF, 0x18, 0x01, 0xBE, 0xAC] + [UInt8](repeating: 0, count: 22)
        let other: [UInt8] = [0x05, 0xFF, 0x06, 0x00, 0x01, 0x09]
        let ranked: [([UInt8], AdvertKind)] = [
            (Self.iBeacon, .iBeacon), (altBeacon, .altBeacon), (eddystone, .eddystone), (appleOther, .appleOther),
            (other, .other),
        ]
        for (i, (first, firstKind)) in ranked.enumerated() {
            for (second, secondKind) in ranked[i...] {
                let expected = firstKind  // `ranked` runs from most to least specific
                #expect(summarize(first + second).kind == expected, "\(firstKind) + \(secondKind)")
                #expect(summarize(second + first).kind == expected, "\(secondKind) + \(firstKind)")
            }
        }
    }
}
