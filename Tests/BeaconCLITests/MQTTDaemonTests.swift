import BeaconControl
import BeaconDaemon
import BeaconMQTT
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// `beacond run` with MQTT configured, against a real Mosquitto broker on loopback and the registry: every sighting
/// of the café capture reaches both, each once, as the same JSON; the station says online and, once it has stopped,
/// offline; no payload carries a password, a key or an advertiser's address.
@Suite(.timeLimit(.minutes(20))) struct MQTTDaemonTests {
    /// A client of the test's own (a watcher, Home Assistant) on the broker's plain listener, subscribed to `topics`
    /// and started, and what it receives.
    static func watch(_ broker: MosquittoBroker, id: String, _ topics: String...) throws -> (
        MQTTClient, Collected<MQTTMessage>
    ) {
        let inbox = Collected<MQTTMessage>()
        let client = try MQTTClient(
            MQTTSettings(
                host: "127.0.0.1", port: broker.port, username: MosquittoBroker.username,
                password: MosquittoBroker.password, clientID: id),
            onMessage: inbox.add)
        for topic in topics { client.subscribe(topic) }
        try client.start()
        return (client, inbox)
    }

    /// The station's password file in the café's directory, holding `password` and a newline.
    static func passwordFile(_ cafe: CafeRun, _ password: String = MosquittoBroker.password) throws -> String {
        let path = cafe.directory.file("mqtt-password")
        try "\(password)\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func everySightingReachesTheBrokerAndTheRegistryOnceAndTheStationEndsOffline() async throws {
        let broker = try MosquittoBroker()
        let cafe = try await CafeRun.start("beacond-mqtt")
        try await withTeardown({ await cafe.stop() }) {
            let expected = try await CafeRun.expectedSightingIDs()
            let passwordFile = try Self.passwordFile(cafe)

            let (watcher, inbox) = try Self.watch(broker, id: "watcher", "beacond/e2e-station/#")
            #expect(await eventually { watcher.connection == .connected }, "\(watcher.connection)\n\(broker.log)")

            let daemon = try cafe.launch(
                [
                    "--exit-when-drained", "--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--mqtt-username",
                    MosquittoBroker.username, "--mqtt-password-file", passwordFile,
                ], name: "mqtt")
            #expect(await daemon.waitForExit(seconds: 120) == 0, "\(daemon.stderr)")
            let sightingTopic = "beacond/e2e-station/sighting"
            let statusTopic = "beacond/e2e-station/status"
            #expect(
                await eventually { inbox.all.filter { $0.topic == sightingTopic }.count >= expected.count },
                "\(inbox.all.count) messages\n\(daemon.stderr)")
            #expect(await eventually { inbox.all.last { $0.topic == statusTopic }?.text == "offline" })

            // Each sighting once on the broker (a duplicate would be a second message with its id), as the registry got it.
            let published = inbox.all.filter { $0.topic == sightingTopic }
            let ids = published.compactMap { FlatJSON.object($0.text)?["sightingId"] }
            #expect(ids.sorted() == expected.sorted())
            #expect(Set(cafe.registry.sightings.keys) == Set(expected))
            let registryBodies = Dictionary(
                cafe.registry.posts.map { ($0.body["sightingId"] ?? "", $0.raw) },
                uniquingKeysWith: { first, _ in first })
            for message in published {
                let id = FlatJSON.object(message.text)?["sightingId"] ?? ""
                #expect(registryBodies[id] == message.text, "the broker's \(id) is the registry's")
            }
            // Online while it ran, offline (retained) once it stopped.
            let statuses = inbox.all.filter { $0.topic == statusTopic }
            #expect(statuses.first?.text == "online" && statuses.last?.text == "offline")
            let (latecomer, later) = try Self.watch(broker, id: "latecomer", statusTopic)
            defer { latecomer.stop() }  // and held until then: a client let go of stops
            #expect(await eventually { !later.all.isEmpty })
            #expect(later.all.first == MQTTMessage(topic: statusTopic, text: "offline", retain: true))

            // Nothing private in any payload: the password, the registry's key, an advertiser's address.
            let mac = try Regex("[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}")
            for message in inbox.all {
                #expect(!message.text.contains(MosquittoBroker.password) && !message.text.contains("key="))
                #expect(message.text.firstMatch(of: mac) == nil, "\(message.topic): \(message.text)")
            }
            #expect(!daemon.stderr.contains(MosquittoBroker.password))
        }
    }

    /// Home Assistant's side: the discovery configs are there (retained) while the daemon runs, sent again when Home
    /// Assistant says it is back, an event fired for each enter and exit with its bike; health and sensor values
    /// from the daemon's status; and after SIGTERM the retained status is offline.
    @Test func homeAssistantFindsTheStationAgainAfterItsRestartAndGetsAnEventPerVisit() async throws {
        let broker = try MosquittoBroker()
        let cafe = try await CafeRun.start("beacond-ha")
        try await withTeardown({ await cafe.stop() }) {
            let expected = try await CafeRun.expectedSightingIDs()
            let passwordFile = try Self.passwordFile(cafe)
            let (homeAssistant, inbox) = try Self.watch(
                broker, id: "home-assistant", "homeassistant/#", "beacond/e2e-station/#")
            #expect(
                await eventually { homeAssistant.connection == .connected },
                "\(homeAssistant.connection)\n\(broker.log)")

            // Replayed at full speed and then kept running, as a station on a radio is.
            let daemon = try cafe.launch(
                [
                    "--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--mqtt-username", MosquittoBroker.username,
                    "--mqtt-password-file", passwordFile,
                ], name: "ha")
            let configs = { inbox.all.filter { $0.topic.hasPrefix("homeassistant/") && $0.topic.hasSuffix("/config") } }
            #expect(await eventually { configs().count == 7 }, "\(inbox.all.map(\.topic))\n\(daemon.stderr)")
            let events = { inbox.all.filter { $0.topic == "beacond/e2e-station/event" } }
            let visits = try await CafeRun.expectedSightings().filter { $0.kind != "update" }
            #expect(
                await eventually(within: 60) { events().count == visits.count }, "\(events().count) of \(visits.count)")
            let fired = events().compactMap { FlatJSON.object($0.text) }
            #expect(
                fired.map { "\($0["event_type"] ?? "") \($0["bike_id"] ?? "")" }
                    == visits.map { "\($0.kind) \($0.bike)" })
            // The café's bikes are all green Triumph Bonnevilles in the registry's list.
            #expect(
                fired.allSatisfy { $0["make"] == "Triumph" && $0["model"] == "Bonneville" && $0["colour"] == "green" })

            // Home Assistant restarts: its birth message brings every config again.
            try await homeAssistant.publish(
                MQTTMessage(topic: "homeassistant/status", text: "online"), within: .seconds(10))
            #expect(await eventually { configs().count == 14 }, "\(configs().count) configs")
            #expect(Set(configs().map(\.topic)).count == 7)
            // Retained: a client that subscribes now (Home Assistant after a restart of its own) gets all seven at once.
            let (newcomer, retained) = try Self.watch(
                broker, id: "newcomer", "homeassistant/+/beacond_e2e_station/+/config")
            defer { newcomer.stop() }  // and held until then: a client let go of stops
            #expect(await eventually { retained.all.count == 7 })
            #expect(retained.all.allSatisfy { $0.retain })

            // Health and the sensors, from the daemon's own status.
            #expect(await eventually { inbox.all.contains { $0.topic == "beacond/e2e-station/state" } })
            let state = try #require(
                inbox.all.last { $0.topic == "beacond/e2e-station/state" }.flatMap { FlatJSON.object($0.text) })
            let status = try #require(cafe.status())
            #expect(state["missing_bikes"] == "\(status.missingSet.size)" && status.missingSet.size > 0, "\(state)")
            #expect(state["outbox_depth"] != nil && state["adverts_per_second"] != nil, "\(state)")
            #expect(
                inbox.all.last { $0.topic == "beacond/e2e-station/health" }.flatMap { FlatJSON.object($0.text) }?[
                    "state"]
                    != nil)

            #expect(
                await eventually(within: 60) { Set(cafe.registry.sightings.keys) == Set(expected) }, "\(daemon.stderr)")
            daemon.terminate()
            #expect(await daemon.waitForExit(seconds: 30) == 0, "\(daemon.stderr)")
            #expect(await eventually { inbox.all.last { $0.topic == "beacond/e2e-station/status" }?.text == "offline" })
        }
    }

    /// A wrong password: one clear line in the log however often libmosquitto tries again, the registry served all
    /// the same, the broker's line of the outbox holding every sighting with the reason in `status`, and a clean stop.
    @Test func aWrongPasswordIsOneLogLineAndHoldsUpNothingButTheBroker() async throws {
        let broker = try MosquittoBroker()
        let cafe = try await CafeRun.start("beacond-mqtt-refused")
        try await withTeardown({ await cafe.stop() }) {
            let expected = try await CafeRun.expectedSightingIDs()
            let passwordFile = try Self.passwordFile(cafe, "not the password")
            let daemon = try cafe.launch(
                [
                    "--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--mqtt-username", MosquittoBroker.username,
                    "--mqtt-password-file", passwordFile,
                ], name: "refused")
            #expect(
                await eventually(within: 60) { Set(cafe.registry.sightings.keys) == Set(expected) }, "\(daemon.stderr)")
            // libmosquitto has tried again (1 s later) and been refused again.
            #expect(
                await eventually { broker.log.components(separatedBy: "not authorised").count > 2 }, "\(broker.log)")
            // Once the registry's answers are written down: its line empty, the broker's holding every sighting.
            let report = try #require(
                await cafe.waitForStatus(seconds: 30) {
                    $0.outbox.sinks?.first { $0.name == "registry" }?.depth == 0
                })
            let mqtt = try #require(report.outbox.sinks?.first { $0.name == "mqtt" })
            #expect(mqtt.depth == expected.count && mqtt.lastError?.contains("not authorised") == true, "\(mqtt)")
            #expect(
                daemon.stderr.components(separatedBy: "the MQTT broker refuses the station").count == 2,
                "\(daemon.stderr)")
            #expect(!daemon.stderr.contains("not the password"))
            daemon.terminate()
            #expect(await daemon.waitForExit(seconds: 30) == 0, "\(daemon.stderr)")

            // MQTT taken out of the configuration: what only the broker was owed is let go, and the log says how much.
            let without = try cafe.launch(["--exit-when-drained"], name: "without-mqtt")
            #expect(await without.waitForExit(seconds: 60) == 0, "\(without.stderr)")
            #expect(without.stderr.contains("outbox.abandoned=\(expected.count)"), "\(without.stderr)")
        }
    }

    /// The broker goes away for a minute in the middle of a replay and comes back, over mqtts:// with the broker's own
    /// authority (mqtt-ca-file): the registry is served throughout, `status` shows the broker's line growing with its
    /// reason and then empty again, and every sighting reaches the broker, each id once (QoS 1 may repeat the one in
    /// flight when the broker was killed, with its id).
    @Test func aBrokerAwayForAMinuteLosesNothingAndHoldsUpNothing() async throws {
        let broker = try MosquittoBroker()
        let cafe = try await CafeRun.start("beacond-mqtt-outage")
        try await withTeardown({ await cafe.stop() }) {
            let expected = try await CafeRun.expectedSightingIDs()
            let passwordFile = try Self.passwordFile(cafe)
            let sightingTopic = "beacond/e2e-station/sighting"
            let (first, before) = try Self.watch(broker, id: "watcher-before", sightingTopic)
            #expect(await eventually { first.connection == .connected }, "\(first.connection)\n\(broker.log)")

            // The capture's 41 minutes in about 100 s, so that the replay goes on through the outage.
            var arguments = try cafe.arguments()
            arguments[try #require(arguments.firstIndex(of: "--speed")) + 1] = "25"
            let daemon = try DaemonProcess(
                arguments + [
                    "--mqtt", "mqtts://127.0.0.1:\(broker.tlsPort)", "--mqtt-ca-file", broker.caFile, "--mqtt-username",
                    MosquittoBroker.username, "--mqtt-password-file", passwordFile,
                ], logDirectory: cafe.directory.path, name: "outage")
            #expect(
                await eventually(within: 60) { !before.all.isEmpty }, "no sighting reached the broker\n\(daemon.stderr)"
            )

            broker.stop()
            // The first watcher reconnects by itself later; what it got before the outage is what counts from it.
            let heardBefore = before.all.count
            let outage = Date()
            var registryKeptUp = false
            var backlog: StatusReport.SinkState?
            while Date().timeIntervalSince(outage) < 60 {
                if let report = cafe.status(), let sinks = report.outbox.sinks {
                    let mqtt = sinks.first { $0.name == "mqtt" }
                    let registry = sinks.first { $0.name == "registry" }
                    // Sightings made during the outage wait for the broker, and for nothing else.
                    if let mqtt, mqtt.depth > 1, registry?.depth == 0,
                        cafe.registry.sightings.count > before.all.count + 1
                    {
                        registryKeptUp = true
                        backlog = mqtt
                    }
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(registryKeptUp, "the registry's line was held up, or nothing waited for the broker")
            #expect(backlog?.lastError?.contains("MQTT broker") == true, "\(String(describing: backlog))")

            try broker.start()
            let (second, after) = try Self.watch(broker, id: "watcher-after", sightingTopic)
            defer { second.stop() }
            // Every sighting made (the last exit comes a little after the capture's end, when its visit times out) and
            // every line of the outbox empty.
            let recovered = await cafe.waitForStatus(seconds: 120) {
                $0.capture.state == "finished" && $0.sightings.openVisits == 0
                    && $0.outbox.sinks?.allSatisfy { $0.depth == 0 } == true
            }
            #expect(
                recovered != nil,
                "the broker's line did not empty: \(String(describing: cafe.status()?.outbox))\n\(daemon.stderr.suffix(4000))\n\(broker.log.suffix(3000))"
            )
            // A paced replay's visits depend a little on how the engine kept up (its sweeps come with the clock), so the
            // truth here is what the daemon made and the registry has, every one of which the broker must have too.
            let made = Set(cafe.registry.sightings.keys)
            #expect(made.count >= expected.count - 2, "\(made.count) sightings made, \(expected.count) at full speed")
            let published = (before.all.prefix(heardBefore) + after.all).filter { $0.topic == sightingTopic }
            let ids = published.compactMap { FlatJSON.object($0.text)?["sightingId"] }
            #expect(Set(ids) == made, "\(made.subtracting(ids).count) missing")
            #expect(ids.count - Set(ids).count <= 1, "\(ids.count - Set(ids).count) repeated")
            #expect(daemon.stderr.contains("MQTT connected"))
            daemon.terminate()
            #expect(await daemon.waitForExit(seconds: 30) == 0, "\(daemon.stderr)")
            first.stop()
        }
    }
}
