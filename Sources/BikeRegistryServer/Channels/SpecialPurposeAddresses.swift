/// Which addresses an owner's webhook or ntfy target may resolve to: the globally reachable ones. Drawn from IANA's
/// IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and the RFCs that add to them), where each range says
/// whether it is globally reachable; every range marked not reachable (or not applicable) is refused, and so is
/// multicast. An IPv6 address outside global unicast (2000::/3) is refused as unassigned, except the forms that
/// carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64's well-known prefix, 6to4), which are judged by the
/// address they carry: `64:ff9b::7f00:1` is loopback, as 127.0.0.1 is. Pure: no resolver, no sockets.
///
/// Ranges IANA marks globally reachable inside a refused block (192.0.0.9 and .10, the anycast and ORCHIDv2
/// entries of 2001::/23) are refused with the block: they are protocol anycast addresses, and no owner's endpoint
/// lives there.
enum SpecialPurposeAddresses {
    /// Why `bytes` (4 for IPv4, 16 for IPv6) may not be called, naming the range; nil when it is globally reachable.
    static func refusal(_ bytes: [UInt8]) -> String? {
        switch bytes.count {
        case 4: return refusal(v4: bytes.reduce(0) { $0 << 8 | UInt32($1) })
        case 16: return refusal(v6: bytes.reduce(0) { $0 << 8 | UInt128($1) })
        default: return "not an IP address"
        }
    }

    static func refusal(v4 address: UInt32) -> String? {
        // The most specific range that holds it names it (255.255.255.255 is inside 240.0.0.0/4).
        v4Refused.filter { range in address >> (32 - range.bits) == range.base >> (32 - range.bits) }
            .max { $0.bits < $1.bits }.map { "\($0.name) (\(v4Text($0.base))/\($0.bits))" }
    }

    static func refusal(v6 address: UInt128) -> String? {
        func within(_ base: UInt128, _ bits: Int) -> Bool { address >> (128 - bits) == base >> (128 - bits) }
        for form in v6CarryingIPv4 where within(form.base, form.bits) {
            let embedded = UInt32(truncatingIfNeeded: address >> UInt128(form.shift))
            // `::` and `::1` are inside the IPv4-compatible form; they are named as what they are.
            if form.bits == 96, form.base == 0, address <= 1 { break }
            return refusal(v4: embedded).map { "\($0), carried in \(form.name)" }
        }
        if let range = v6Refused.filter({ within($0.base, $0.bits) }).max(by: { $0.bits < $1.bits }) {
            return "\(range.name) (\(range.text))"
        }
        return within(0x2000 << 112, 3) ? nil : "not global unicast (outside 2000::/3)"
    }

    struct V4Range {
        var base: UInt32
        var bits: Int
        var name: String
    }

    /// IANA's IPv4 Special-Purpose Address Registry, each entry not globally reachable, and multicast.
    static let v4Refused: [V4Range] = [
        V4Range(base: 0x0000_0000, bits: 8, name: "\"this network\""),
        V4Range(base: 0x0A00_0000, bits: 8, name: "private"),
        V4Range(base: 0x6440_0000, bits: 10, name: "shared address space"),
        V4Range(base: 0x7F00_0000, bits: 8, name: "loopback"),
        V4Range(base: 0xA9FE_0000, bits: 16, name: "link-local"),
        V4Range(base: 0xAC10_0000, bits: 12, name: "private"),
        V4Range(base: 0xC000_0000, bits: 24, name: "IETF protocol assignments"),
        V4Range(base: 0xC000_0200, bits: 24, name: "documentation (TEST-NET-1)"),
        V4Range(base: 0xC058_6300, bits: 24, name: "6to4 relay anycast (deprecated)"),
        V4Range(base: 0xC0A8_0000, bits: 16, name: "private"),
        V4Range(base: 0xC612_0000, bits: 15, name: "benchmarking"),
        V4Range(base: 0xC633_6400, bits: 24, name: "documentation (TEST-NET-2)"),
        V4Range(base: 0xCB00_7100, bits: 24, name: "documentation (TEST-NET-3)"),
        V4Range(base: 0xE000_0000, bits: 4, name: "multicast"),
        V4Range(base: 0xF000_0000, bits: 4, name: "reserved"),
        V4Range(base: 0xFFFF_FFFF, bits: 32, name: "limited broadcast"),
    ]

    struct V6Range {
        var base: UInt128
        var bits: Int
        var name: String
        var text: String
    }

    /// IANA's IPv6 Special-Purpose Address Registry, each entry not globally reachable, and multicast. The forms
    /// that carry an IPv4 address come first (`v6CarryingIPv4`).
    static let v6Refused: [V6Range] = [
        V6Range(base: 0, bits: 128, name: "unspecified", text: "::/128"),
        V6Range(base: 1, bits: 128, name: "loopback", text: "::1/128"),
        V6Range(
            base: 0x0064_ff9b_0001 << 80, bits: 48, name: "local-use IPv4/IPv6 translation", text: "64:ff9b:1::/48"),
        V6Range(base: 0x0100 << 112, bits: 64, name: "discard-only", text: "100::/64"),
        V6Range(base: 0x0100_0000_0000_0001 << 64, bits: 64, name: "dummy prefix", text: "100:0:0:1::/64"),
        V6Range(base: 0x2001 << 112, bits: 23, name: "IETF protocol assignments", text: "2001::/23"),
        V6Range(base: 0x2001_0db8 << 96, bits: 32, name: "documentation", text: "2001:db8::/32"),
        V6Range(base: 0x3fff << 112, bits: 20, name: "documentation", text: "3fff::/20"),
        V6Range(base: 0x5f00 << 112, bits: 16, name: "segment routing SIDs", text: "5f00::/16"),
        V6Range(base: 0xfc00 << 112, bits: 7, name: "unique-local", text: "fc00::/7"),
        V6Range(base: 0xfe80 << 112, bits: 10, name: "link-local", text: "fe80::/10"),
        V6Range(base: 0xff00 << 112, bits: 8, name: "multicast", text: "ff00::/8"),
    ]

    struct CarryingForm {
        var base: UInt128
        var bits: Int
        /// Where the IPv4 address sits: its lowest bit's position.
        var shift: Int
        var name: String
    }

    static let v6CarryingIPv4: [CarryingForm] = [
        CarryingForm(base: 0xffff << 32, bits: 96, shift: 0, name: "an IPv4-mapped address"),
        CarryingForm(base: 0, bits: 96, shift: 0, name: "an IPv4-compatible address"),
        CarryingForm(base: 0x0064_ff9b << 96, bits: 96, shift: 0, name: "a NAT64 address (64:ff9b::/96)"),
        CarryingForm(base: 0x2002 << 112, bits: 16, shift: 80, name: "a 6to4 address (2002::/16)"),
    ]

    static func v4Text(_ address: UInt32) -> String {
        (0..<4).map { String(address >> (24 - 8 * $0) & 0xff) }.joined(separator: ".")
    }
}
