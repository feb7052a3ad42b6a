/// A registry URL as it may be shown (logs, status, doctor) and judged: user-info and key-like query values are
/// never shown, and a plain-http registry off this machine is one whose key anyone on the path can read.
public enum RegistryAddress {
    /// Query parameters whose values are secrets.
    static let secretParameters: Set<String> = [
        "key", "apikey", "api_key", "api-key", "token", "access_token", "password", "secret",
    ]

    /// `https://user:pw@host/api?key=abc&x=1` → `https://REDACTED@host/api?key=REDACTED&x=1`.
    public static func redacted(_ url: String) -> String {
        var text = url
        if let schemeEnd = text.firstRange(of: "://") {
            let authorityStart = schemeEnd.upperBound
            let authorityEnd =
                text[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
            if let at = text[authorityStart..<authorityEnd].lastIndex(of: "@") {
                text.replaceSubrange(authorityStart..<at, with: "REDACTED")
            }
        }
        guard let question = text.firstIndex(of: "?") else { return text }
        let fragmentStart = text[question...].firstIndex(of: "#") ?? text.endIndex
        let query = text[text.index(after: question)..<fragmentStart].split(
            separator: "&", omittingEmptySubsequences: false
        ).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, secretParameters.contains(parts[0].lowercased()) else { return String(pair) }
            return "\(parts[0])=REDACTED"
        }
        return String(text[...question]) + query.joined(separator: "&") + String(text[fragmentStart...])
    }

    /// True for `http://` to anything but this machine (localhost, 127.0.0.0/8, ::1).
    public static func sendsKeyInClear(_ url: String) -> Bool {
        guard url.lowercased().hasPrefix("http://") else { return false }
        var authority = url.dropFirst("http://".count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let host: Substring
        if authority.hasPrefix("[") {
            host = authority.dropFirst().prefix { $0 != "]" }
        } else {
            host = authority.prefix { $0 != ":" }
        }
        let name = host.lowercased()
        return !(name == "localhost" || name.hasPrefix("127.") || name == "::1")
    }
}
