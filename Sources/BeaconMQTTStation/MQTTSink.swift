import BeaconDelivery
import BeaconEngine
import BeaconMQTT
import LockedValue

/// Sightings to the MQTT broker, as a poster sees it: each published once on `<prefix>/sighting` at QoS 1 (the
/// sighting's JSON, the same the registry receives), and delivered when the broker acknowledges it. While the broker
/// is away (or refuses the station) the line is held, and the next connection resumes it at once
/// (`whenAvailable`), rather than waiting out a backoff grown through the outage.
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
    /// Told of each (re)connection.
    let connections: ConnectionListeners
    var id: SinkID { SinkID("mqtt") }

    func deliver(_ sighting: OutgoingSighting) async -> DeliveryOutcome {
        switch client.connection {
        case .connected:
            break
        case .connecting:
            return .held(reason: "MQTT broker \(displayName): not connected yet")
        case .refused(let reason), .lost(let reason):
            return .held(reason: "MQTT broker \(displayName): \(reason)")
        }
        do {
            try await client.publish(MQTTMessage(topic: topic, text: sighting.json), within: .seconds(20))
            if let event = discovery.event(for: sighting, describe: describe) { try? client.send(event) }
            return .delivered
        } catch {
            return .retry(after: nil, reason: "MQTT broker \(displayName): \(error)")
        }
    }

    func whenAvailable(_ action: @escaping @Sendable () -> Void) { connections.add(action) }
}

/// Who wants to hear of each connection to the broker, told on libmosquitto's thread: each listener hops off it
/// itself.
final class ConnectionListeners: Sendable {
    private let listeners = LockedValue<[@Sendable () -> Void]>([])

    func add(_ listener: @escaping @Sendable () -> Void) { listeners.withLock { $0.append(listener) } }

    func connected() {
        for listener in listeners.withLock({ $0 }) { listener() }
    }

    /// Lets go of every listener: they hold the posters that hold the sink that holds this.
    func removeAll() { listeners.withLock { $0.removeAll() } }
}
