import BeaconEngine
import BeaconMQTT
import BeaconRegistryClient

/// Sightings to the MQTT broker, as a poster sees it: each published once on `<prefix>/sighting` at QoS 1, the same
/// JSON the registry receives, and delivered when the broker acknowledges it. While the broker is away (or refuses
/// the station) the line is held, and the next connection resumes it at once (`MQTTStation`), rather than waiting
/// out a backoff grown through the outage.
///
/// An enter or an exit also fires Home Assistant's "missing bike seen" event (`HomeAssistantDiscovery`), once the
/// sighting itself is the broker's.
struct MQTTSink: SightingSink {
    let client: MQTTClient
    let topic: String
    let displayName: String
    let discovery: HomeAssistantDiscovery
    /// The missing bike a beacon belongs to, for the event's make, model and colour.
    let describe: @Sendable (BeaconIdentity) -> BikeRecord?
    var sinkName: String { "mqtt" }

    func post(body: String, sightingID: String) async -> PostOutcome {
        switch client.connection {
        case .connected:
            break
        case .connecting:
            return .held(status: 0, reason: "MQTT broker \(displayName): not connected yet")
        case .refused(let reason), .lost(let reason):
            return .held(status: 0, reason: "MQTT broker \(displayName): \(reason)")
        }
        do {
            try await client.publish(MQTTMessage(topic: topic, text: body), within: .seconds(20))
            if let event = discovery.event(forSighting: body, describe: describe) { try? client.send(event) }
            return .delivered
        } catch {
            return .retry(reason: "MQTT broker \(displayName): \(error)", retryAfter: nil)
        }
    }
}
