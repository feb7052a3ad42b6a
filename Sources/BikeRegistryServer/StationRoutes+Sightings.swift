import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// A station's sighting (`POST /sightings`): checked, a rotating beacon's verified, recorded once, and answered with
/// a receipt.
extension StationRoutes {
    /// A sighting's post, its outcome counted for the metrics (`RegistryMetrics.SightingOutcome`): a 4xx is refused;
    /// a failure of the store is counted by the store's own series.
    func counted(_ request: Request) async throws -> Response {
        guard let metrics else { return try await sighting(request).response }
        do {
            let (response, outcome) = try await sighting(request)
            metrics.sighting(outcome)
            return response
        } catch let error as any HTTPResponseError where (400..<500).contains(error.status.code) {
            metrics.sighting(.refused)
            throw error
        }
    }

    private func sighting(_ request: Request) async throws -> (
        response: Response, outcome: RegistryMetrics.SightingOutcome
    ) {
        let station = try await station(request, query: request.uri.queryParameters)
        let body = try await JSONBody.decode(SightingBody.self, from: request)
        guard let key = request.headers[HTTPField.Name("Idempotency-Key")!] else {
            throw APIError.badRequest("Idempotency-Key is required")
        }
        guard key.lowercased() == body.report.sightingId else {
            throw APIError.badRequest("Idempotency-Key differs from sightingId")
        }
        var report = body.report
        let verification = try await verify(&report)
        let received = now()
        switch try await database.record(report, from: station, now: received) {
        case .repeated:
            return (Self.receipt(report.sightingId, "repeat", status: .ok), .duplicate)
        case .recorded(let notifications):
            if notifications > 0 { doorbell.ring() }
            if case .verified(let learned, let offset) = verification, learned != offset,
                try await database.learnClockOffset(bikeId: report.bikeId, offset: learned)
            {
                try await snapshot.listChanged()
            }
            let outcome: RegistryMetrics.SightingOutcome =
                if verification == .failed {
                    .unverifiedRotating
                } else if StationClockCheck.checked(report, receivedAt: received).timesAsReceived {
                    .clockNotBelieved
                } else {
                    .stored
                }
            return (Self.receipt(report.sightingId, "recorded", status: .created), outcome)
        }
    }

    /// Verifies a missing rotating bike's sighting: the identity heard at its date (the time it was received, if
    /// the station's clock is not believed) must be the bike's for an epoch within its window. Any other sighting of
    /// a rotating beacon's bike is stored unverified (`VisitNotifications.unverified`).
    private func verify(_ report: inout SightingReport) async throws -> RotatingListing.Verification {
        let listing = try await snapshot.rotatingListing()
        guard listing.beacons[report.bikeId] != nil else { return .notListed }
        let date = StationClockCheck.checked(report, receivedAt: now()).date
        let verification = listing.verify(
            bikeId: report.bikeId, major: report.heardMajor, minor: report.heardMinor,
            at: Int64(date.timeIntervalSince1970.rounded(.down)))
        if case .verified = verification { report.verifiedRotating = true }
        return verification
    }

    /// `{"result":…,"sightingId":…}` (docs/registry-api.yaml, SightingReceipt), written by hand: it is every post's answer.
    static func receipt(_ sightingId: String, _ result: String, status: HTTPResponse.Status) -> Response {
        var json = JSONWriter()
        json.raw("{")
        json.key("result", first: true)
        json.string(result)
        json.key("sightingId")
        json.string(sightingId)
        json.raw("}")
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: json.text)))
    }
}
