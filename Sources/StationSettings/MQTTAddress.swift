import BeaconPOSIX

/// The broker the configuration's `mqtt` key names: `mqtt://host[:port]` (1883 by default) or `mqtts://host[:port]`
/// (TLS, 8883 by default). A host may be a name, an IPv4 address or a bracketed IPv6 one; nothing else may follow.
public struct MQTTAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init?(_ text: String) {
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("mqtts://") {
            (tls, rest) = (true, text.dropFirst("mqtts://".count))
        } else if text.hasPrefix("mqtt://") {
            (tls, rest) = (false, text.dropFirst("mqtt://".count))
        } else {
            return nil
        }
        let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard let parsed = HostAndPort(authority, defaultPort: tls ? 8883 : 1883),
            parsed.host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:".contains($0)) })
        else { return nil }
        host = String(parsed.host)
        port = parsed.port
        self.tls = tls
    }

    public var description: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "\(tls ? "mqtts" : "mqtt")://\(host):\(port)"
    }
}
