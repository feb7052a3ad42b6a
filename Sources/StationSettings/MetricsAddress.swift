import BeaconPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// Where `metrics-listen` has the daemon serve `/metrics`: an IP address to bind, never a name (a listener that
/// resolved a name could end up on an address nobody meant to open), and a port, 10042 by default.
/// `127.0.0.1:10042`, `[::1]:10042`, or `127.0.0.1` alone.
public struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
    /// The port a station's /metrics is on unless the configuration says otherwise. Prometheus's list of default
    /// ports ran out below 10000; this one is above it (docs/station.md, "Prometheus").
    public static let defaultPort = 10_042

    public var host: String
    public var port: Int

    public init?(_ text: String) {
        guard let parsed = HostAndPort(Substring(text), defaultPort: Self.defaultPort),
            Self.isAddress(parsed.host, family: parsed.bracketed ? AF_INET6 : AF_INET)
        else { return nil }
        host = String(parsed.host)
        port = parsed.port
    }

    /// Whether it is reachable from other machines: worth a warning, the metrics being nobody else's business.
    public var isLoopback: Bool { host.hasPrefix("127.") || host == "::1" }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    private static func isAddress(_ text: Substring, family: Int32) -> Bool {
        var buffer = (UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &buffer) { inet_pton(family, String(text), $0.baseAddress) == 1 }
    }
}
