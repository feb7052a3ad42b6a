import Foundation

/// `serve --public-url`: where owners reach the registry, the base of every link its pages show.
public enum PublicURL {
    /// The URL without a trailing slash, when it is http or https with a host and nothing past an optional port;
    /// nil otherwise.
    public static func checked(_ text: String) -> String? {
        let trimmed = text.hasSuffix("/") ? String(text.dropLast()) : text
        guard let components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = components.host, !host.isEmpty,
            components.user == nil, components.password == nil, components.path.isEmpty, components.query == nil,
            components.fragment == nil
        else { return nil }
        return trimmed
    }
}
