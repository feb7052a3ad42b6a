import BeaconDelivery
import BeaconEngine
import BeaconMQTT
import Foundation
import Testing

@testable import BeaconMQTTStation

/// The discovery configs hold what Home Assistant's MQTT discovery requires of each component, share one device and
/// one availability topic, and name no bike; the event carries its type and the bike.
@Suite(.timeLimit(.minutes(20))) struct HomeAssistantDiscoveryTests {
    let discovery = HomeAssistantDiscovery(stationID: "cafe-1.north", prefix: "beacond/cafe-1.north", version: "0.3.0")

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test func everyConfigHasWhatHomeAssistantRequiresAndTheyShareOneDevice() throws {
        let configs = discovery.configs
        #expect(configs.count == 7 && configs.allSatisfy(\.retain))
        var uniqueIDs: Set<String> = []
        for message in configs {
            let parts = message.topic.split(separator: "/").map(String.init)
            #expect(parts.count == 5 && parts[0] == "homeassistant" && parts[4] == "config", "\(message.topic)")
            #expect(parts[2] == "beacond_cafe_1_north", "the node id is the station's, with only [A-Za-z0-9_]")
            let config = try object(message.text)
            let component = parts[1]
            // What every component needs, and what ties them to the station.
            let uniqueID = try #require(config["unique_id"] as? String)
            #expect(uniqueID == "beacond_cafe_1_north_\(parts[3])")
            uniqueIDs.insert(uniqueID)
            #expect(config["name"] is String && config["state_topic"] is String)
            #expect(config["availability_topic"] as? String == "beacond/cafe-1.north/status")
            #expect(config["payload_available"] as? String == "online")
            #expect(config["payload_not_available"] as? String == "offline")
            let device = try #require(config["device"] as? [String: Any])
            #expect(device["identifiers"] as? [String] == ["beacond_cafe_1_north"])
            #expect(device["name"] as? String == "beacond cafe-1.north" && device["sw_version"] as? String == "0.3.0")
            switch component {
            case "event":
                #expect(config["event_types"] as? [String] == ["enter", "exit"])
                #expect(config["state_topic"] as? String == "beacond/cafe-1.north/event")
            case "binary_sensor":
                #expect(config["device_class"] as? String == "connectivity")
                #expect(config["payload_on"] as? String == "ON" && config["payload_off"] as? String == "OFF")
                #expect(config["json_attributes_topic"] as? String == "beacond/cafe-1.north/health")
            case "sensor":
                #expect(config["state_topic"] as? String == "beacond/cafe-1.north/state")
                #expect((config["value_template"] as? String)?.hasPrefix("{{ value_json.") == true)
            default:
                Issue.record("unexpected component \(component)")
            }
        }
        #expect(uniqueIDs.count == configs.count, "unique ids are unique")
        #expect(Set(configs.map { $0.topic.split(separator: "/")[1] }) == ["event", "binary_sensor", "sensor"])
    }

    /// A sighting as the outbox stores it, `fields` over a plain one.
    static func sighting(_ fields: [String: Any]) throws -> OutgoingSighting {
        var all: [String: Any] = [
            "bikeId": "bike-101", "date": "2024-06-01T08:00:30Z", "latitude": 51.5, "longitude": -0.1,
            "sightingId": "s", "kind": "enter", "stationId": "cafe-1.north",
            "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 101,
            "firstSeen": "2024-06-01T08:00:00Z", "lastSeen": "2024-06-01T08:00:30Z", "count": 3, "proximity": "near",
        ]
        all.merge(fields) { $1 }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: all), as: UTF8.self)
        return try #require(OutgoingSighting(stored: json))
    }

    @Test func enterAndExitFireTheEventWithTheBikeAndUpdatesDoNot() throws {
        let sighting = try Self.sighting(["rssi": -66.5])
        let event = try #require(discovery.event(for: sighting))
        #expect(event.topic == "beacond/cafe-1.north/event" && !event.retain)
        let fields = try object(event.text)
        #expect(fields["event_type"] as? String == "enter" && fields["bike_id"] as? String == "bike-101")
        #expect(fields["proximity"] as? String == "near" && fields["rssi"] as? Double == -66.5)
        #expect(fields["seen_at"] as? String == "2024-06-01T08:00:30Z")
        #expect(discovery.event(for: try Self.sighting(["kind": "exit"])) != nil)
        #expect(discovery.event(for: try Self.sighting(["kind": "update"])) == nil)
    }

    /// Make, model and colour from the missing list, when the registry gave them and the beacon is still that bike's.
    @Test func theEventNamesTheBikesMakeModelAndColourWhenTheListHasThem() throws {
        let body = try Self.sighting(["bikeId": "bike-7", "minor": 7])
        var asked: [BeaconIdentity] = []
        let described = try #require(
            discovery.event(for: body) { beacon in
                asked.append(beacon)
                return BikeRecord(id: "bike-7", major: 1, minor: 7, make: "Ducati", model: "Monster", colour: "red")
            })
        #expect(asked.map(\.description) == ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:7"])
        let fields = try object(described.text)
        #expect(fields["make"] as? String == "Ducati" && fields["model"] as? String == "Monster")
        #expect(fields["colour"] as? String == "red")
        // Only what the registry gave; and nothing from a record that is now another bike's.
        let partial = try object(
            try #require(
                discovery.event(for: body) { _ in BikeRecord(id: "bike-7", major: 1, minor: 7, make: "Ducati") }
            ).text)
        #expect(partial["make"] as? String == "Ducati" && partial["model"] == nil && partial["colour"] == nil)
        let other = try object(
            try #require(
                discovery.event(for: body) { _ in BikeRecord(id: "bike-8", major: 1, minor: 7, make: "BMW") }
            ).text)
        #expect(other["make"] == nil && other["bike_id"] as? String == "bike-7")
    }
}
