import BeaconEngine
import BeaconMQTT
import BeaconWire
import Foundation

/// Home Assistant's MQTT discovery for the station, built from the configuration alone (no I/O): one device, and
/// for each of its entities a retained config on `homeassistant/<component>/<node>/<entity>/config`. The entities:
/// an `event` "missing bike seen" (enter and exit; the bike and how near it was as attributes), a connectivity
/// `binary_sensor` for the daemon's health (the reason as an attribute), and sensors for adverts a second, the
/// missing set's size and age, the outbox's depth and the last sighting. None per bike, and no topic or unique id
/// names one: a café's dashboard shows that a missing bike came by, not which bikes it knows of.
struct HomeAssistantDiscovery: Sendable {
    /// Where Home Assistant listens for configs, and says `online` on `<root>/status` when it (re)starts.
    static let root = "homeassistant"
    static let birthTopic = root + "/status"

    let stationID: String
    let prefix: String
    let version: String

    var availabilityTopic: String { prefix + "/status" }
    var eventTopic: String { prefix + "/event" }
    var healthTopic: String { prefix + "/health" }
    var stateTopic: String { prefix + "/state" }

    /// The station's node id: `beacond_` and its id with anything but letters, digits and `_` as `_`.
    var node: String {
        "beacond_" + String(stationID.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    }

    /// Every entity's retained config message.
    var configs: [MQTTMessage] {
        entities.map { component, entity, fields in
            var config = fields
            config["unique_id"] = "\(node)_\(entity)"
            config["availability_topic"] = availabilityTopic
            config["payload_available"] = "online"
            config["payload_not_available"] = "offline"
            config["device"] = device
            config["origin"] = ["name": "beacond", "sw_version": version]
            return MQTTMessage(
                topic: "\(Self.root)/\(component)/\(node)/\(entity)/config", text: Self.json(config), retain: true)
        }
    }

    private var device: [String: Any] {
        [
            "identifiers": [node], "name": "beacond \(stationID)", "manufacturer": "beacond",
            "model": "missing-bike detector", "sw_version": version,
        ]
    }

    private var entities: [(String, String, [String: Any])] {
        func sensor(_ name: String, _ key: String, _ extra: [String: Any]) -> [String: Any] {
            ["name": name, "state_topic": stateTopic, "value_template": "{{ value_json.\(key) }}"]
                .merging(extra) { _, new in new }
        }
        return [
            (
                "event", "missing_bike_seen",
                [
                    "name": "Missing bike seen", "state_topic": eventTopic, "event_types": ["enter", "exit"],
                    "icon": "mdi:motorbike",
                ]
            ),
            (
                "binary_sensor", "health",
                [
                    "name": "Health", "device_class": "connectivity", "state_topic": healthTopic,
                    "value_template": "{{ value_json.state }}", "payload_on": "ON", "payload_off": "OFF",
                    "json_attributes_topic": healthTopic, "entity_category": "diagnostic",
                ]
            ),
            (
                "sensor", "adverts_per_second",
                sensor(
                    "Adverts per second", "adverts_per_second",
                    ["unit_of_measurement": "adverts/s", "state_class": "measurement", "entity_category": "diagnostic"])
            ),
            (
                "sensor", "missing_bikes",
                sensor(
                    "Missing bikes", "missing_bikes", ["unit_of_measurement": "bikes", "state_class": "measurement"])
            ),
            (
                "sensor", "missing_list_age",
                sensor(
                    "Missing list age", "missing_list_age",
                    [
                        "device_class": "duration", "unit_of_measurement": "s", "state_class": "measurement",
                        "entity_category": "diagnostic",
                    ])
            ),
            (
                "sensor", "outbox_depth",
                sensor(
                    "Outbox depth", "outbox_depth",
                    ["unit_of_measurement": "sightings", "state_class": "measurement", "entity_category": "diagnostic"])
            ),
            ("sensor", "last_sighting", sensor("Last sighting", "last_sighting", ["device_class": "timestamp"])),
        ]
    }

    /// The event entity's message for a sighting's body (the registry's JSON): enter and exit only, with the bike
    /// and how near it was; nil for an update, or a body that is not a sighting.
    func event(forSighting body: String, describe: (BeaconIdentity) -> BikeRecord? = { _ in nil }) -> MQTTMessage? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let kind = object["kind"] as? String, kind == "enter" || kind == "exit",
            let bike = object["bikeId"] as? String
        else { return nil }
        var event: [String: Any] = ["event_type": kind, "bike_id": bike]
        for (from, to) in [("proximity", "proximity"), ("rssi", "rssi"), ("lastSeen", "seen_at")] {
            if let value = object[from], !(value is NSNull) { event[to] = value }
        }
        // Make, model and colour when the registry gave them, from the missing list the bike is (still) on.
        if let uuid = (object["uuid"] as? String).flatMap({ BeaconUUID($0) }),
            let major = (object["major"] as? NSNumber)?.uint16Value,
            let minor = (object["minor"] as? NSNumber)?.uint16Value,
            let record = describe(BeaconIdentity(uuid: uuid, major: major, minor: minor)), record.id == bike
        {
            for (key, value) in [("make", record.make), ("model", record.model), ("colour", record.colour)] {
                if let value, !value.isEmpty { event[key] = value }
            }
        }
        return MQTTMessage(topic: eventTopic, text: Self.json(event))
    }

    /// The health and the sensors' values from a status report (retained, so Home Assistant has them at once after
    /// its own restart).
    func state(_ report: StatusReport) -> [MQTTMessage] {
        var health: [String: Any] = ["state": report.healthy ? "ON" : "OFF"]
        health["reason"] = report.healthy ? "" : report.problems.joined(separator: "; ")
        var values: [String: Any] = [
            "adverts_per_second": report.capture.advertsPerSecond, "missing_bikes": report.missingSet.size,
            "outbox_depth": report.outbox.depth,
        ]
        values["missing_list_age"] = report.missingSet.ageSeconds.map { ($0 * 10).rounded() / 10 } ?? NSNull()
        values["last_sighting"] = report.sightings.recent.first?.time ?? NSNull()
        return [
            MQTTMessage(topic: healthTopic, text: Self.json(health), retain: true),
            MQTTMessage(topic: stateTopic, text: Self.json(values), retain: true),
        ]
    }

    private static func json(_ object: [String: Any]) -> String {
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
