import BeaconWire
import Testing

/// `AdvertisingData.summarize` reads raw memory for speed; here it must agree with a plain, obviously bounded
/// reading of the same rules (arrays and indices, no pointers) on many random and near-miss adverts.
@Suite(.timeLimit(.minutes(20))) struct AdvertisingDataReferenceTests {
    /// The AD rules as the Core spec and Apple's iBeacon layout state them, written for clarity.
    static func reference(_ data: [UInt8]) -> (kind: AdvertKind, minor: UInt16?, bad: Bool, malformed: Bool) {
        var kinds: Set<AdvertKind> = []
        var minor: UInt16?
        var bad = false
        var malformed = false
        var at = 0
        while at < data.count {
            let length = Int(data[at])
            if length == 0 { break }
            if at + 1 + length > data.count {
                bad = true
                break
            }
            let type = data[at + 1]
            let body = Array(data[(at + 2)..<(at + 1 + length)])
            at += 1 + length
            func word(_ index: Int) -> UInt16 { UInt16(body[index]) | UInt16(body[index + 1]) << 8 }
            if type == 0xFF, body.count >= 2 {
                let apple = word(0) == 0x004C
                let prefixed = body.count >= 4 && body[2] == 0x02 && body[3] == 0x15
                if apple && prefixed && body.count == 25 {
                    kinds.insert(.iBeacon)
                    if minor == nil { minor = UInt16(body[22]) << 8 | UInt16(body[23]) }
                } else if apple {
                    if prefixed { malformed = true }
                    kinds.insert(.appleOther)
                } else if body.count >= 4 && body[2] == 0xBE && body[3] == 0xAC {
                    kinds.insert(.altBeacon)
                }
            } else if type == 0x16, body.count >= 2, word(0) == 0xFEAA {
                kinds.insert(.eddystone)
            } else if type == 0x02 || type == 0x03 {
                if stride(from: 0, to: body.count - 1, by: 2).contains(where: { word($0) == 0xFEAA }) {
                    kinds.insert(.eddystone)
                }
            }
        }
        let order: [AdvertKind] = [.iBeacon, .altBeacon, .eddystone, .appleOther]
        return (order.first(where: kinds.contains) ?? .other, minor, bad, malformed)
    }

    /// Adverts built from the structures that matter, then mutated: lengths off by one, bytes flipped, cut short.
    static func adverts(count: Int) -> [[UInt8]] {
        var generator = SystemRandomNumberGenerator()
        let pieces: [[UInt8]] = [
            [0x02, 0x01, 0x06], AdvertisingDataTests.iBeacon, [0x03, 0x03, 0xAA, 0xFE],
            [0x05, 0x16, 0xAA, 0xFE, 0x10, 0x00],
            [0x05, 0x03, 0x0F, 0x18, 0xAA, 0xFE],
            [0x1B, 0xFF, 0x18, 0x01, 0xBE, 0xAC] + [UInt8](repeating: 7, count: 22),
            [0x07, 0xFF, 0x4C, 0x00, 0x10, 0x02, 0x0B, 0x00], [0x03, 0xFF, 0x4C, 0x00], [0x04, 0x09, 0x41, 0x42, 0x43],
            [0x00],
        ]
        return (0..<count).map { _ in
            var advert: [UInt8] = []
            for _ in 0..<Int.random(in: 0...3, using: &generator) { advert += pieces.randomElement(using: &generator)! }
            for _ in 0..<Int.random(in: 0...2, using: &generator) where !advert.isEmpty {
                let index = Int.random(in: 0..<advert.count, using: &generator)
                switch Int.random(in: 0...2, using: &generator) {
                case 0: advert[index] &+= 1
                case 1: advert[index] &-= 1
                default: advert[index] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            if Bool.random(using: &generator), !advert.isEmpty {
                advert.removeLast(Int.random(in: 0...advert.count, using: &generator))
            }
            return advert
        }
    }

    @Test func summarizeAgreesWithThePlainReading() {
        for advert in Self.adverts(count: 50_000) + [[UInt8]](repeating: [], count: 1) {
            let fast = advert.withUnsafeBytes { AdvertisingData.summarize($0) }
            let expected = Self.reference(advert)
            #expect(fast.kind == expected.kind, "\(advert)")
            #expect(fast.beacon?.minor == expected.minor, "\(advert)")
            #expect(fast.hadBadStructure == expected.bad, "\(advert)")
            #expect(fast.hadMalformedIBeacon == expected.malformed, "\(advert)")
            if fast.kind != expected.kind || fast.beacon?.minor != expected.minor { return }
        }
    }

    /// Flags then one manufacturer-specific structure to the end of the data takes a shortcut past the walk.
    /// For an iBeacon, other Apple data, an AltBeacon, a bare company ID and a malformed iBeacon: every value of
    /// each of the first nine bytes, and the advert a byte shorter or longer, must come out as the walk says.
    @Test func theFlagsThenManufacturerDataShortcutAgreesWithThePlainReading() {
        let canonical = AdvertisingDataTests.flags + AdvertisingDataTests.iBeacon
        #expect(canonical.count == 30)
        let structures: [[UInt8]] = [
            AdvertisingDataTests.iBeacon, [0x07, 0xFF, 0x4C, 0x00, 0x10, 0x02, 0x0B, 0x00],
            [0x1B, 0xFF, 0x18, 0x01, 0xBE, 0xAC] + [UInt8](repeating: 7, count: 22), [0x03, 0xFF, 0x4C, 0x00],
            [0x19, 0xFF, 0x4C, 0x00, 0x02, 0x15] + [UInt8](repeating: 1, count: 20),
        ]
        var shortcuts = [AdvertKind: Int]()
        for structure in structures {
            let advert = AdvertisingDataTests.flags + structure
            var variants = [advert, Array(advert.dropLast()), advert + [0x00], advert + [0x02]]
            for index in 0..<min(9, advert.count) {
                for value in UInt8.min...UInt8.max where value != advert[index] {
                    var variant = advert
                    variant[index] = value
                    variants.append(variant)
                }
            }
            for advert in variants {
                let fast = advert.withUnsafeBytes { AdvertisingData.summarize($0) }
                let expected = Self.reference(advert)
                shortcuts[expected.kind, default: 0] += 1
                #expect(fast.kind == expected.kind, "\(advert)")
                #expect(fast.beacon?.minor == expected.minor, "\(advert)")
                #expect(fast.hadBadStructure == expected.bad, "\(advert)")
                #expect(fast.hadMalformedIBeacon == expected.malformed, "\(advert)")
            }
        }
        // Data longer than a length byte can reach: 286 bytes, whose 282 past byte 3 would read as 26 in a byte.
        // It must be walked, to find the malformed iBeacon prefix at its end.
        let long =
            AdvertisingDataTests.flags + AdvertisingDataTests.iBeacon + [0xFF, 0xFF, 0x4C, 0x00, 0x02, 0x15]
            + [UInt8](repeating: 1, count: 250)
        #expect(long.count == 286)
        let summary = long.withUnsafeBytes { AdvertisingData.summarize($0) }
        #expect(summary.kind == .iBeacon && summary.hadMalformedIBeacon && Self.reference(long).malformed)
        // Each kind the shortcut can give was among the variants (the flags' value, byte 2, is free).
        for kind in [AdvertKind.iBeacon, .appleOther, .altBeacon, .other] {
            #expect(shortcuts[kind, default: 0] > 256, "\(kind)")
        }
        let beacon = canonical.withUnsafeBytes { AdvertisingData.summarize($0) }.beacon
        #expect(beacon?.uuid.description == "21EECF71-D5C7-4A00-9B90-27C94B5146EA")
        #expect(beacon?.major == 1)
        #expect(beacon?.minor == 0xBEEF)
        #expect(beacon?.measuredPower == -59)
    }
}
