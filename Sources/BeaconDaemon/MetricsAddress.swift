#if canImport(Glibc)
import Glibc
#endif

/// Where `metrics-listen` has the daemon serve `/metrics`: an IP address to bind, never a name (a listener that
/// resolved a name could end up on an address nobody meant to open), and a port, 10042 by default.
/// `127.0.0.1:10042`, `[::1]:10042`, or `127.0.0.1` alone.
public struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
    /// The port a station's /metrics is on unless the configuration says otherwise. Prometheus's list of default
    /// ports ran out below 10000; this one is above it (README, "Prometheus").
    public static let defaultPort = 10_042

    public var host: String
    public var port: Int

    public init?(_ text: String) {
        let host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            guard Self.isAddress(host, family: AF_INET6) else { return nil }
        } else {
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            guard Self.isAddress(host, family: AF_INET) else { return nil }
        }
        var port = Self.defaultPort
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number) else { return nil }
            port = number
        }
        self.host = String(host)
        self.port = port
    }

    /// Whether it is reachable from other machines: worth a warning, the metrics being nobody else's business.
    public var isLoopback: Bool { host.hasPrefix("127.") || host == "::1" }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    private static func isAddress(_ text: Substring, family: Int32) -> Bool {
        var buffer = (UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &buffer) { inet_pton(family, String(text), $0.baseAddress) == 1 }
    }
}
