/// `host[:port]`, the host an IPv6 address in brackets (`[::1]:1883`), as a URL's authority and a listen address
/// write it: the host (brackets removed; empty is refused) and the port, `defaultPort` when none is given. Nil when a
/// bracket is not closed, something other than `:port` follows it, or the port is not 1 to 65535. Whether the host
/// is acceptable (a name, an IP address of one family) is the caller's to say; `bracketed` tells it which form came.
public struct HostAndPort: Sendable, Equatable {
    public var host: Substring
    public var port: Int
    public var bracketed: Bool

    public init?(_ text: Substring, defaultPort: Int) {
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            bracketed = true
        } else {
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            bracketed = false
        }
        guard !host.isEmpty else { return nil }
        port = defaultPort
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number) else { return nil }
            port = number
        }
    }
}
