public import BeaconDelivery

/// What an answer to `POST /sightings` means for the sighting and the station, from its status alone (pure, so
/// every status is tested without a server).
///
/// - 2xx, and 409 (the registry has it already: the POST is idempotent by `sightingId`): delivered.
/// - 408, 429, 5xx: try this one again later.
/// - 3xx: the registry moved (http to https, a new path). Following it would send the key somewhere the
///   configuration did not name, so nothing is followed: every sighting is held until the URL is changed.
/// - 401, 403: the key is wrong (rotated on one side only), which no sighting can fix: every sighting is held.
/// - 404, 405: the URL does not lead to a registry's sightings: held, as a configuration mistake.
/// - any other 4xx (400, 413, 422…): this sighting is malformed for this registry: dead letter.
public enum PostAnswer {
    public static func outcome(
        status: Int, reasonPhrase: String, retryAfter: Duration?, location: String?, request shown: String
    ) -> DeliveryOutcome {
        let answered = "POST \(shown): HTTP \(status) \(reasonPhrase)"
        switch status {
        case 200..<300, 409:
            return .delivered
        case 408, 429, 500..<600:
            return .retry(after: retryAfter, reason: answered)
        case 300..<400:
            let target = location.map { " to \(RegistryAddress.redacted($0))" } ?? ""
            return .held(
                reason:
                    "\(answered): the registry moved\(target); sightings are kept, not sent there: change `registry` in the configuration"
            )
        case 401, 403:
            return .held(
                reason:
                    "\(answered): the registry refused the API key; sightings are kept: put this station's key in place and reload"
            )
        case 404, 405:
            return .held(
                reason:
                    "\(answered): no registry at this URL; sightings are kept: check `registry` in the configuration")
        default:
            return .refused(reason: answered, code: status)
        }
    }
}
