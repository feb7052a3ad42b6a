/// A rotating beacon's identities in a bike list element: `"beaconIdentities":[[major, minor], …]`
/// (docs/registry-api.yaml), read as `major << 16 | minor` each. A bike has 17 of them in a window of ±2 hours at
/// 15 minutes, so a large list holds some 170,000: plain digits are read without the general number path.
extension ElementParser {
    /// `beaconIdentities`' value: the pairs when it is a list of [major, minor] pairs 0…65535, otherwise any JSON
    /// value checked and passed over (the entry is then rejected), or nil when it is not JSON.
    mutating func identities() -> Value? {
        let start = index
        if let list = identityPairs() { return .identities(list) }
        index = start
        return value(decodingStrings: false)
    }

    private mutating func identityPairs() -> [UInt32]? {
        guard peek(UInt8(ascii: "[")) else { return nil }
        index += 1
        skipSpace()
        var list: [UInt32] = []
        if peek(UInt8(ascii: "]")) {
            index += 1
            return list
        }
        while true {
            skipSpace()
            guard peek(UInt8(ascii: "[")) else { return nil }
            index += 1
            guard let major = pairMember(then: UInt8(ascii: ",")), let minor = pairMember(then: UInt8(ascii: "]"))
            else { return nil }
            list.append(UInt32(major) << 16 | UInt32(minor))
            skipSpace()
            if peek(UInt8(ascii: ",")) {
                index += 1
                continue
            }
            guard peek(UInt8(ascii: "]")) else { return nil }
            index += 1
            return list
        }
    }

    /// One number of a pair, 0…65535, and the byte after it (white space around either allowed). Plain digits are
    /// read here, as most are; anything else (a fraction, an exponent) through `number()`'s rules.
    private mutating func pairMember(then terminator: UInt8) -> UInt16? {
        skipSpace()
        let start = index
        var value = 0
        while index < bytes.count, (0x30...0x39).contains(bytes[index]), value <= 65_535 {
            value = value * 10 + Int(bytes[index] - 0x30)
            index += 1
        }
        let plain =
            index > start && value <= 65_535 && !(bytes[start] == 0x30 && index - start > 1)
            && !(peek(UInt8(ascii: ".")) || peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")))
        var member: UInt16?
        if plain {
            member = UInt16(value)
        } else {
            index = start
            member = Self.unsigned16(number())
        }
        skipSpace()
        guard let member, peek(terminator) else { return nil }
        index += 1
        return member
    }
}
