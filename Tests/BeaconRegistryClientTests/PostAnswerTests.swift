import BeaconDelivery
import BeaconRegistryClient
import Testing

/// What each answer to POST /sightings does: every status class, without a server.
@Suite(.timeLimit(.minutes(20))) struct PostAnswerTests {
    static func outcome(_ status: Int, location: String? = nil, retryAfter: Duration? = nil) -> DeliveryOutcome {
        PostAnswer.outcome(
            status: status, reasonPhrase: "Reason", retryAfter: retryAfter, location: location,
            request: "https://r/sightings?key=REDACTED")
    }

    @Test(arguments: [200, 201, 202, 204, 299, 409])
    func deliveredIncludingAConflictOnAnIdempotentPost(status: Int) {
        #expect(Self.outcome(status) == .delivered)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504, 599])
    func retried(status: Int) {
        guard case .retry(let after, let reason) = Self.outcome(status, retryAfter: .seconds(7)) else {
            Issue.record("\(status) not retried")
            return
        }
        #expect(reason.contains("HTTP \(status)") && after == .seconds(7))
    }

    @Test(arguments: [301, 302, 303, 307, 308, 401, 403, 404, 405])
    func theStationsProblemHoldsEverySighting(status: Int) {
        guard
            case .held(let reason) = Self.outcome(
                status, location: "https://user:pw@new.example/api/sightings?key=abc")
        else {
            Issue.record("\(status) not held")
            return
        }
        #expect(!reason.contains("pw@") && !reason.contains("key=abc"), "\(reason)")
        if (300..<400).contains(status) {
            #expect(reason.contains("moved to https://REDACTED@new.example/api/sightings?key=REDACTED"))
        }
        if status == 401 || status == 403 { #expect(reason.contains("refused the API key")) }
    }

    @Test(arguments: [400, 410, 413, 415, 422, 451])
    func aMalformedSightingAloneIsDeadLettered(status: Int) {
        #expect(
            Self.outcome(status)
                == .refused(reason: "POST https://r/sightings?key=REDACTED: HTTP \(status) Reason", code: status))
    }
}
