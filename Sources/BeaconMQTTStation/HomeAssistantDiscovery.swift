import BeaconControl
import BeaconDelivery
import BeaconEngine
import BeaconMQTT
import BeaconWire

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
            config["unique_id"] = .string("\(node)_\(entity)")
            config["availability_topic"] = .string(availabilityTopic)
            config["payload_available"] = "online"
            config["payload_not_available"] = "offline"
            config["device"] = device
            config["origin"] = ["name": "beacond", "sw_version": .string(version)]
            return MQTTMessage(
                topic: "\(Self.root)/\(component)/\(node)/\(entity)/config", text: DiscoveryJSON.object(config).text,
                retain: true)
        }
    }

    private var device: DiscoveryJSON {
        [
            "identifiers": [.string(node)], "name": .string("beacond \(stationID)"), "manufacturer": "beacond",
            "model": "missing-bike detector", "sw_version": .string(version),
        ]
    }

    private var entities: [(String, String, [String: DiscoveryJSON])] {
        func sensor(_ name: String, _ key: String, _ extra: [String: DiscoveryJSON]) -> [String: DiscoveryJSON] {
            [
                "name": .string(name), "state_topic": .string(stateTopic),
                "value_template": .string("{{ value_json.\(key) }}"),
            ]
            .merging(extra) { _, new in new }
        }
        return [
            (
                "event", "missing_bike_seen",
                [
                    "name": "Missing bike seen", "state_topic": .string(eventTopic), "event_types": ["enter", "exit"],
                    "icon": "mdi:motorbike",
                ]
            ),
            (
                "binary_sensor", "health",
                [
                    "name": "Health", "device_class": "connectivity", "state_topic": .string(healthTopic),
                    "value_template": "{{ value_json.state }}", "payload_on": "ON", "payload_off": "OFF",
                    "json_attributes_topic": .string(healthTopic), "entity_category": "diagnostic",
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

    /// The event entity's message for a sighting: enter and exit only, with the bike and how near it was; nil for
    /// an update.
    func event(for sighting: OutgoingSighting, describe: (BeaconIdentity) -> BikeRecord? = { _ in nil }) -> MQTTMessage?
    {
        let kind = sighting.kind
        guard kind == "enter" || kind == "exit" else { return nil }
        let bike = sighting.bikeId
        var event: [String: DiscoveryJSON] = [
            "event_type": .string(kind), "bike_id": .string(bike), "proximity": .string(sighting.proximity),
            "seen_at": .string(sighting.lastSeen),
        ]
        if let rssi = sighting.rssi { event["rssi"] = .number(rssi) }
        // Make, model and colour when the registry gave them, from the missing list the bike is (still) on.
        if let uuid = BeaconUUID(sighting.uuid),
            let record = describe(BeaconIdentity(uuid: uuid, major: sighting.major, minor: sighting.minor)),
            record.id == bike
        {
            for (key, value) in [("make", record.make), ("model", record.model), ("colour", record.colour)] {
                if let value, !value.isEmpty { event[key] = .string(value) }
            }
        }
        return MQTTMessage(topic: eventTopic, text: DiscoveryJSON.object(event).text)
    }

    /// The health and the sensors' values from a status report (retained, so Home Assistant has them at once after
    /// its own restart).
    func state(_ report: StatusReport) -> [MQTTMessage] {
        let health: DiscoveryJSON = [
            "state": report.healthy ? "ON" : "OFF",
            "reason": .string(report.healthy ? "" : report.problems.joined(separator: "; ")),
        ]
        let values: DiscoveryJSON = [
            "adverts_per_second": .number(report.capture.advertsPerSecond),
            "missing_bikes": .integer(report.missingSet.size), "outbox_depth": .integer(report.outbox.depth),
            "missing_list_age": report.missingSet.ageSeconds.map { .number(($0 * 10).rounded() / 10) } ?? .null,
            "last_sighting": report.sightings.recent.first.map { .string($0.time) } ?? .null,
        ]
        return [
            MQTTMessage(topic: healthTopic, text: health.text, retain: true),
            MQTTMessage(topic: stateTopic, text: values.text, retain: true),
        ]
    }
}

/// The discovery's JSON, written by FoundationEssentials' encoder with its keys sorted: not JSONSerialization, whose
/// Foundation objects (NSDictionary, NSNumber) cost a station with MQTT a few MiB of resident code for a few small
/// documents (docs/performance-history.md, "MQTT and metrics").
enum DiscoveryJSON: Encodable, Equatable, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    case string(String)
    case number(Double)
    case integer(Int)
    case array([DiscoveryJSON])
    case object([String: DiscoveryJSON])
    case null

    init(stringLiteral value: String) { self = .string(value) }
    init(arrayLiteral elements: DiscoveryJSON...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, DiscoveryJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, numbers, arrays and objects: encoding cannot fail.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
