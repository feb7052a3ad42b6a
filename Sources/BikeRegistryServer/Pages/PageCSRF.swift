import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// The forms' CSRF tokens, two kinds, neither kept by the server (so any server of a shared database accepts them):
///
/// - The registration form, which no secret guards, uses a double-submit token: `GET /` sets a random value as an
///   HttpOnly, SameSite=Strict cookie and in the form's hidden field; a post is taken only when the two agree.
///   Another site can make a browser post, but can neither read nor set the cookie.
/// - A bike page's forms carry an HMAC of the bike's id keyed with its owner token, which only the link's holder
///   has; no cookie is needed, so the private link works in a browser that keeps none.
enum PageCSRF {
    static let cookieName = "csrf"

    /// The Set-Cookie of a public form's token: this site only, no script, Secure when served over https.
    static func cookie(_ value: String, secure: Bool) -> HTTPFields {
        let cookie = Cookie(
            name: cookieName, value: value, path: "/", secure: secure, httpOnly: true, sameSite: .strict)
        return [.setCookie: cookie.description]
    }

    static func newCookieValue() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<24).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return base64URL(Data(bytes))
    }

    static func registrationAccepts(field: String?, cookie: String?) -> Bool {
        guard let field, let cookie, field.utf8.count == 32 else { return false }
        return constantTimeEqual(field, cookie)
    }

    static func bikeToken(bikeId: String, ownerToken: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data("bike-page-csrf:\(bikeId)".utf8), using: SymmetricKey(data: Data(ownerToken.utf8)))
        return base64URL(Data(mac))
    }

    static func bikeAccepts(field: String?, bikeId: String, ownerToken: String) -> Bool {
        guard let field else { return false }
        return constantTimeEqual(field, bikeToken(bikeId: bikeId, ownerToken: ownerToken))
    }

    private static func constantTimeEqual(_ left: String, _ right: String) -> Bool {
        let left = Array(left.utf8)
        let right = Array(right.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
