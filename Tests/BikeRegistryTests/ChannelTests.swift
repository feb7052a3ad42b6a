import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// Notification channels as a table (issue 51): what a refusal does belongs to the channel refused, and a channel is
/// one type and one entry in `NotificationChannels`.
@Suite(.timeLimit(.minutes(20))) struct ChannelTests {
    /// A 410 on one HTTP channel removes that channel's target and no other: the webhook's 410 leaves the ntfy topic
    /// (before the table, any 410 but a webhook's cleared the bike's ntfy URL), and the topic's 410 the webhook.
    @Test(arguments: StoreKind.allCases, ["webhook", "ntfy"]) func aGoneTargetIsRemovedAndTheOthersStay(
        store: StoreKind, gone: String
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry-channels")
        defer { directory.remove() }
        let refusing = NotificationReceiver()
        let keeping = NotificationReceiver()
        try await refusing.start()
        try await keeping.start()
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess)
        try await withTeardown({
            await registry.stop()
            await refusing.stop()
            await keeping.stop()
        }) {
            let kept = gone == "webhook" ? "ntfy" : "webhook"
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let bike = try await registry.register(minor: 101)
            let patch =
                #"{"missing":true,"notify":{"\#(gone)":"\#(refusing.url("/gone"))","\#(kept)":"\#(keeping.url("/kept"))"}}"#
            #expect(
                try await registry.request(.PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: patch).status
                    == 200)
            refusing.answerNext([410])
            #expect(try await registry.post(RegistryHarness.sighting(bikeId: bike.id), key: key).status == 201)
            #expect(await refusing.waitFor(1).count == 1)
            #expect(await keeping.waitFor(1).count == 1)
            #expect(try await registry.settled().owed == 0)
            let shown = try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: bike.token)
            let notify = shown.object["notify"] as? [String: Any] ?? [:]
            #expect(notify[gone] is NSNull, "\(shown.body)")
            #expect(notify[kept] as? String == keeping.url("/kept"), "the other channel's target stays: \(shown.body)")
            // The visit's exit goes to the target that stayed, and nothing more to the one that went.
            #expect(
                try await registry.post(
                    RegistryHarness.sighting(bikeId: bike.id, kind: "exit", lastSeen: "2024-06-01T08:30:00Z"), key: key
                ).status == 201)
            #expect(await keeping.waitFor(2).count == 2)
            #expect(try await registry.settled().owed == 0)
            #expect(refusing.received.count == 1)
        }
    }

    /// A channel added from the tests alone, one type and one entry in the list: the API saves its target under its
    /// field and shows it, a missing bike's sighting is owed on it and delivered by it once, the owner's page lists
    /// its field, and its own refusal for good (a 410 of its kind) removes its target and leaves the ntfy topic.
    @Test(arguments: StoreKind.allCases) func aChannelIsOneTypeAndOneEntry(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-added-channel")
        defer { directory.remove() }
        let pager = PagerChannel()
        let topic = NotificationReceiver()
        try await topic.start()
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess) {
            configuration in
            configuration.channels = { http, mail in
                NotificationChannels(all: NotificationChannels.standard(http: http, mail: mail).all + [pager])
            }
        }
        try await withTeardown({
            await registry.stop()
            await topic.stop()
        }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let bike = try await registry.register(minor: 101)
            let refused = try await registry.request(
                .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: #"{"notify":{"pager":"not a number"}}"#)
            #expect(refused.status == 400 && refused.body.contains("a pager number is digits"), "\(refused.body)")
            let saved = try await registry.request(
                .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token,
                body: #"{"missing":true,"notify":{"pager":"07700900123","ntfy":"\#(topic.url("/topic"))"}}"#)
            #expect((saved.object["notify"] as? [String: Any])?["pager"] as? String == "07700900123", "\(saved.body)")
            #expect(try await registry.post(RegistryHarness.sighting(bikeId: bike.id), key: key).status == 201)
            #expect(try await registry.settled().owed == 0)
            let paged = pager.paged
            #expect(paged.count == 1 && paged.first?.target == "07700900123" && paged.first?.channel == pager.id)
            #expect(paged.first?.payload.contains(#""type":"bike.seen""#) == true)
            let page = try await registry.request(.GET, "/my/\(bike.id)/\(bike.token)")
            #expect(page.body.contains(#"<input id="pager" name="pager" type="url" value="07700900123""#))

            pager.goneFromNow()
            #expect(
                try await registry.post(
                    RegistryHarness.sighting(bikeId: bike.id, kind: "exit", lastSeen: "2024-06-01T08:30:00Z"), key: key
                ).status == 201)
            #expect(try await registry.settled().owed == 0)
            let shown = try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: bike.token)
            let notify = shown.object["notify"] as? [String: Any] ?? [:]
            #expect(notify["pager"] is NSNull, "its own refusal removed its target: \(shown.body)")
            #expect(notify["ntfy"] as? String == topic.url("/topic"), "and left the topic: \(shown.body)")
            #expect(await topic.waitFor(2).count == 2, "seen and left, on the topic")
        }
    }
}

/// The channel the test adds: a pager number, its "sending" kept in memory (the test's own channel, as the sink
/// `AddedSinkTests` adds is the test's own).
final class PagerChannel: NotificationChannelType {
    private let sent = NIOLockedValueBox<[PendingNotification]>([])
    private let gone = NIOLockedValueBox(false)
    var paged: [PendingNotification] { sent.withLockedValue { $0 } }
    /// Every attempt from now on answers as a number that no longer exists.
    func goneFromNow() { gone.withLockedValue { $0 = true } }

    var id: NotificationChannel { NotificationChannel("pager") }
    var field: String { "pager" }
    var label: String { "Pager number" }
    var whenRefused: TargetRefusal { .remove }

    func parsed(_ typed: String) -> Result<String, FieldError> {
        typed.allSatisfy(\.isNumber) ? .success(typed) : .failure(FieldError("a pager number is digits"))
    }

    func refusal(for target: String) async -> String? { nil }

    func attempt(_ notification: PendingNotification) async -> NotificationSender.Outcome {
        if gone.withLockedValue({ $0 }) { return .gone }
        sent.withLockedValue { $0.append(notification) }
        return .delivered
    }

    func shown(_ notification: PendingNotification, payload: NotificationPayload, bike: Bike) -> String {
        notification.payload
    }
}
