import BikeRegistryCore
import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird

/// The owner side: register a bike (no credentials; rate-limited per address), then, with the owner token as
/// `Authorization: Bearer`, read, change or delete that one bike and read its sightings.
struct OwnerRoutes: Sendable {
    /// Registration's rules and limits, shared with the page's.
    let registrar: Registrar
    /// The owner's rules, shared with the pages'.
    let owners: OwnerService

    var routes: [Route] {
        [
            .post("owner/bikes") { request, context in try await register(request, address: Self.address(context)) },
            .get("owner/bikes/:id") { request, context in try await show(request, context) },
            .patch("owner/bikes/:id") { request, context in try await change(request, context) },
            .delete("owner/bikes/:id") { request, context in try await delete(request, context) },
            .get("owner/bikes/:id/sightings") { request, context in try await sightings(request, context) },
        ]
    }

    static func address(_ context: some RemoteAddressRequestContext) -> String {
        context.remoteAddress?.ipAddress ?? "unknown"
    }

    private func register(_ request: Request, address: String) async throws -> Response {
        let body = try await JSONBody.decode(RegistrationBody.self, from: request)
        switch try await registrar.register(body.request, address: address) {
        case .wait(let seconds): throw APIError.tooManyRequests(retryAfter: seconds)
        case .incomplete(let reason): throw APIError.badRequest(reason)
        case .refused: throw HTTPError(.forbidden, message: Registrar.refusal)
        case .taken:
            throw HTTPError(
                .conflict,
                message:
                    "this beacon (uuid, major, minor) is registered already, or is provisioned and registers only with its claim code"
            )
        case .registered(let registration):
            return try JSONBody.response(
                RegistrationAnswer(
                    id: registration.bike.id, ownerToken: registration.ownerToken,
                    webhookSecret: registration.webhookSecret,
                    bike: OwnerBike(registration.bike, channels: owners.channels)),
                status: .created,
                headers: [.location: "/owner/bikes/\(registration.bike.id)", .cacheControl: "no-store"])
        }
    }

    /// The bike this request's token owns, by the path's id. 401 when the token is no owner's (no token, a station
    /// key, a deleted bike's); 404 when it is another bike's owner's, so ids cannot be probed.
    private func ownedBike(_ request: Request, _ context: some RequestContext) async throws -> (Bike, token: String) {
        guard let token = request.headers[.authorization].flatMap(StationRoutes.bearer), !token.isEmpty else {
            throw APIError.unauthorized("the owner token is required as Authorization: Bearer")
        }
        switch try await owners.owned(id: context.parameters.get("id") ?? "", token: token) {
        case .bike(let bike): return (bike, token)
        case .wait(let seconds): throw APIError.tooManyRequests(retryAfter: seconds)
        case .none(let ownerToken):
            guard ownerToken else { throw APIError.unauthorized("not an owner token") }
            throw APIError.notFound
        }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, _) = try await ownedBike(request, context)
        return try await answer(bike)
    }

    /// The bike as its owner sees it, with its open report.
    private func answer(_ bike: Bike) async throws -> Response {
        try JSONBody.response(
            OwnerBike(bike, report: try await owners.openReport(bike), channels: owners.channels),
            headers: [.cacheControl: "no-store"])
    }

    private func change(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, token) = try await ownedBike(request, context)
        let body = try await JSONBody.decode(ChangeBody.self, from: request)
        let change: OwnerService.Change
        do {
            change = try body.change(channels: owners.channels)
        } catch let error as FieldError {
            throw APIError.badRequest(error.reason)
        }
        switch try await owners.change(bike, token: token, change) {
        case .notOwner: throw APIError.notFound
        case .noOpenReport: throw HTTPError(.conflict, message: "the bike has no open missing report")
        case .tooManyReports(let next, let now): throw APIError.tooManyReports(next: next, now: now)
        case .targetRefused(let field, let reason): throw APIError.badRequest("notify.\(field): \(reason)")
        case .updated(let changed): return try await answer(changed)
        }
    }

    private func delete(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, token) = try await ownedBike(request, context)
        guard try await owners.delete(bike, token: token) else { throw APIError.notFound }
        return Response(status: .noContent)
    }

    private func sightings(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (bike, _) = try await ownedBike(request, context)
        let sightings = try await owners.sightings(bike, limit: 1000)
        return try JSONBody.response(
            SightingsAnswer(
                bikeId: bike.id, stationsListeningLastHour: try await owners.stationsListening(),
                sightings: sightings.map {
                    SightingsAnswer.Item(
                        kind: $0.kind, seenAt: $0.seenAt, firstSeen: $0.firstSeen, lastSeen: $0.lastSeen,
                        station: $0.station,
                        proximity: $0.proximity, rssi: $0.rssi, visitId: $0.visitId,
                        timesAsReceived: $0.timesAsReceived)
                }),
            headers: [.cacheControl: "no-store"])
    }
}
