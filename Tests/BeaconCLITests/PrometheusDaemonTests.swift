import BeaconControl
import BeaconDaemon
import BeaconTestSupport
import Foundation
import Testing

/// `metrics-listen`: a real Prometheus (Debian's) scrapes the daemon on loopback while it replays the café capture,
/// and its HTTP API shows `beacond_adverts_received_total` rising. The page itself passes `promtool check metrics`
/// (Prometheus's own lint of names, types and units) and names no bike and no advertiser.
@Suite(.timeLimit(.minutes(20))) struct PrometheusDaemonTests {
    @Test func prometheusSeesAdvertsRiseDuringAReplay() async throws {
        let metricsPort = try LoopbackPort.free()
        let prometheus = try await PrometheusServer(scraping: metricsPort)
        let cafe = try await CafeRun.start("beacond-prometheus")
        try await withTeardown({ await cafe.stop() }) {
            let began = Date()
            // The capture's 41 minutes in about 10 s, so that one-second scrapes see it under way.
            var arguments = try cafe.arguments()
            arguments[try #require(arguments.firstIndex(of: "--speed")) + 1] = "250"
            let daemon = try DaemonProcess(
                arguments + ["--metrics-listen", "127.0.0.1:\(metricsPort)"], logDirectory: cafe.directory.path,
                name: "metrics")

            let page = try #require(
                await Self.metricsPage(port: metricsPort, of: daemon),
                "no /metrics (running: \(daemon.isRunning))\n\(daemon.stderr)")
            let finished = await cafe.waitForStatus(seconds: 60) { $0.capture.state == "finished" }
            let total = try #require(finished?.capture.adverts, "the replay did not finish\n\(daemon.stderr)")
            // Until Prometheus has scraped the final count (a scrape a second).
            let query = "beacond_adverts_received_total{job=\"beacond\"}"
            var samples = try await prometheus.range(query, from: began, to: Date())
            for _ in 0..<100 where samples.last?.1 != Double(total) {
                try await Task.sleep(for: .milliseconds(100))
                samples = try await prometheus.range(query, from: began, to: Date())
            }
            let values = samples.map(\.1)
            #expect(values.count >= 5, "\(samples)\n\(prometheus.log)")
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "a counter never falls: \(values)")
            #expect(
                Set(values.filter { $0 > 0 && $0 < Double(total) }).count >= 3,
                "seen rising during the replay: \(values)")
            #expect(values.last == Double(total), "\(values) against \(total) in status")
            #expect(try await prometheus.value("up{job=\"beacond\"}") == 1)
            #expect(try await prometheus.value("beacond_build_info") == 1)
            #expect(try await prometheus.value("beacond_missing_bikes") == Double(finished?.missingSet.size ?? -1))

            // The page: Prometheus's own lint, and nothing that names a bike or an advertiser.
            #expect(try PrometheusServer.checkMetrics(page) == "", "promtool check metrics")
            let samplesOnPage = page.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(samplesOnPage.allSatisfy { $0.hasPrefix("beacond_") }, "\(page)")
            let bikes = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: CafeRun.bikes)))
            let ids = try #require(bikes as? [Any]).compactMap { ($0 as? [String: Any])?["id"] as? String }.filter {
                !$0.isEmpty
            }
            #expect(!ids.isEmpty && ids.allSatisfy { !page.contains($0) }, "\(page)")
            for address in try await DaemonEndToEndTests.addresses(in: CafeRun.capture) {
                #expect(!page.uppercased().contains(address))
            }
            let labels = Set(page.matches(of: /([a-z_]+)="/).map { String($0.output.1) })
            #expect(labels.isSubset(of: ["version", "sink", "reason", "kind"]), "\(labels)")

            daemon.terminate()
            #expect(await daemon.waitForExit(seconds: 30) == 0, "\(daemon.stderr)")
        }
    }

    /// Anything but GET /metrics is told where the page is, not served it.
    @Test func onlyGETMetricsIsServed() async throws {
        let metricsPort = try LoopbackPort.free()
        let cafe = try await CafeRun.start("beacond-metrics-paths")
        try await withTeardown({ await cafe.stop() }) {
            let daemon = try cafe.launch(["--metrics-listen", "127.0.0.1:\(metricsPort)"], name: "paths")
            #expect(await Self.metricsPage(port: metricsPort, of: daemon) != nil, "\(daemon.stderr)")
            let base = "http://127.0.0.1:\(metricsPort)"
            #expect(try await LoopbackHTTP.request(base + "/").status == 404)
            #expect(try await LoopbackHTTP.request(base + "/metrics/../status").status == 404)
            #expect(try await LoopbackHTTP.request(base + "/metrics", method: "POST").status == 405)
            #expect(try await LoopbackHTTP.request(base + "/metrics?debug=1").status == 200)
            daemon.terminate()
            #expect(await daemon.waitForExit(seconds: 30) == 0, "\(daemon.stderr)")
        }
    }

    /// Scrapes on kept-alive connections as fast as they come while the daemon stops: it stops cleanly. (The page reads
    /// the outbox, which the daemon closes last; a scrape that came after it read a closed database and crashed the
    /// daemon after "stopped cleanly", found by ThreadSanitizer with Prometheus's one scrape a second.)
    @Test func scrapesWhileItStopsDoNotOutliveTheOutbox() async throws {
        let metricsPort = try LoopbackPort.free()
        let cafe = try await CafeRun.start("beacond-metrics-stop")
        try await withTeardown({ await cafe.stop() }) {
            var arguments = try cafe.arguments()
            arguments[try #require(arguments.firstIndex(of: "--speed")) + 1] = "1"
            let daemon = try DaemonProcess(
                arguments + ["--metrics-listen", "127.0.0.1:\(metricsPort)"], logDirectory: cafe.directory.path,
                name: "metrics-stop")
            #expect(await Self.metricsPage(port: metricsPort, of: daemon) != nil, "\(daemon.stderr)")
            // For four seconds from now: through the stop a second from now and after it.
            let end = ContinuousClock.now + .seconds(4)
            let scrapers = (0..<4).map { _ in
                Task {
                    var answered = 0
                    while ContinuousClock.now < end {
                        if (try? await LoopbackHTTP.request("http://127.0.0.1:\(metricsPort)/metrics")) != nil {
                            answered += 1
                        }
                    }
                    return answered
                }
            }
            try await Task.sleep(for: .seconds(1))
            daemon.terminate()
            #expect(await daemon.waitForExit(seconds: 30) == 0, "\(daemon.stderr)")
            var answered = 0
            for scraper in scrapers { answered += await scraper.value }
            #expect(answered > 0)
        }
    }

    /// A port already taken is a start-up error with the address in it, not a daemon running without its metrics.
    @Test func aPortInUseStopsTheStartWithOneLine() async throws {
        let prometheus = try await PrometheusServer(scraping: 9)
        let cafe = try await CafeRun.start("beacond-metrics-in-use")
        try await withTeardown({ await cafe.stop() }) {
            let daemon = try cafe.launch(["--metrics-listen", "127.0.0.1:\(prometheus.port)"], name: "in-use")
            #expect(await daemon.waitForExit(seconds: 60) == 69, "\(daemon.stderr)")
            #expect(daemon.stderr.contains("cannot serve metrics on 127.0.0.1:\(prometheus.port)"), "\(daemon.stderr)")
        }
    }

    /// The page, once the daemon serves it; nil when it has exited or a minute has passed.
    static func metricsPage(port: Int, of daemon: DaemonProcess) async -> String? {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && daemon.isRunning {
            if let answer = try? await LoopbackHTTP.request("http://127.0.0.1:\(port)/metrics"), answer.status == 200 {
                return answer.body
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}
