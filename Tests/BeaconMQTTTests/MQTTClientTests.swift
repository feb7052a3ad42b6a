import BeaconMQTT
import BeaconTestSupport
import Foundation
import Testing

/// The MQTT client against a real Mosquitto broker on loopback (`MosquittoBroker`): QoS 1 to the broker's
/// acknowledgement, subscriptions and retained messages, a refused password, TLS that verifies the broker, a broker
/// that goes away and comes back.
@Suite(.timeLimit(.minutes(20))) struct MQTTClientTests {
    func settings(
        _ broker: MosquittoBroker, id: String, password: String = MosquittoBroker.password, tls: Bool = false,
        caFile: String? = nil
    ) -> MQTTSettings {
        MQTTSettings(
            host: "127.0.0.1", port: tls ? broker.tlsPort : broker.port, tls: tls, caFile: caFile,
            username: MosquittoBroker.username, password: password, clientID: id)
    }

    @Test func aMessagePublishedAtQoS1IsAcknowledgedAndDeliveredAndARetainedOneKept() async throws {
        let broker = try MosquittoBroker()
        let inbox = Collected<MQTTMessage>()
        let subscriber = try MQTTClient(settings(broker, id: "subscriber"), onMessage: inbox.add)
        subscriber.subscribe("beacond/cafe-1/#")
        try subscriber.start()
        #expect(await eventually { subscriber.connection == .connected }, "\(subscriber.connection)\n\(broker.log)")
        let publisher = try MQTTClient(settings(broker, id: "publisher"))
        try publisher.start()
        #expect(await eventually { publisher.connection == .connected }, "\(publisher.connection)")
        // Subscribed once the broker has passed a message on: the SUBSCRIBE goes out with the connection, and a probe
        // published before the broker has it reaches nobody, so probes go until one arrives.
        let probe = "beacond/cafe-1/probe"
        for attempt in 0..<50 where inbox.all.isEmpty {
            try await publisher.publish(MQTTMessage(topic: probe, text: "\(attempt)"), within: .seconds(5))
            _ = await eventually(within: 0.2) { !inbox.all.isEmpty }
        }
        try #require(!inbox.all.isEmpty, "no probe arrived")

        let sighting = #"{"sightingId":"s-1","bikeId":"b7"}"#
        try await publisher.publish(MQTTMessage(topic: "beacond/cafe-1/sighting", text: sighting), within: .seconds(5))
        try await publisher.publish(
            MQTTMessage(topic: "beacond/cafe-1/status", text: "online", retain: true), within: .seconds(5))
        let after = { inbox.all.filter { $0.topic != probe } }
        #expect(await eventually { after().count == 2 })
        #expect(
            after() == [
                MQTTMessage(topic: "beacond/cafe-1/sighting", text: sighting),
                MQTTMessage(topic: "beacond/cafe-1/status", text: "online"),
            ], "in order, the sighting and the status as sent, neither retained to a subscriber that was there")

        // A subscriber that comes later gets the retained status, marked retained.
        let later = Collected<MQTTMessage>()
        let latecomer = try MQTTClient(settings(broker, id: "latecomer"), onMessage: later.add)
        latecomer.subscribe("beacond/cafe-1/status")
        try latecomer.start()
        #expect(await eventually { later.all.count == 1 })
        #expect(later.all.first == MQTTMessage(topic: "beacond/cafe-1/status", text: "online", retain: true))
    }

    @Test func aWrongPasswordIsRefusedWithTheBrokersReasonAndNothingIsPublished() async throws {
        let broker = try MosquittoBroker()
        let client = try MQTTClient(settings(broker, id: "wrong", password: "not the password"))
        try client.start()
        #expect(
            await eventually { if case .refused = client.connection { true } else { false } }, "\(client.connection)")
        #expect(client.connection == .refused("Connection Refused: not authorised."))
        await #expect(throws: MQTTError.self) {
            try await client.publish(MQTTMessage(topic: "beacond/x/sighting", text: "{}"), within: .milliseconds(300))
        }
        // Still refused after libmosquitto's next attempt (1 s later): no crash, no other state.
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(client.connection == .refused("Connection Refused: not authorised."))
    }

    @Test func mqttsConnectsToABrokerItsAuthoritySignedAndNotToAnother() async throws {
        let broker = try MosquittoBroker()
        let verified = try MQTTClient(settings(broker, id: "tls", tls: true, caFile: broker.caFile))
        try verified.start()
        #expect(await eventually { verified.connection == .connected }, "\(verified.connection)\n\(broker.log)")
        try await verified.publish(MQTTMessage(topic: "beacond/tls/probe", text: "x"), within: .seconds(5))

        let deceived = try MQTTClient(settings(broker, id: "other-ca", tls: true, caFile: broker.otherCAFile))
        try deceived.start()
        // The client refuses the broker's certificate (the broker logs the client's TLS alert), so it never signs in.
        #expect(await eventually { broker.log.contains("alert unknown ca") }, "\(broker.log)")
        #expect(deceived.connection != .connected && !broker.log.contains("as other-ca"))
        // And it says why, rather than staying "connecting": the handshake failed before the broker could answer.
        #expect(
            await eventually { if case .lost = deceived.connection { true } else { false } }, "\(deceived.connection)")
        await #expect(throws: MQTTError.self) {
            try await deceived.publish(MQTTMessage(topic: "beacond/tls/probe", text: "x"), within: .milliseconds(300))
        }
    }

    /// A client let go without `stop()` disconnects and ends its network thread, as one stopped does; if the thread
    /// held it, it would stay connected, and reconnect to whatever broker later took the port, for the whole process.
    @Test func aClientLetGoWithoutStopDisconnects() async throws {
        let broker = try MosquittoBroker()
        var client: MQTTClient? = try MQTTClient(settings(broker, id: "let-go"))
        try client?.start()
        #expect(await eventually { client?.connection == .connected }, "\(broker.log)")
        client = nil
        #expect(await eventually(within: 10) { broker.log.contains("Client let-go disconnected") }, "\(broker.log)")
    }

    @Test func aBrokerThatGoesAwayIsReconnectedToAndTheSubscriptionRenewed() async throws {
        let broker = try MosquittoBroker()
        let inbox = Collected<MQTTMessage>()
        let client = try MQTTClient(settings(broker, id: "steady"), onMessage: inbox.add)
        client.subscribe("beacond/steady/#")
        try client.start()
        #expect(await eventually { client.connection == .connected }, "\(client.connection)\n\(broker.log)")
        broker.stop()
        #expect(await eventually { if case .lost = client.connection { true } else { false } }, "\(client.connection)")
        try broker.start()
        // libmosquitto's backoff starts at 1 s.
        #expect(await eventually { client.connection == .connected }, "\(client.connection)\n\(broker.log)")
        let publisher = try MQTTClient(settings(broker, id: "after"))
        try publisher.start()
        #expect(await eventually { publisher.connection == .connected }, "\(publisher.connection)\n\(broker.log)")
        // The subscription made before the outage holds after it (the broker kept nothing: a clean session).
        var delivered = false
        for attempt in 0..<50 where !delivered {
            try await publisher.publish(
                MQTTMessage(topic: "beacond/steady/probe", text: "\(attempt)"), within: .seconds(5))
            delivered = await eventually(within: 0.1) { !inbox.all.isEmpty }
        }
        #expect(delivered, "nothing arrived on the renewed subscription")
    }
}
