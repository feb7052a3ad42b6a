import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The network a client's address is counted under by the limits on what anonymous clients do (`NetworkLimit`): one
/// subscriber holds an IPv6 /64 whole, so its 2^64 addresses are one network, as an IPv4 address is one.
enum ClientNetwork {
    /// An IPv4 address itself (an IPv4-mapped IPv6 address is one), an IPv6 address's /64, and anything unreadable
    /// as one key of its own.
    static func of(_ address: String) -> String {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return address }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return "unknown" }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map {
            String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
        }
        return groups.joined(separator: ":") + "::/64"
    }
}
