import BeaconDaemon
import BeaconMQTT
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// `beacond run` with MQTT configured, against a real Mosquitto broker on loopback and the registry: every sighting
/// of the café capture reaches both, each once, as the same JSON; the station says online and, once it has stopped,
/// offline; no payload carries a password, a key or an advertiser's address.
@Suite struct MQTTDaemonTests {
    final class Inbox: @unchecked Sendable {
        private let lock = NSLock()
        private var messages: [MQTTMessage] = []
        func add(_ message: MQTTMessage) { lock.withLock { messages.append(message) } }
        var all: [MQTTMessage] { lock.withLock { messages } }
    }

    func until(_ seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    @Test func everySightingReachesTheBrokerAndTheRegistryOnceAndTheStationEndsOffline() async throws {
        let broker = try MosquittoBroker()
        let cafe = try await CafeRun.start("beacond-mqtt")
        defer { cafe.stop() }
        let expected = try await CafeRun.expectedSightingIDs()
        let passwordFile = cafe.directory.file("mqtt-password")
        try "\(MosquittoBroker.password)\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)

        let inbox = Inbox()
        let watcher = try MQTTClient(
            MQTTSettings(
                host: "127.0.0.1", port: broker.port, username: MosquittoBroker.username,
                password: MosquittoBroker.password, clientID: "watcher"),
            onMessage: inbox.add)
        watcher.subscribe("beacond/e2e-station/#")
        try watcher.start()
        #expect(await until { watcher.connection == .connected })

        let daemon = try cafe.launch(
            [
                "--exit-when-drained", "--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--mqtt-username",
                MosquittoBroker.username, "--mqtt-password-file", passwordFile,
            ], name: "mqtt")
        #expect(await daemon.waitForExit(seconds: 120) == 0, "\(daemon.stderr)")
        let sightingTopic = "beacond/e2e-station/sighting"
        let statusTopic = "beacond/e2e-station/status"
        #expect(
            await until { inbox.all.filter { $0.topic == sightingTopic }.count >= expected.count },
            "\(inbox.all.count) messages\n\(daemon.stderr)")
        #expect(await until { inbox.all.last { $0.topic == statusTopic }?.text == "offline" })

        // Each sighting once on the broker (a duplicate would be a second message with its id), as the registry got it.
        let published = inbox.all.filter { $0.topic == sightingTopic }
        let ids = published.compactMap { FlatJSON.object($0.text)?["sightingId"] }
        #expect(ids.sorted() == expected.sorted())
        #expect(Set(cafe.registry.sightings.keys) == Set(expected))
        let registryBodies = Dictionary(
            cafe.registry.posts.map { ($0.body["sightingId"] ?? "", $0.raw) }, uniquingKeysWith: { first, _ in first })
        for message in published {
            let id = FlatJSON.object(message.text)?["sightingId"] ?? ""
            #expect(registryBodies[id] == message.text, "the broker's \(id) is the registry's")
        }
        // Online while it ran, offline (retained) once it stopped.
        let statuses = inbox.all.filter { $0.topic == statusTopic }
        #expect(statuses.first?.text == "online" && statuses.last?.text == "offline")
        let later = Inbox()
        let latecomer = try MQTTClient(
            MQTTSettings(
                host: "127.0.0.1", port: broker.port, username: MosquittoBroker.username,
                password: MosquittoBroker.password, clientID: "latecomer"),
            onMessage: later.add)
        latecomer.subscribe(statusTopic)
        try latecomer.start()
        #expect(await until { !later.all.isEmpty })
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
