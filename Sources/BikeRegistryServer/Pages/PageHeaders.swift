import HTTPTypes

/// The headers every owner page and asset carries, as real HTTP headers (a `<meta>` cannot set most of them).
enum PageHeaders {
    /// Only this origin's stylesheet and script (no inline script or style, no external fonts or images), forms
    /// posted only here, and never framed.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    static func page(private isPrivate: Bool) -> HTTPFields {
        var fields = HTTPFields()
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.contentSecurityPolicy] = contentSecurityPolicy
        fields[.xContentTypeOptions] = "nosniff"
        fields[HTTPField.Name("X-Frame-Options")!] = "DENY"
        // The private link is in the page's own address: no Referer may carry it to a map site.
        fields[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        fields[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        fields[HTTPField.Name("Cross-Origin-Resource-Policy")!] = "same-origin"
        fields[HTTPField.Name("Permissions-Policy")!] = "camera=(), microphone=(), geolocation=()"
        // A page with the link in it, or the bike's details, is kept by no cache and no back-forward store.
        fields[.cacheControl] = isPrivate ? "no-store" : "no-cache"
        return fields
    }

    static func asset(contentType: String) -> HTTPFields {
        var fields = page(private: false)
        fields[.contentType] = contentType
        fields[.cacheControl] = "public, max-age=3600"
        return fields
    }
}
