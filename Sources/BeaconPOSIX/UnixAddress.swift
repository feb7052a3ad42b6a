#if canImport(Glibc)
public import Glibc
#endif

/// A `sockaddr_un` for a path, for a local socket server, its clients, and sd_notify.
public enum UnixAddress {
    /// Calls `body` with a `sockaddr_un` for `path`; an abstract address when `path` starts with "@".
    public static func with<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        bytes = Array(bytes.prefix(capacity - 1))
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }
}
