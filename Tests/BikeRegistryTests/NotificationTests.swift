import BeaconTestSupport
import BikeRegistryCore
import Crypto
import Foundation
import NIOHTTP1
import Testing

@testable import BikeRegistryServer
@testable import BikeRegistryStore

/// What an owner is told: once per visit, seen then left, signed as Standard Webhooks says; retried with the same
/// webhook-id; a 410 ends it; ntfy gets its headers.
@Suite(.timeLimit(.minutes(20))) struct NotificationTests {
    /// The example in the Standard Webhooks specification (also computed with Python's hmac, outside this code).
    @Test func theSignatureMatchesTheSpecificationsExample() {
        let signature = WebhookSignature.sign(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: #"{"test": 2432232314}"#,
            secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(WebhookSignature.sign(id: "a", timestamp: 1, body: "", secret: "no-prefix") == nil)
    }

    /// Checks a received webhook as a receiver would, with its own HMAC.
    static func verify(_ received: NotificationReceiver.Received, secret: String) -> Bool {
        guard let id = received.headers["webhook-id"], let timestamp = received.headers["webhook-timestamp"],
            let signature = received.headers["webhook-signature"], signature.hasPrefix("v1,"),
            let key = Data(base64Encoded: String(secret.dropFirst(6)))
        else { return false }
        let expected = HMAC<SHA256>.authenticationCode(
            for: Data("\(id).\(timestamp).\(received.body)".utf8), using: SymmetricKey(data: key))
        return Data(base64Encoded: String(signature.dropFirst(3))) == Data(expected)
    }

    @Test(arguments: StoreKind.allCases) func aVisitIsSeenOnceAndLeftOnceHoweverItsSightingsCome(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let receiver = NotificationReceiver()
        try await receiver.start()
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess)
        try await withTeardown({
            await registry.stop()
            await receiver.stop()
        }) {
            let key = try await registry.database.addStation(name: "Ace Café", latitude: 51.5412, longitude: -0.2769)
            let bike = try await registry.registerMissing(minor: 101, webhook: receiver.url("/hook"))
            let secret = bike.secret

            let first = "2024-06-01T08:00:30.325272Z"
            let enter = RegistryHarness.sighting(bikeId: bike.id, kind: "enter", firstSeen: first)
            #expect(try await registry.post(enter, key: key).status == 201)
            #expect(try await registry.post(enter, key: key).status == 200)
            #expect(
                try await registry.post(
                    RegistryHarness.sighting(
                        bikeId: bike.id, kind: "update", firstSeen: first, lastSeen: "2024-06-01T08:10:31Z"), key: key
                ).status == 201)
            #expect(
                try await registry.post(
                    RegistryHarness.sighting(
                        bikeId: bike.id, kind: "exit", firstSeen: first, lastSeen: "2024-06-01T08:26:59.034875Z"),
                    key: key
                ).status == 201)
            // A second visit whose enter was lost: its exit tells both.
            let second = "2024-06-01T09:00:00Z"
            #expect(
                try await registry.post(
                    RegistryHarness.sighting(
                        bikeId: bike.id, kind: "exit", firstSeen: second, lastSeen: "2024-06-01T09:05:00Z"), key: key
                ).status == 201)

            // Nothing owed: every message the posts made is delivered, so received, and none is still to come.
            let counts = try await registry.settled()
            #expect(counts.owed == 0 && counts.delivered == 4, "\(counts)")
            let received = receiver.received
            #expect(
                receiver.received.count == 4,
                "exactly seen and left for each of two visits: \(receiver.received.map(\.body))")
            let bodies = try received.map {
                try #require(JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any])
            }
            for (message, body) in zip(received, bodies) {
                #expect(Self.verify(message, secret: secret), "signature of \(message.body)")
                let data = try #require(body["data"] as? [String: Any])
                #expect(data["bikeId"] as? String == bike.id)
                let station = try #require(data["station"] as? [String: Any])
                #expect(
                    station["name"] as? String == "Ace Café" && station["latitude"] as? Double == 51.5412
                        && station["longitude"] as? Double == -0.2769)
                #expect(data["proximity"] as? String == "near")
                #expect(body["timestamp"] is String)
            }
            func data(_ index: Int) -> [String: Any] { bodies[index]["data"] as? [String: Any] ?? [:] }
            let types = bodies.map { $0["type"] as? String ?? "" }
            #expect(types.sorted() == ["bike.left", "bike.left", "bike.seen", "bike.seen"])
            let visits = Dictionary(grouping: bodies.indices, by: { data($0)["visitId"] as? String ?? "" })
            #expect(
                visits.count == 2 && visits.values.allSatisfy { $0.count == 2 },
                "a visit's seen and left share its id; visits differ")
            let seenFirst = try #require(
                bodies.indices.first {
                    types[$0] == "bike.seen"
                        && (data($0)["seenAt"] as? String)?.hasPrefix("2024-06-01T08:00:30.325") == true
                })
            let leftFirst = try #require(
                bodies.indices.first {
                    types[$0] == "bike.left" && data($0)["visitId"] as? String == data(seenFirst)["visitId"] as? String
                })
            #expect(
                (data(leftFirst)["seenAt"] as? String)?.hasPrefix("2024-06-01T08:26:59.03") == true,
                "left says when it was last heard")
            #expect(Set(received.map { $0.headers["webhook-id"] ?? "" }).count == 4)
        }
    }

    @Test(arguments: StoreKind.allCases) func failuresAreRetriedUnderTheSameIdAndAGoneEndpointIsDisabled(
        store: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let receiver = NotificationReceiver()
        try await receiver.start()
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess)
        try await withTeardown({
            await registry.stop()
            await receiver.stop()
        }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let bike = try await registry.registerMissing(minor: 101, webhook: receiver.url("/hook"))
            receiver.answerNext([500, 429])
            #expect(try await registry.post(RegistryHarness.sighting(bikeId: bike.id), key: key).status == 201)
            let attempts = await receiver.waitFor(3, seconds: 20)
            #expect(attempts.count == 3)
            #expect(Set(attempts.map { $0.headers["webhook-id"] ?? "" }).count == 1, "one webhook-id on every attempt")
            #expect(Set(attempts.map(\.body)).count == 1, "the same body on every attempt")

            // 410: the target is dropped and nothing more is sent to it.
            receiver.answerNext([410])
            #expect(
                try await registry.post(
                    RegistryHarness.sighting(bikeId: bike.id, kind: "exit", lastSeen: "2024-06-01T08:30:00Z"), key: key
                ).status == 201)
            // Given up at the 410, so owed no more: nothing else is sent to the dropped target.
            _ = await receiver.waitFor(4)
            #expect(try await registry.settled().owed == 0)
            #expect(receiver.received.count == 4)
            let shown = try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: bike.token)
            #expect((shown.object["notify"] as? [String: Any])?["webhook"] is NSNull, "\(shown.body)")
            let counts = try await registry.database.notificationCounts()
            #expect(counts.owed == 0 && counts.delivered == 1 && counts.abandoned == 1)
        }
    }

    @Test(arguments: StoreKind.allCases) func ntfyGetsATitleTagsPriorityAndAMapLink(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let receiver = NotificationReceiver()
        try await receiver.start()
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess)
        try await withTeardown({
            await registry.stop()
            await receiver.stop()
        }) {
            let key = try await registry.database.addStation(name: "Ace Café", latitude: 51.5412, longitude: -0.2769)
            let bike = try await registry.register(minor: 101)
            #expect(
                try await registry.request(
                    .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token,
                    body: #"{"missing":true,"notify":{"ntfy":"\#(receiver.url("/my-bike-topic"))"}}"#
                ).status == 200)
            #expect(try await registry.post(RegistryHarness.sighting(bikeId: bike.id), key: key).status == 201)
            let message = try #require(await receiver.waitFor(1).first)
            #expect(message.path == "/my-bike-topic")
            #expect(
                message.headers["title"] == "=?UTF-8?B?" + Data("Bike seen at Ace Café".utf8).base64EncodedString()
                    + "?=")
            #expect(message.headers["priority"] == "high" && message.headers["tags"] == "motorcycle,warning")
            #expect(message.headers["click"]?.contains("mlat=51.5412&mlon=-0.2769") == true)
            #expect(
                message.body.contains("Ace Café") && message.body.contains("2024-06-01 08:00:30 UTC")
                    && message.body.contains("near"), "\(message.body)")
            #expect(message.headers["webhook-signature"] == nil)
        }
    }
}

/// The message's body is written by hand (JSONWriter): it must read as JSONEncoder would have written it, escapes
/// and all, and decode back to what was sent.
@Suite(.timeLimit(.minutes(20))) struct PayloadWritingTests {
    @Test(arguments: ["Ace Café", #"The "Quote" \ Back"#, "Tab\tNew\nline\u{01}", "東京 🏍", ""])
    func theHandWrittenBodyIsJSONEncodersOwn(name: String) throws {
        let station = Station(
            id: 1, name: name, keyHash: "", latitude: 51.5412, longitude: -0.2769, createdAt: Date(), revokedAt: nil,
            lastRefreshAt: nil,
            lastSightingAt: nil, userAgent: nil)
        let payload = NotificationPayload(
            type: .seen, timestamp: Date(timeIntervalSince1970: 1_717_228_830.325_272), bikeId: "bike_\"x\"",
            station: station,
            seenAt: Date(timeIntervalSince1970: 1_717_228_830.999_2), proximity: "near", visitId: "visit_1")
        let written = try payload.json()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        #expect(written == String(decoding: try encoder.encode(payload), as: UTF8.self))
        #expect(
            try NotificationPayload.decode(written)
                == NotificationPayload.decode(String(decoding: try encoder.encode(payload), as: UTF8.self)))
        #expect(written.contains(#""seenAt":"2024-06-01T08:00:30.999Z""#), "milliseconds: \(written)")
    }

    @Test func aTimeReadToTheMillisecondIsWrittenBackAsItWas() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            // Whole seconds from Foundation, which writes those exactly, and the milliseconds put in by hand.
            let seconds = Double(Int64.random(in: -2_000_000_000...4_000_000_000, using: &generator))
            let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
            let text = whole.dropLast() + String(format: ".%03dZ", Int.random(in: 0...999, using: &generator))
            #expect(ISOTime.format(try #require(ISOTime.parse(String(text)))) == text)
        }
        #expect(ISOTime.format(ISOTime.parse("2024-06-01T08:00:30.325272Z")!) == "2024-06-01T08:00:30.325Z")
        #expect(ISOTime.format(ISOTime.parse("2024-06-01T08:00:30.9996+01:00")!) == "2024-06-01T07:00:31.000Z")
    }
}
