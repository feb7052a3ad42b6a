import BikeRegistryCore
import Foundation

/// libpq's multi-host URL (`postgres://USER@HOST1:PORT1,HOST2:PORT2/DB`), which URLComponents cannot read: the list of
/// hosts is taken out of the URL's authority and the first host put in its place, so the rest of the URL is read as
/// for one host. A host without a port has the URL's (`?port=`, or 5432); `[…]` holds an IPv6 address.
struct PostgresHostList {
    /// The URL with only its first host, for URLComponents.
    var single: String
    /// Each host and its port, if it gave one; empty when the URL names no host (a Unix socket).
    var hosts: [(host: String, port: Int?)]

    init(_ text: String) throws(RegistryStoreError) {
        guard let scheme = text.range(of: "://") else { throw RegistryStoreError("not a postgres:// URL") }
        let rest = text[scheme.upperBound...]
        let authority = rest.prefix { !"/?#".contains($0) }
        let at = authority.lastIndex(of: "@")
        let list = at.map { authority[authority.index(after: $0)...] } ?? authority
        guard list.contains(",") else {
            single = text
            hosts = list.isEmpty ? [] : [try Self.host(list, alone: true)]
            return
        }
        var hosts: [(host: String, port: Int?)] = []
        for entry in list.split(separator: ",", omittingEmptySubsequences: false) {
            hosts.append(try Self.host(entry, alone: false))
        }
        self.hosts = hosts
        single = String(text[..<list.startIndex]) + list.prefix { $0 != "," } + text[list.endIndex...]
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`. A lone host's port is left to URLComponents, which says what is
    /// wrong with it as before.
    private static func host(_ text: Substring, alone: Bool) throws(RegistryStoreError) -> (host: String, port: Int?) {
        guard !text.isEmpty else { throw RegistryStoreError("the PostgreSQL URL's host list has an empty entry") }
        var host = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw RegistryStoreError("the PostgreSQL URL's host \(text) has no closing ]")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw RegistryStoreError("the PostgreSQL URL's host \(text) is not [ADDRESS]:PORT")
            }
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        if alone { return (String(host), nil) }
        guard let portText else { return (String(host), nil) }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw RegistryStoreError("the PostgreSQL URL's host \(text) has a port that is not 1 to 65535")
        }
        return (String(host), port)
    }
}

/// Which host of several the store may use, as libpq's `target_session_attrs` says: `any` (the first that answers,
/// libpq's default), `read-write` (one whose sessions may write: `transaction_read_only` is off) or `primary` (one
/// not in recovery). libpq's `read-only`, `standby` and `prefer-standby` are refused: the registry writes.
enum TargetSessionAttributes: String, Sendable {
    case any
    case readWrite = "read-write"
    case primary

    init(_ text: String?) throws(RegistryStoreError) {
        guard let text else {
            self = .any
            return
        }
        guard let value = Self(rawValue: text) else {
            throw RegistryStoreError(
                "target_session_attrs=\(text) is not one bike-registry can use: read-write, primary or any (it writes)")
        }
        self = value
    }

    /// Whether a host that says it is in recovery or not, and whose sessions are read-only or not, will do.
    func accepts(inRecovery: Bool, readOnly: Bool) -> Bool {
        switch self {
        case .any: true
        case .readWrite: !readOnly
        case .primary: !inRecovery
        }
    }
}
