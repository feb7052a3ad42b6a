import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import GRDB
import NIOHTTP1
import Testing

/// Issue 53 on the whole system: a real Prometheus (Debian's) scrapes `bike-registry serve --metrics-listen` every
/// second with the package's alerting rules loaded (release/prometheus/bike-registry-alerts.yml), while the real
/// `beacond` replays the café afternoon against it and the owners are told. What the test causes, the rules see: a
/// second café whose station listened two hours ago and not since is named by `BikeRegistryStationSilent`, and it
/// alone; a relay refusing the only e-mail address makes `BikeRegistryChannelFailing` hold for e-mail and not for
/// webhooks, whose one gone endpoint (410) is counted refused beside the others' deliveries. The page passes
/// `promtool check metrics`.
///
/// Its processes (a registry, a station, a relay, Prometheus) are a load test's: it runs in the plain step, not
/// under a sanitizer (BEACOND_LOAD_TESTS=off), where RegistryMetricsTests count the same things in process.
@Suite(.disabled(if: LoadTests.areOff), .timeLimit(.minutes(20)))
struct RegistryPrometheusTests {
    static let rules = Fixtures.repositoryRoot.appendingPathComponent(
        "release/prometheus/bike-registry-alerts.yml"
    ).path

    @Test func prometheusSeesTheCafeAfternoonAndTheRulesNameWhatWentWrong() async throws {
        let directory = try TemporaryDirectory("bike-registry-prometheus")
        defer { directory.remove() }
        let relay = try MailRelay()
        let testDatabase = try await TestDatabase.make(.sqlite, in: directory.path)
        let database = testDatabase.location
        let password = directory.file("smtp-password")
        try "\(MailRelay.password)\n".write(toFile: password, atomically: true, encoding: .utf8)
        let metricsPort = try LoopbackPort.free()
        let process = try await RegistryProcess.start(
            database: database, in: directory,
            arguments: [
                "--metrics-listen", "127.0.0.1:\(metricsPort)", "--public-url", "https://bikes.example.org", "--smtp",
                relay.url, "--smtp-user", MailRelay.user, "--smtp-password-file", password, "--smtp-ca-file",
                relay.caFile, "--mail-from", "FindMyBike <noreply@bikes.example.org>",
            ])
        let registry = process.client
        // The Bell Inn's station listened two hours ago, and has not since.
        _ = try await RegistryProcess.addStation("Bell Inn", database: database)
        let twoHoursAgo = Date().addingTimeInterval(-7_200).timeIntervalSince1970
        try await testDatabase.execute([
            "UPDATE station SET lastRefreshAt = \(twoHoursAgo) WHERE name = 'Bell Inn'"
        ])
        let prometheus = try await PrometheusServer(
            scraping: metricsPort, job: "bike-registry", rules: [Self.rules])
        let receiver = NotificationReceiver()
        try await receiver.start()
        let gone = NotificationReceiver()
        try await gone.start()
        gone.answerNext(Array(repeating: 410, count: 100))
        try await withTeardown({
            await receiver.stop()
            await gone.stop()
            process.server.terminate()
            _ = await process.server.waitForExit(seconds: 10)
        }) {
            // Scraped before anything happens, so that every count is seen to rise (a ready Prometheus took ten
            // seconds to scrape first, here).
            var scraped: Double?
            for _ in 0..<300 where scraped != 0 {
                try await Task.sleep(for: .milliseconds(100))
                scraped = try await prometheus.value("sum(bike_registry_sightings_received_total)")
            }
            try #require(scraped == 0, "not scraped: \(prometheus.log)")
            // The café's bikes reported missing, their owners on webhooks; 105's endpoint is gone, and 106's owner
            // gives an e-mail address the relay refuses.
            for minor in [101, 102, 103, 105, 106, 107, 108] {
                let bike = try await registry.register(minor: minor)
                let webhook = minor == 105 ? gone.url("/owner-105") : receiver.url("/owner-\(minor)")
                let email = minor == 106 ? #","email":"refuse-106@example.com""# : ""
                let patch = #"{"missing":true,"notify":{"webhook":"\#(webhook)"\#(email)}}"#
                #expect(
                    try await registry.request(.PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: patch)
                        .status == 200)
            }
            let station = try CafeStation.replay(to: registry.baseURL, key: process.stationKey, in: directory)
            #expect(await station.waitForExit(seconds: 120) == 0, "beacond:\n\(station.stderr)")
            let counts = try await testDatabase.settled()
            #expect(counts.owed == 0, "\(counts)")
            let stored = try await DatabaseQueue(path: database).read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sighting") ?? 0
            }

            // What Prometheus scraped, once it has scraped the settled registry (a scrape a second; what the page
            // reads from the database, a second later at most).
            let sightings = "sum(bike_registry_sightings_received_total{job=\"bike-registry\",outcome=\"stored\"})"
            let delivered = "sum(bike_registry_notifications_total{channel=\"webhook\",outcome=\"delivered\"})"
            let missing = "bike_registry_missing_bikes{job=\"bike-registry\"}"
            let expected: [Double?] = [Double(stored), Double(receiver.received.count), 7]
            var seen: [Double?] = []
            for _ in 0..<100 where seen != expected {
                try await Task.sleep(for: .milliseconds(200))
                seen = [
                    try await prometheus.value(sightings), try await prometheus.value(delivered),
                    try await prometheus.value(missing),
                ]
            }
            #expect(seen == expected && stored > 0, "\(seen) of \(expected)\n\(prometheus.log)")
            #expect(receiver.received.count > 0)
            #expect(try await prometheus.value("up{job=\"bike-registry\"}") == 1)
            #expect(try await prometheus.value("bike_registry_ready") == 1)
            #expect(
                try await prometheus.value(
                    "sum(bike_registry_notifications_total{channel=\"webhook\",outcome=\"refused\"})")
                    == 1, "the gone endpoint, once: its target is removed")
            #expect(
                (try await prometheus.value(
                    "sum(bike_registry_notifications_total{channel=\"email\",outcome=\"refused\"})") ?? 0) >= 1)

            // The rules, as Prometheus evaluates them every second.
            var alerts = try await prometheus.alerts()
            for _ in 0..<100 where !alerts.contains(where: { $0.labels["alertname"] == "BikeRegistryChannelFailing" }) {
                try await Task.sleep(for: .milliseconds(200))
                alerts = try await prometheus.alerts()
            }
            let silent = alerts.filter { $0.labels["alertname"] == "BikeRegistryStationSilent" }
            #expect(silent.map { $0.labels["station"] } == ["Bell Inn"] && silent.first?.state == "firing", "\(alerts)")
            let failing = alerts.filter { $0.labels["alertname"] == "BikeRegistryChannelFailing" }
            let attempts = try await prometheus.vector(
                "sum by (channel, outcome) (increase(bike_registry_notifications_total[5m]))")

            #expect(failing.map { $0.labels["channel"] } == ["email"], "\(alerts)\n\(attempts)")
            let others = Set(alerts.compactMap { $0.labels["alertname"] })
                .subtracting(["BikeRegistryStationSilent", "BikeRegistryChannelFailing"])
            #expect(others.isEmpty, "nothing else caused, nothing else said: \(alerts)")

            let page = try await LoopbackHTTP.request("http://127.0.0.1:\(metricsPort)/metrics").body
            #expect(try PrometheusServer.checkMetrics(page) == "", "promtool check metrics")
        }
    }
}
