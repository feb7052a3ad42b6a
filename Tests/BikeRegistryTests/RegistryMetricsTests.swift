import AsyncHTTPClient
import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import HTTPTypes
import Logging
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// Issue 53: the metrics' page (`serve --metrics-listen`), on its own loopback listener. What happened is counted
/// under what it was (sightings, deliveries, limits, the store), the page passes Prometheus's own lint, its label
/// values stay bounded whatever clients send, and it names no owner, token, address, webhook host or beacon.
@Suite(.timeLimit(.minutes(20))) struct RegistryMetricsTests {
    /// A page's samples: name, labels, value.
    static func samples(_ page: String) -> [(name: String, labels: [String: String], value: Double)] {
        page.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let match = line.firstMatch(of: /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/),
                let value = Double(match.output.3)
            else { return nil }
            var labels: [String: String] = [:]
            for pair in (match.output.2 ?? "").matches(of: /([a-z_]+)="((?:[^"\\]|\\.)*)"/) {
                labels[String(pair.output.1)] = String(pair.output.2)
            }
            return (String(match.output.1), labels, value)
        }
    }

    static func value(_ page: String, _ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples(page).first { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }?.value
    }

    @Test(arguments: StoreKind.allCases) func whatHappensIsCountedUnderWhatItWas(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-metrics")
        defer { directory.remove() }
        let registry = try await RegistryHarness(
            store, directory: directory.path, requestsPerMinute: 30, transport: .inProcess, metrics: true)
        let receiver = NotificationReceiver()
        try await receiver.start()
        try await withTeardown({
            await registry.stop()
            await receiver.stop()
        }) {
            let key = try await registry.database.addStation(name: "Ace Café", latitude: 51.5412, longitude: -0.2769)
            let bike = try await registry.registerMissing(minor: 101, webhook: receiver.url("/owner"))
            // Stored, then its repeat, a station clock from 2019, a bad body, an unknown key.
            let sighting = RegistryHarness.sighting(bikeId: bike.id)
            #expect(try await registry.post(sighting, key: key).status == 201)
            #expect(try await registry.post(sighting, key: key).status == 200)
            let early = RegistryHarness.sighting(bikeId: bike.id, firstSeen: "2019-03-01T08:00:00Z")
            #expect(try await registry.post(early, key: key).status == 201)
            #expect(
                try await registry.request(
                    .POST, "/sightings", bearer: key, headers: [("Idempotency-Key", "x")], body: "{}"
                ).status == 400)
            #expect(try await registry.post(RegistryHarness.sighting(bikeId: bike.id), key: "bks_nobody").status == 401)
            // The station's rate passed (30 a minute here).
            var refused = 0
            for _ in 0..<40 where refused == 0 {
                refused += try await registry.request(.GET, "/bikes", bearer: key).status == 429 ? 1 : 0
            }
            #expect(refused == 1)
            // Every message delivered, and the station's refresh written (every 50 ms here), before the scrape.
            let counts = try await registry.settled()
            #expect(counts.delivered >= 1 && counts.owed == 0, "\(counts)")
            for _ in 0..<100 where try await registry.database.stations().first?.lastRefreshAt == nil {
                try await Task.sleep(for: .milliseconds(50))
            }

            let page = try await registry.metricsPage()
            let sightings = "bike_registry_sightings_received_total"
            #expect(Self.value(page, sightings, ["outcome": "stored"]) == 1, "\(page)")
            #expect(Self.value(page, sightings, ["outcome": "duplicate"]) == 1)
            #expect(Self.value(page, sightings, ["outcome": "clock_not_believed"]) == 1)
            #expect(Self.value(page, sightings, ["outcome": "refused"]) == 2)
            #expect(Self.value(page, sightings, ["outcome": "unverified_rotating"]) == 0)
            let webhook = ["channel": "webhook"]
            let delivered = Double(counts.delivered)
            #expect(
                Self.value(page, "bike_registry_notifications_total", webhook.merging(["outcome": "delivered"]) { $1 })
                    == delivered)
            #expect(
                Self.value(page, "bike_registry_notifications_total", webhook.merging(["outcome": "refused"]) { $1 })
                    == 0)
            #expect(
                Self.value(page, "bike_registry_notification_delivery_duration_seconds_count", webhook) == delivered)
            #expect(Self.value(page, "bike_registry_notifications_owed", webhook) == nil, "nothing owed")
            #expect(Self.value(page, "bike_registry_limit_refusals_total", ["limit": "stationRequests"]) == 1)
            #expect(Self.value(page, "bike_registry_limit_refusals_total", ["limit": "registrations"]) == 0)
            #expect(
                Self.value(
                    page, "http_server_request_duration_seconds_count",
                    ["method": "POST", "route": "/sightings", "status": "201"]) == 2)
            #expect(
                Self.value(
                    page, "http_server_request_duration_seconds_count",
                    ["method": "GET", "route": "/bikes", "status": "429"]) == 1)
            #expect(Self.value(page, "bike_registry_bikes") == 1)
            #expect(Self.value(page, "bike_registry_missing_bikes") == 1)
            #expect(Self.value(page, "bike_registry_missing_reports_made_total") == 1)
            #expect(Self.value(page, "bike_registry_ready") == 1)
            #expect(Self.value(page, "bike_registry_stations", ["state": "listening"]) == 1)
            #expect(
                Self.value(page, "bike_registry_station_last_refresh_timestamp_seconds", ["station": "Ace Café"]) != nil
            )
            #expect(
                (Self.value(page, "bike_registry_store_operation_duration_seconds_count", ["operation": "read"]) ?? 0)
                    > 0)
            #expect(Self.value(page, "bike_registry_store_errors_total", ["kind": "unavailable"]) == 0)
            let listed = Self.value(page, "bike_registry_station_list_bytes", ["encoding": "identity"]) ?? 0
            let gzipped = Self.value(page, "bike_registry_station_list_bytes", ["encoding": "gzip"]) ?? 0
            #expect(listed > 0 && gzipped > 0 && gzipped < listed, "\(listed), gzip \(gzipped)")
            #expect(Self.value(page, "bike_registry_build_info", ["version": "test"]) == 1)
            #expect(Self.value(page, "bike_registry_store_primary") == (store == .postgres ? 1 : nil))
            #expect(try PrometheusServer.checkMetrics(page) == "", "promtool check metrics")
        }
    }

    /// 10,000 requests to random paths with random methods: the route label holds the server's routes and one
    /// value for every path none of them takes, and the method label HTTP's methods and one value for the rest.
    @Test func labelValuesStayBoundedWhateverClientsSend() async throws {
        let directory = try TemporaryDirectory("bike-registry-metrics-labels")
        defer { directory.remove() }
        let registry = try await RegistryHarness(
            .sqlite, directory: directory.path, transport: .inProcess, metrics: true)
        try await withTeardown({ await registry.stop() }) {
            var random = SystemRandomNumberGenerator()
            let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEF0123456789-_./")
            let methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "FOO", "PROPFIND", "BREW"]
            let known = ["my", "owner", "bikes", "found", "register", "sightings", "confirm", "readyz", "livez"]
            for index in 0..<10_000 {
                var path = "/"
                if index % 3 == 0 { path += known.randomElement(using: &random)! + "/" }
                for _ in 0..<Int.random(in: 0...24, using: &random) {
                    path.append(alphabet.randomElement(using: &random)!)
                }
                let method = HTTPMethod(rawValue: methods.randomElement(using: &random)!)
                _ = try await registry.request(method, path)
            }
            let page = try await registry.metricsPage()
            let requests = Self.samples(page).filter { $0.name == "http_server_request_duration_seconds_count" }
            let routes = Set(requests.compactMap { $0.labels["route"] })
            // The routes' templates as the router names them (`my/:id` is `/my/{id}`), from the parts a server is
            // made of (their delivery client shut down, as the server's services would).
            let parts = RegistryParts(
                database: registry.database, configuration: RegistryServerConfiguration(),
                logger: .init(label: "routes"))
            try await parts.deliveries.client.shutdown()
            let table = Set(
                parts.routes.routes.map { route in
                    "/"
                        + route.path.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : $0 }
                        .joined(separator: "/")
                })
            #expect(routes.contains(RegistryMetrics.unmatchedRoute))
            #expect(routes.subtracting(table).subtracting([RegistryMetrics.unmatchedRoute]).isEmpty, "\(routes)")
            #expect(routes.count <= table.count + 1)
            let seenMethods = Set(requests.compactMap { $0.labels["method"] })
            #expect(seenMethods.isSubset(of: ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "_OTHER"]))
            #expect(seenMethods.contains("_OTHER"), "\(seenMethods)")
            #expect(requests.map(\.value).reduce(0, +) >= 10_000)
            #expect(Set(requests.compactMap { $0.labels["status"] }).allSatisfy { Int($0) != nil })
        }
    }

    /// Owners with e-mail addresses, webhooks and ntfy topics on hosts of their own, their tokens and secrets, their
    /// beacons' minors: none of it on the page, nor in any label name but the page's own.
    @Test func thePageNamesNoOwnerTokenAddressHostOrBeacon() async throws {
        let directory = try TemporaryDirectory("bike-registry-metrics-secrets")
        defer { directory.remove() }
        let registry = try await RegistryHarness(
            .sqlite, directory: directory.path, transport: .inProcess, metrics: true)
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace Café", latitude: 51.5412, longitude: -0.2769)
            var secrets = [key, "21EECF71", "21eecf71"]
            for minor in [48_611, 53_297, 61_403] {
                let bike = try await registry.register(minor: minor)
                let host = "owner-host-\(minor).example"
                let patch =
                    #"{"missing":true,"notify":{"webhook":"https://\#(host)/hook","ntfy":"https://ntfy-\#(host)/topic-\#(minor)"}}"#
                #expect(
                    try await registry.request(.PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: patch)
                        .status == 200)
                let secret = try #require(bike.answer.object["webhookSecret"] as? String)
                secrets += [bike.id, bike.token, secret, host, "topic-\(minor)", String(minor)]
                #expect(
                    try await registry.post(RegistryHarness.sighting(bikeId: bike.id, minor: minor), key: key).status
                        == 201)
                // Its page and a finder's look-up by the beacon, so those routes are on the page too.
                _ = try await registry.request(.GET, "/my/\(bike.id)/\(bike.token)")
                _ = try await registry.request(.GET, "/found/21EECF71-D5C7-4A00-9B90-27C94B5146EA/1/\(minor)")
            }
            let page = try await registry.metricsPage()
            for secret in secrets { #expect(!page.contains(secret), "\(secret) on the page") }
            let labels = Set(page.matches(of: /([a-z_]+)="/).map { String($0.output.1) })
            #expect(
                labels.isSubset(of: [
                    "version", "method", "route", "status", "outcome", "channel", "limit", "operation", "kind", "host",
                    "encoding",
                    "station", "state", "le",
                ]), "\(labels)")
        }
    }

    /// The listener serves a few connections at once, and lets an idle one go (2 s here, 30 s by default): clients
    /// that open all its places and say nothing delay a scrape by that long, not for ever.
    @Test func idleClientsHoldTheListenerNoLongerThanItsIdleTimeout() async throws {
        let directory = try TemporaryDirectory("bike-registry-metrics-idle")
        defer { directory.remove() }
        let registry = try await RegistryHarness(.sqlite, directory: directory.path, metrics: true)
        try await withTeardown({ await registry.stop() }) {
            let port = try #require(registry.metricsPort)
            let idle = try (0..<(MetricsListener.connections + 4)).map { _ in try RawConnection(port: port) }
            let started = ContinuousClock.now
            let page = try await registry.metricsPage()
            #expect(page.contains("bike_registry_build_info"))
            let waited = ContinuousClock.now - started
            #expect(waited > .milliseconds(1_500), "its places were all taken: the scrape waited its turn")
            #expect(waited < .seconds(10), "answered once the idle ones were let go")
            #expect(await idle[0].closed(within: 5), "an idle connection is closed")
        }
    }

    /// The listener serves GET /metrics and nothing else, and is never the public one.
    @Test func theListenerServesTheMetricsAlone() async throws {
        let directory = try TemporaryDirectory("bike-registry-metrics-listener")
        defer { directory.remove() }
        let registry = try await RegistryHarness(.sqlite, directory: directory.path, metrics: true)
        try await withTeardown({ await registry.stop() }) {
            let port = try #require(registry.metricsPort)
            let listener = RegistryClient(baseURL: "http://127.0.0.1:\(port)")
            #expect(try await listener.request(.GET, "/metrics").status == 200)
            let other = try await listener.request(.GET, "/bikes")
            #expect(other.status == 404 && other.body.contains("GET /metrics"))
            #expect(try await listener.request(.POST, "/metrics").status == 405)
            #expect(try await registry.request(.GET, "/metrics").status == 404, "not on the public listener")
            #expect(port != registry.port)
        }
    }
}
