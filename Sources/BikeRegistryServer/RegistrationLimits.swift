import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How often bikes may be registered: per network (an IPv4 address, or an IPv6 /64, which one subscriber holds
/// whole), and by everyone together, so that many addresses of one machine (127.0.0.2, .3, … on loopback; 2^64
/// in one IPv6 /64) do not each get a full budget. Each refusal says how long to wait (`Retry-After`).
final class RegistrationLimits: Sendable {
    private let perNetwork: RateLimiter<String>
    private let everyone: RateLimiter<Int>

    init(perNetworkPerMinute: Int, totalPerMinute: Int) {
        perNetwork = RateLimiter(perMinute: perNetworkPerMinute)
        everyone = RateLimiter(perMinute: totalPerMinute)
    }

    /// nil when a registration from `address` may go ahead; otherwise the whole seconds to wait. A network over
    /// its own limit is refused before it counts against everyone's.
    func retryAfter(_ address: String) -> Int? {
        if let wait = perNetwork.retryAfter(Self.network(of: address)) { return wait }
        return everyone.retryAfter(0)
    }

    /// The network an address is counted under: an IPv4 address itself (an IPv4-mapped IPv6 address is one), an
    /// IPv6 address's /64, and anything unreadable as one key of its own.
    static func network(of address: String) -> String {
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
