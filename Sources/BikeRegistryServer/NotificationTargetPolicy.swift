import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which URLs an owner may have the registry call. http or https only, and, unless allowed, never a host that
/// resolves to a loopback, private, link-local, shared or multicast address: the registry would otherwise call into
/// the network it runs in for anyone who registers a bike (server-side request forgery). Checked when the owner sets
/// a target and again before each delivery, since a name can be pointed elsewhere in between.
struct NotificationTargetPolicy: Sendable {
    var allowPrivate: Bool

    /// Why `url` is refused, or nil when it may be called.
    func refusal(for url: String) async -> String? {
        guard Self.hasTheDocumentsShape(url) else {
            return
                "not an http or https URL of the shape docs/registry-api.yaml gives (host, port, path and query of plain characters)"
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else { return "not an http or https URL" }
        guard components.user == nil, components.password == nil else {
            return "a URL with a user name or password is not accepted"
        }
        if allowPrivate { return nil }
        let port = components.port.map(String.init) ?? (scheme == "https" ? "443" : "80")
        let addresses = await Self.resolve(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port)
        guard !addresses.isEmpty else { return "\(host) does not resolve" }
        if let inside = addresses.first(where: Self.isInternal) {
            return "\(host) is a private or loopback address (\(inside)); `serve --allow-private-webhooks` allows these"
        }
        return nil
    }

    /// docs/registry-api.yaml's pattern for a target, checked by hand so the server takes exactly what the document says:
    /// `^https?://[A-Za-z0-9.-]+(:[1-9][0-9]{0,4})?(/[A-Za-z0-9._~%/-]*)?(\?[A-Za-z0-9._~%&=+-]*)?$`.
    static func hasTheDocumentsShape(_ url: String) -> Bool {
        var rest = Substring(url)
        if rest.hasPrefix("https://") {
            rest = rest.dropFirst(8)
        } else if rest.hasPrefix("http://") {
            rest = rest.dropFirst(7)
        } else {
            return false
        }
        func run(_ allowed: (Character) -> Bool) -> Substring {
            let taken = rest.prefix(while: allowed)
            rest = rest.dropFirst(taken.count)
            return taken
        }
        func plain(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber) }
        guard !run({ plain($0) || $0 == "." || $0 == "-" }).isEmpty else { return false }
        if rest.first == ":" {
            rest = rest.dropFirst()
            let port = run { $0.isASCII && $0.isNumber }
            guard (1...5).contains(port.count), port.first != "0" else { return false }
        }
        if rest.first == "/" { _ = run { plain($0) || "._~%/-".contains($0) } }
        if rest.first == "?" {
            rest = rest.dropFirst()
            _ = run { plain($0) || "._~%&=+-".contains($0) }
        }
        return rest.isEmpty
    }

    /// The addresses `host` resolves to, as text, off the cooperative pool (getaddrinfo blocks).
    static func resolve(_ host: String, port: String) async -> [String] {
        await withCheckedContinuation { continuation in
            Thread {
                var hints = addrinfo()
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                var list: UnsafeMutablePointer<addrinfo>?
                guard getaddrinfo(host, port, &hints, &list) == 0, let first = list else {
                    return continuation.resume(returning: [])
                }
                defer { freeaddrinfo(first) }
                var addresses: [String] = []
                var entry: UnsafeMutablePointer<addrinfo>? = first
                while let current = entry {
                    var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                    if getnameinfo(
                        current.pointee.ai_addr, current.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0,
                        NI_NUMERICHOST) == 0
                    {
                        addresses.append(
                            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
                    }
                    entry = current.pointee.ai_next
                }
                continuation.resume(returning: addresses)
            }.start()
        }
    }

    /// Loopback, private (RFC 1918, fc00::/7), link-local, shared (100.64/10), unspecified, multicast, or an IPv6
    /// address mapping one of those.
    static func isInternal(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return isInternal(v4: UInt32(bigEndian: v4.s_addr))
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return true }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return isInternal(v4: bytes[12...].reduce(0) { $0 << 8 | UInt32($1) })
        }
        if bytes.allSatisfy({ $0 == 0 }) || bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }
        return bytes[0] & 0xfe == 0xfc || (bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80) || bytes[0] == 0xff
    }

    private static func isInternal(v4 address: UInt32) -> Bool {
        let ranges: [(UInt32, Int)] = [
            (0x0000_0000, 8), (0x0a00_0000, 8), (0x6440_0000, 10), (0x7f00_0000, 8), (0xa9fe_0000, 16),
            (0xac10_0000, 12),
            (0xc0a8_0000, 16), (0xe000_0000, 4), (0xf000_0000, 4),
        ]
        return ranges.contains { base, bits in address >> (32 - bits) == base >> (32 - bits) }
    }
}
