import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Which URLs an owner may have the registry call. http or https only, and, unless allowed, never a host that
/// resolves to an address that is not globally reachable (`SpecialPurposeAddresses`: loopback, private, link-local,
/// documentation, benchmarking, and those carried inside NAT64, 6to4 and other IPv6 forms): the registry would
/// otherwise call into the network it runs in for anyone who registers a bike (server-side request forgery).
/// Checked when the owner sets a target and again before each delivery, since a name can be pointed elsewhere in
/// between. What the owner is told names the kind of address, never the address a name resolved to.
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
        if let refused = addresses.lazy.compactMap(SpecialPurposeAddresses.refusal).first {
            return "\(host) is not a public address (\(refused)); `serve --allow-private-webhooks` allows these"
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

    /// The addresses `host` resolves to, as bytes (4 or 16 each), off the cooperative pool (getaddrinfo blocks).
    /// A cancelled caller (a delivery past its deadline) is answered at once with none; the lookup ends on its own.
    static func resolve(_ host: String, port: String) async -> [[UInt8]] {
        let waiting = NIOLockedValueBox<CheckedContinuation<[[UInt8]], Never>?>(nil)
        @Sendable func answer(_ addresses: [[UInt8]]) {
            waiting.withLockedValue { continuation in
                defer { continuation = nil }
                return continuation
            }?.resume(returning: addresses)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiting.withLockedValue { $0 = continuation }
                if Task.isCancelled { return answer([]) }
                Thread { answer(lookUp(host, port: port)) }.start()
            }
        } onCancel: {
            answer([])
        }
    }

    private static func lookUp(_ host: String, port: String) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, port, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [[UInt8]] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry, let address = current.pointee.ai_addr {
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    addresses.append(withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) })
                }
            case AF_INET6:
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    addresses.append(withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) })
                }
            default:
                break
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }
}
