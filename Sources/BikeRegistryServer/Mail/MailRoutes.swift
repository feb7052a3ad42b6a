import BikeRegistryCore
import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird

/// The links a message carries, each working with no owner token:
/// - `/seen/<key>`, from every message but the confirmation: the bike's sightings, read-only, in the reader's zone;
/// - `/confirm/<code>`, from the confirmation message: the address gets the bike's messages from then on;
/// - `/unsubscribe/<key>`, from every other message: the address is removed from the bike. A POST with
///   `List-Unsubscribe=One-Click` is RFC 8058's one click, which a mail client sends for its own button.
///
/// Opening either link (GET) shows a page with one button, and only the POST acts: mail scanners fetch every link in
/// a message, and must not confirm an address for someone who never saw it. The code and the key are in the path,
/// never in a log (`RequestLog` writes `/confirm/-`, `/unsubscribe/-`).
struct MailRoutes: Sendable {
    let database: any RegistryStore
    /// Requests for any of these links, per network per minute: each well-formed one is a lookup in the database.
    let links: NetworkLimit
    let now: @Sendable () -> Date
    let renderer = PageRenderer()

    var routes: [Route] {
        [
            .get("confirm/:code") { _, context in try await confirmPage(context) },
            .post("confirm/:code") { _, context in try await confirm(context) },
            .get("seen/:key") { _, context in try await seenPage(context) },
            .get("unsubscribe/:key") { _, context in try await unsubscribePage(context) },
            .post("unsubscribe/:key") { _, context in try await unsubscribe(context) },
        ]
    }

    /// The confirmation link, opened: a page with one button, so that a mail scanner's fetch confirms nothing.
    private func confirmPage(_ context: some RemoteAddressRequestContext) async throws -> Response {
        try await buttonPage(
            context, key: "code", path: "/confirm/", heading: "Confirm this address",
            text: "Press the button to get the messages about this bike at this address. If you did not ask for "
                + "them, close this page: nothing more will be sent.",
            button: "Confirm")
    }

    /// A link's page: one button that POSTs back to the link, shown only for a key of the registry's shape.
    private func buttonPage(
        _ context: some RemoteAddressRequestContext, key: String, path: String, heading: String, text: String,
        button: String
    ) async throws -> Response {
        if let limited = try await limited(context) { return limited }
        let value = context.parameters.get(key) ?? ""
        guard Self.isLinkKey(value) else { return notOurs }
        return renderer.page(
            "mailLink", MailLinkView(heading: heading, text: text, action: path + value, button: button),
            isPrivate: true)
    }

    /// The button: the address is confirmed, if the code is still good.
    private func confirm(_ context: some RemoteAddressRequestContext) async throws -> Response {
        if let limited = try await limited(context) { return limited }
        let code = context.parameters.get("code") ?? ""
        guard Self.isLinkKey(code), try await database.confirmEmail(code: code, now: now()) else {
            return renderer.message(
                "This link confirms nothing",
                "It has expired (a link works for a day), been used already, or been replaced by a newer one. "
                    + "Save the address again on the bike's page for a new link.",
                status: .notFound)
        }
        return renderer.message(
            "Address confirmed", "Messages about the bike now come to this address too.", status: .ok)
    }

    /// Every message's link to the bike's sightings, read-only.
    private func seenPage(_ context: some RemoteAddressRequestContext) async throws -> Response {
        if let limited = try await limited(context) { return limited }
        let key = context.parameters.get("key") ?? ""
        guard Self.isLinkKey(key), let bike = try await database.bike(unsubscribeKey: key) else {
            return renderer.message(
                "This link shows nothing", "This address gets no messages about the bike any more.",
                status: .notFound)
        }
        let sightings = try await database.sightings(bikeId: bike.id, limit: OwnerPages.sightingsShown + 1)
        return renderer.page(
            "seen",
            SeenView(
                heading: "Where the \(bike.colour) \(bike.make) \(bike.model) was heard",
                sightings: BikeView.rows(sightings, limit: OwnerPages.sightingsShown),
                hasSightings: !sightings.isEmpty, more: sightings.count > OwnerPages.sightingsShown,
                shown: OwnerPages.sightingsShown, unsubscribe: "/unsubscribe/" + key),
            isPrivate: true)
    }

    /// The unsubscribe link, opened: a page with one button.
    private func unsubscribePage(_ context: some RemoteAddressRequestContext) async throws -> Response {
        try await buttonPage(
            context, key: "key", path: "/unsubscribe/", heading: "Stop these messages",
            text: "Press the button and this address gets no more messages about the bike.", button: "Unsubscribe")
    }

    /// The button, or RFC 8058's one-click POST: the address is removed from the bike.
    private func unsubscribe(_ context: some RemoteAddressRequestContext) async throws -> Response {
        if let limited = try await limited(context) { return limited }
        // The one-click POST's body (List-Unsubscribe=One-Click) says nothing the path does not.
        let key = context.parameters.get("key") ?? ""
        guard Self.isLinkKey(key), try await database.unsubscribeEmail(key: key, now: now()) else {
            return renderer.message(
                "Nothing to unsubscribe", "This address gets no messages through this link any more.",
                status: .notFound)
        }
        return renderer.message(
            "Unsubscribed", "This address gets no more messages about the bike.", status: .ok)
    }

    /// A code or key as the registry makes them (`Secrets.newToken`): 43 base64url characters.
    static func isLinkKey(_ text: String?) -> Bool {
        guard let text, text.utf8.count == 43 else { return false }
        return text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    private var notOurs: Response {
        renderer.message("Not found", "This is not a link the registry sends.", status: .notFound)
    }

    /// The page that says to wait, when the request's network is over its limit.
    private func limited(_ context: some RemoteAddressRequestContext) async throws -> Response? {
        guard let wait = try await links.count(ClientNetwork.of(OwnerRoutes.address(context)), now: now()) else {
            return nil
        }
        return renderer.message(
            "Too many requests", "Try again in \(wait) s.", status: .tooManyRequests,
            extraHeaders: [.retryAfter: String(wait)])
    }
}
