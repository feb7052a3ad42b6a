import BikeRegistryCore
import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird

/// `/found`: the finder's page. A beacon's numbers are posted, never put in the address, so they stay out of
/// histories and logs; the answer says only whether a bike is registered with it and whether it is missing, and
/// offers the report that it was placed on the finder without their consent. The forms carry the registration
/// form's double-submit token (`PageCSRF`).
struct FoundPages: Sendable {
    let finder: Finder
    let publicURL: String?
    let renderer = PageRenderer()

    var routes: [Route] {
        [
            .get("found") { request, _ in form(request) },
            .post("found") { request, context in try await lookup(request, address: OwnerRoutes.address(context)) },
            .post("found/abuse") { request, context in
                try await report(request, address: OwnerRoutes.address(context))
            },
        ]
    }

    private func form(_ request: Request) -> Response {
        let csrf = request.cookies[PageCSRF.cookieName]?.value ?? PageCSRF.newCookieValue()
        return renderer.page(
            "found", FoundView(csrf: csrf), isPrivate: false,
            extraHeaders: PageCSRF.cookie(csrf, secure: publicURL?.hasPrefix("https://") == true))
    }

    /// The form's fields, once its token is checked; or the page that says what was wrong.
    private func read(_ request: Request) async -> (FoundView, Finder.Beacon?, FormBody)? {
        guard let form = await FormBody.read(request),
            PageCSRF.registrationAccepts(field: form["csrf"], cookie: request.cookies[PageCSRF.cookieName]?.value)
        else { return nil }
        let view = FoundView(
            csrf: form["csrf"] ?? "", uuid: form["uuid"] ?? "", major: form["major"] ?? "", minor: form["minor"] ?? "")
        return (view, Finder.Beacon(uuid: view.uuid, major: view.major, minor: view.minor), form)
    }

    private func lookup(_ request: Request, address: String) async throws -> Response {
        guard let (view, beacon, _) = await read(request) else { return renderer.refusedCSRF(back: "/found") }
        var answered = view
        guard let beacon else {
            answered.error = "Those are not a beacon's numbers: a UUID, and a major and a minor from 0 to 65535."
            return renderer.page("found", answered, status: .badRequest, isPrivate: false)
        }
        switch try await finder.lookup(beacon, address: address) {
        case .wait(let seconds): return tooMany(seconds)
        case .found(let lookup):
            answered.result = FoundView.Result(registered: lookup.registered, missing: lookup.missing)
            return renderer.page("found", answered, isPrivate: false)
        }
    }

    private func report(_ request: Request, address: String) async throws -> Response {
        guard let (view, beacon, form) = await read(request) else { return renderer.refusedCSRF(back: "/found") }
        guard let beacon else { return renderer.badForm }
        let message: String?
        do {
            message = try Finder.checkedMessage(form["message"] ?? "")
        } catch let error as FieldError {
            var answered = view
            answered.error = "Not sent: \(error.reason)."
            return renderer.page("found", answered, status: .badRequest, isPrivate: false)
        }
        switch try await finder.report(beacon, message: message, address: address) {
        case .wait(let seconds): return tooMany(seconds)
        case .noBike:
            return renderer.message(
                "No bike has this beacon", "No bike is registered with this beacon, so nobody is told where it is.",
                status: .notFound, back: "/found", backText: "Back")
        case .received:
            return renderer.message(
                "Thank you: its messages are paused",
                "The bike's owner is told nothing more of where this beacon is heard until the registry's operator has "
                    + "looked at your report. You may remove the beacon or switch it off. If you feel unsafe, call the "
                    + "police and keep the beacon for them.",
                status: .accepted, back: "/found", backText: "Back")
        }
    }

    private func tooMany(_ seconds: Int) -> Response {
        renderer.message(
            "Too many requests", "Too many requests from your address; try again in \(seconds) s.",
            status: .tooManyRequests, back: "/found", backText: "Back", extraHeaders: [.retryAfter: String(seconds)])
    }
}

struct FoundView: Sendable {
    struct Result: Sendable {
        var registered: Bool
        var missing: Bool
    }

    var csrf: String
    var uuid = ""
    var major = ""
    var minor = ""
    var result: Result?
    var error: String?
}
