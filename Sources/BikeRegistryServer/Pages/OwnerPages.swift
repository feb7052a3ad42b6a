import BikeRegistryCore
import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird

/// The owner's web pages, beside the JSON API and on the same store (a bike reported missing here is in the
/// stations' list at once): `/` registers a bike; `/my/<id>/<token>` is the bike's private page, its owner token in
/// the path, never in a query (`RequestLog` writes such a path without it), and works with no cookie and no script.
/// Every form posts back here with a CSRF token (`PageCSRF`); each post answers 303 to the page, or the page again
/// with what was wrong.
struct OwnerPages: Sendable {
    /// Registration's rules and limits, shared with the API's.
    let registrar: Registrar
    /// The owner's rules, shared with the API's.
    let owners: OwnerService
    /// "Send a test" by bike: each sends a request to an address the owner chose.
    let tests: RateLimiter<String>
    let sender: NotificationSender
    /// The mail's settings; nil when e-mail is off.
    var mail: MailSettings? { owners.emails.mail }
    let region: (uuid: String, major: Int)
    /// `RegistryServerConfiguration.publicURL`, without a trailing slash.
    let publicURL: String?
    let renderer = PageRenderer()
    /// Sightings shown on a bike's page, newest first: a page stays well under 50 KB.
    static let sightingsShown = 50

    var routes: [Route] {
        [
            .get("/") { request, _ in registerPage(request) },
            .post("register") { request, context in
                try await register(request, address: OwnerRoutes.address(context))
            },
            .get("my/:id/:token") { _, context in try await bikePage(context) },
            .post("my/:id/:token/:action") { request, context in try await act(request, context) },
            .get("static/style.css") { _, _ in
                Response(
                    status: .ok, headers: PageHeaders.asset(contentType: "text/css; charset=utf-8"),
                    body: .init(byteBuffer: .init(string: PageAssets.style)))
            },
            .get("static/page.js") { _, _ in
                Response(
                    status: .ok, headers: PageHeaders.asset(contentType: "text/javascript; charset=utf-8"),
                    body: .init(byteBuffer: .init(string: PageAssets.script)))
            },
        ]
    }

    // MARK: Registering

    private func registerPage(_ request: Request) -> Response {
        // The form's token and its cookie: a new pair unless the browser has one already.
        let csrf = request.cookies[PageCSRF.cookieName]?.value ?? PageCSRF.newCookieValue()
        return renderer.page(
            "register",
            RegisterView(
                csrf: csrf, open: registrar.mode == .open, uuid: region.uuid, major: String(region.major)),
            isPrivate: false,
            extraHeaders: csrfCookie(csrf))
    }

    private func register(_ request: Request, address: String) async throws -> Response {
        guard let form = await FormBody.read(request) else { return badForm }
        let cookie = request.cookies[PageCSRF.cookieName]?.value
        guard PageCSRF.registrationAccepts(field: form["csrf"], cookie: cookie) else { return refusedCSRF(back: "/") }
        var view = RegisterView(
            csrf: form["csrf"] ?? "", open: registrar.mode == .open, claimCode: form["claim_code"] ?? "",
            uuid: form["uuid"] ?? "", major: form["major"] ?? "", minor: form["minor"] ?? "",
            make: form["make"] ?? "", model: form["model"] ?? "", colour: form["colour"] ?? "")
        let registering: RegistrationRequest
        // With a code and no minor, the UUID and major the open form fills in are not the owner's to hold against it.
        let numbers = Self.given(view.claimCode) == nil || Self.given(view.minor) != nil
        do {
            registering = try NewBikeFields.checked(
                claimCode: Self.given(view.claimCode),
                uuid: numbers ? Self.given(view.uuid) : nil,
                major: numbers ? try Self.number(view.major, "major") : nil,
                minor: try Self.number(view.minor, "minor"), make: view.make, model: view.model, colour: view.colour)
        } catch let error as FieldError {
            view.error = "Not registered: \(error.reason)."
            return renderer.page("register", view, status: .badRequest, isPrivate: false)
        }
        switch try await registrar.register(registering, address: address) {
        case .wait(let wait):
            return renderer.message(
                "Too many registrations", "Too many registrations from your address; try again in \(wait) s.",
                status: .tooManyRequests, extraHeaders: [.retryAfter: String(wait)])
        case .incomplete(let reason):
            view.error = "Not registered: \(reason)."
            return renderer.page("register", view, status: .badRequest, isPrivate: false)
        case .refused:
            view.error = "Not registered: \(Registrar.refusal)."
            return renderer.page("register", view, status: .forbidden, isPrivate: false)
        case .taken:
            view.error =
                "Not registered: this beacon (minor \(view.minor), major \(view.major)) is registered already, or "
                + "registers only with the claim code on its label. If it is yours, open its private link; "
                + "otherwise check the beacon's numbers."
            return renderer.page("register", view, status: .conflict, isPrivate: false)
        case .registered(let registration):
            let path = Self.path(registration.bike.id, registration.ownerToken)
            return renderer.page(
                "registered",
                RegisteredView(
                    heading: "Registered: your \(registration.bike.make) \(registration.bike.model)", path: path,
                    link: link(path), webhookSecret: registration.webhookSecret),
                status: .created, isPrivate: true)
        }
    }

    /// The owner's change, then the page again (303), or the page saying why not.
    private func apply(_ change: OwnerService.Change, to bike: Bike, token: String, path: String) async throws
        -> Response
    {
        switch try await owners.change(bike, token: token, change) {
        case .notOwner: return gone
        case .noOpenReport:
            return try await show(bike, token: token, status: .conflict, error: "The bike has no open missing report.")
        case .tooManyReports(let next, _):
            return try await show(
                bike, token: token, status: .tooManyRequests,
                error:
                    "Not reported: a bike may be reported missing at most 3 times in 30 days; the next report may be made from \(ISOTime.readable(next))."
            )
        case .targetRefused(let field, let reason):
            return try await show(
                bike, token: token, status: .badRequest, error: "The \(field) URL was not saved: \(reason).")
        case .updated:
            return Self.seeOther(path)
        }
    }

    /// The page's field for an API name: `policeReference` is `police_reference`.
    static func formName(_ name: String) -> String {
        name.reduce(into: "") { text, character in
            if character.isUppercase { text += "_" + character.lowercased() } else { text.append(character) }
        }
    }

    /// A form field as given, nil when left empty.
    private static func given(_ field: String) -> String? {
        let trimmed = field.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? nil : trimmed
    }

    private static func number(_ field: String, _ name: String) throws -> Int? {
        guard let given = given(field) else { return nil }
        guard let value = BeaconParser.integer(given) else {
            throw FieldError("\(name) is a whole number from 0 to 65535")
        }
        return value
    }

    // MARK: The bike's page

    /// The bike this path's id and token open, or the page that says it opens nothing.
    private enum Owned {
        case bike(Bike, token: String)
        case page(Response)
    }

    private func owned(_ context: some RequestContext) async throws -> Owned {
        let token = context.parameters.get("token") ?? ""
        switch try await owners.owned(id: context.parameters.get("id") ?? "", token: token) {
        case .bike(let bike): return .bike(bike, token: token)
        case .wait(let wait):
            return .page(
                renderer.message(
                    "Too many requests", "Too many requests for this bike; try again in \(wait) s.",
                    status: .tooManyRequests, extraHeaders: [.retryAfter: String(wait)]))
        case .none:
            return .page(
                renderer.message(
                    "This link opens nothing",
                    "No bike has this link. A newer link may have replaced it, or the bike was deleted.",
                    status: .notFound))
        }
    }

    private func bikePage(_ context: some RequestContext) async throws -> Response {
        switch try await owned(context) {
        case .page(let page): return page
        case .bike(let bike, let token): return try await show(bike, token: token)
        }
    }

    private func show(
        _ bike: Bike, token: String, status: HTTPResponse.Status = .ok, error: String? = nil,
        tests: [BikeView.TestResult] = []
    ) async throws -> Response {
        let sightings = try await owners.sightings(bike, limit: Self.sightingsShown + 1)
        var view = BikeView(
            bike: bike, path: Self.path(bike.id, token), csrf: PageCSRF.bikeToken(bikeId: bike.id, ownerToken: token),
            sightings: sightings, limit: Self.sightingsShown, channels: owners.channels)
        if let report = try await owners.openReport(bike) { view.report = BikeView.ReportView(report) }
        view.error = error
        view.tests = tests
        view.mailOn = mail != nil
        return renderer.page("bike", view, status: status, isPrivate: true)
    }

    private func act(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, token): (Bike, String)
        switch try await owned(context) {
        case .page(let page): return page
        case .bike(let owned, let ownerToken): (bike, token) = (owned, ownerToken)
        }
        let path = Self.path(bike.id, token)
        guard let form = await FormBody.read(request) else { return badForm }
        guard PageCSRF.bikeAccepts(field: form["csrf"], bikeId: bike.id, ownerToken: token) else {
            return refusedCSRF(back: path)
        }
        switch context.parameters.get("action") {
        case "missing":
            return try await reportMissing(form, bike: bike, token: token, path: path)
        case "renew":
            return try await apply(.init(report: BikeChange(renew: true)), to: bike, token: token, path: path)
        case "notify":
            return try await saveTargets(form, bike: bike, token: token, path: path)
        case "email":
            return try await saveEmail(form, bike: bike, token: token, path: path)
        case "test":
            return try await sendTest(bike, token: token)
        case "rotate":
            guard let new = try await owners.rotateToken(bike, token: token) else { return gone }
            let newPath = Self.path(bike.id, new)
            return renderer.page(
                "registered",
                RegisteredView(
                    heading: "Your bike's new private link", path: newPath, link: link(newPath),
                    webhookSecret: nil),
                isPrivate: true)
        case "delete":
            guard form["confirm"] == "yes" else {
                return try await show(
                    bike, token: token, status: .badRequest, error: "Tick the box to confirm the deletion.")
            }
            guard try await owners.delete(bike, token: token) else { return gone }
            return renderer.message(
                "Deleted", "Your \(bike.make) \(bike.model) and every sighting of it are deleted.", status: .ok)
        default:
            return renderer.message("Not found", "No such page.", status: .notFound)
        }
    }

    /// The report form: missing, with what the owner gave, or found, with how.
    private func reportMissing(_ form: FormBody, bike: Bike, token: String, path: String) async throws -> Response {
        guard let missing = form["missing"].flatMap(Bool.init) else { return badForm }
        var change = BikeChange(missing: missing)
        if missing {
            let given = ReportFields.texts.compactMap { name in
                Self.given(form[Self.formName(name)] ?? "").map { (name, $0) }
            }
            do {
                change.report = try ReportFields.checked(Dictionary(uniqueKeysWithValues: given), lastSeenAt: nil)
            } catch let error as FieldError {
                return try await show(
                    bike, token: token, status: .badRequest, error: "Not reported: \(error.reason).")
            }
        } else {
            guard let outcome = MissingReport.Outcome(rawValue: form["outcome"] ?? "recovered"), outcome != .lapsed
            else { return badForm }
            change.outcome = outcome
        }
        return try await apply(.init(report: change), to: bike, token: token, path: path)
    }

    /// Where messages go: a target on each channel saved as given (an ntfy topic, a webhook), each refused as the API
    /// refuses it; an empty field removes its target.
    private func saveTargets(_ form: FormBody, bike: Bike, token: String, path: String) async throws -> Response {
        var change = OwnerService.Change()
        for channel in owners.channels.direct {
            let typed = (form[channel.field] ?? "").trimmingCharacters(in: .whitespaces)
            guard !typed.isEmpty else {
                change.targets[channel.id] = .some(nil)
                continue
            }
            guard typed.utf8.count <= 2048 else {
                return try await show(
                    bike, token: token, status: .badRequest, error: "The \(channel.field) URL is too long.")
            }
            switch channel.parsed(typed) {
            case .success(let target): change.targets[channel.id] = .some(target)
            case .failure(let error):
                return try await show(
                    bike, token: token, status: .badRequest,
                    error: "The \(channel.field) URL was not saved: \(error.reason).")
            }
        }
        return try await apply(change, to: bike, token: token, path: path)
    }

    /// The address, whose change sends a confirmation (`EmailChanges`, through the owner's service).
    private func saveEmail(_ form: FormBody, bike: Bike, token: String, path: String) async throws -> Response {
        let typed = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        var change = OwnerService.Change()
        if typed.isEmpty {
            change.targets[.email] = .some(nil)
        } else if let channel = owners.channels.channel(.email), case .success(let address) = channel.parsed(typed) {
            change.targets[.email] = .some(address)
        } else {
            return try await show(
                bike, token: token, status: .badRequest,
                error:
                    "The address was not saved: it is not one this registry can send to (local@domain.example, in ASCII)."
            )
        }
        do {
            return try await apply(change, to: bike, token: token, path: path)
        } catch let refusal as HTTPError {
            return try await show(
                bike, token: token, status: refusal.status,
                error: "The address was not saved: \(refusal.body ?? "refused").")
        }
    }

    /// Sends the owner's targets a test message now, through the worker's own sender, and shows what was sent.
    private func sendTest(_ bike: Bike, token: String) async throws -> Response {
        let channels = owners.channels.all.compactMap { channel in
            bike.target(on: channel.id).map { (channel, $0) }
        }
        guard !channels.isEmpty else {
            return try await show(
                bike, token: token, status: .badRequest,
                error: mail == nil
                    ? "Save an ntfy topic or a webhook first, then test it."
                    : "Save an ntfy topic or a webhook first, or confirm an e-mail address, then test it.")
        }
        if let wait = tests.retryAfter(bike.id) {
            return try await show(
                bike, token: token, status: .tooManyRequests,
                error: "Too many tests; try again in \(wait) s.")
        }
        let payload = NotificationPayload.test(bikeId: bike.id, now: Date())
        let json = try payload.json()
        // Every channel at once: each attempt may take the delivery's whole deadline.
        let results = await withTaskGroup(of: (Int, BikeView.TestResult).self) { group in
            for (index, (channel, target)) in channels.enumerated() {
                group.addTask {
                    let notification = PendingNotification(
                        id: Secrets.newID(prefix: "msg_test_"), bikeId: bike.id, channel: channel.id, target: target,
                        payload: json, attempts: 0, webhookSecret: bike.webhookSecret, createdAt: payload.timestamp)
                    let outcome: String
                    switch await sender.attempt(notification) {
                    case .delivered: outcome = "delivered"
                    case .gone: outcome = "not delivered: the address answered 410 (gone)"
                    case .retry(let failure, _): outcome = "not delivered: \(failure.shown)"
                    case .refused(let failure): outcome = "not delivered: \(failure.shown)"
                    }
                    let sent = channel.shown(notification, payload: payload, bike: bike)
                    return (
                        index, .init(channel: channel.id.rawValue, target: target, outcome: outcome, sent: sent)
                    )
                }
            }
            var results: [(Int, BikeView.TestResult)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return try await show(bike, token: token, tests: results)
    }

    // MARK: Answers

    private var badForm: Response { renderer.badForm }

    private var gone: Response {
        renderer.message(
            "This link opens nothing", "No bike has this link any more; it may have been replaced or deleted.",
            status: .notFound)
    }

    private func refusedCSRF(back: String) -> Response { renderer.refusedCSRF(back: back) }

    static func path(_ id: String, _ token: String) -> String { "/my/\(id)/\(token)" }

    private static func seeOther(_ path: String) -> Response {
        Response(status: .seeOther, headers: [.location: path, .cacheControl: "no-store"])
    }

    /// Secure when the registry is served over https (its public URL says so): never sent over plain http.
    private func csrfCookie(_ value: String) -> HTTPFields {
        PageCSRF.cookie(value, secure: publicURL?.hasPrefix("https://") == true)
    }

    /// The link to save: whole under the configured public URL; otherwise relative to the site, which the page's
    /// script writes whole from the browser's own address. Never built from the request's Host header, which is
    /// whatever its sender wrote.
    private func link(_ path: String) -> String {
        publicURL.map { $0 + path } ?? path
    }
}
