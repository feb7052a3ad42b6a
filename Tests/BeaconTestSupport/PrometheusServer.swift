public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real Prometheus for one test: Debian's `prometheus` on loopback, scraping one target every second, with its
/// storage in a directory of its own; and its HTTP API's range query.
public final class PrometheusServer: @unchecked Sendable {
    public let port: Int
    private let directory: TemporaryDirectory
    private let process: Process

    /// Starts Prometheus scraping `http://127.0.0.1:<target>/metrics` as `job`, evaluating the rule files `rules`
    /// every second, and returns once it is ready.
    public init(scraping target: Int, job: String = "beacond", rules: [String] = []) async throws {
        directory = try TemporaryDirectory("beacond-prometheus")
        port = try LoopbackPort.free()
        try """
        global:
          scrape_interval: 1s
          scrape_timeout: 900ms
          evaluation_interval: 1s
        rule_files: [\(rules.map { "\"\($0)\"" }.joined(separator: ", "))]
        scrape_configs:
          - job_name: \(job)
            static_configs:
              - targets: ["127.0.0.1:\(target)"]
        """.write(toFile: directory.file("prometheus.yml"), atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prometheus")
        process.arguments = [
            "--config.file=\(directory.file("prometheus.yml"))", "--storage.tsdb.path=\(directory.file("data"))",
            "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
        ]
        _ = FileManager.default.createFile(atPath: directory.file("prometheus.log"), contents: nil)
        let log = FileHandle(forWritingAtPath: directory.file("prometheus.log"))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        // A ceiling for a loaded machine (the whole suite under a sanitizer starts everything at once), never what a
        // start here waits: about a second.
        let deadline = Date().addingTimeInterval(120)
        while (try? await get("/-/ready")).map({ $0.status == 200 }) != true {
            guard process.isRunning, Date() < deadline else {
                throw FixtureError("prometheus did not start: \(self.log)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    deinit {
        // SIGKILL, as MosquittoBroker does: a child inherits the test process's blocked signals.
        process.send(SIGKILL)
        process.waitForExit()
        directory.remove()
    }

    public var log: String { GrowingFile.text(directory.file("prometheus.log")) }

    /// One series' samples between two times, one a second, through `/api/v1/query_range`: (time, value) pairs.
    public func range(_ query: String, from start: Date, to end: Date) async throws -> [(Double, Double)] {
        var components = URLComponents()
        components.path = "/api/v1/query_range"
        components.queryItems = [
            URLQueryItem(name: "query", value: query),
            URLQueryItem(name: "start", value: "\(start.timeIntervalSince1970)"),
            URLQueryItem(name: "end", value: "\(end.timeIntervalSince1970)"), URLQueryItem(name: "step", value: "1"),
        ]
        let (status, body) = try await get(components.string!)
        guard status == 200,
            let document = try JSONSerialization.jsonObject(with: body) as? [String: Any],
            let data = document["data"] as? [String: Any], let result = data["result"] as? [[String: Any]]
        else { throw FixtureError("prometheus answered \(status): \(String(decoding: body, as: UTF8.self))") }
        guard let values = result.first?["values"] as? [[Any]] else { return [] }
        return values.compactMap { pair in
            guard let time = pair.first as? Double, let text = pair.last as? String, let value = Double(text) else {
                return nil
            }
            return (time, value)
        }
    }

    /// The instant query's first value, or nil when it has none.
    public func value(_ query: String) async throws -> Double? {
        let now = Date()
        return try await range(query, from: now.addingTimeInterval(-1), to: now).last?.1
    }

    /// What `promtool check metrics` (Prometheus's own lint of names, types and units) says of a page: "" when
    /// nothing.
    public static func checkMetrics(_ page: String) throws -> String {
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/promtool")
        tool.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        tool.standardInput = input
        tool.standardOutput = output
        tool.standardError = output
        try tool.run()
        input.fileHandleForWriting.write(Data(page.utf8))
        try input.fileHandleForWriting.close()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let status = tool.waitForExit()
        return status == 0 ? said.trimmingCharacters(in: .whitespacesAndNewlines) : "exit \(status): \(said)"
    }

    /// An instant query's series, each by its labels.
    public func vector(_ query: String) async throws -> [(labels: [String: String], value: Double)] {
        var components = URLComponents()
        components.path = "/api/v1/query"
        components.queryItems = [URLQueryItem(name: "query", value: query)]
        let data = try await data(components.string!)
        guard let result = data["result"] as? [[String: Any]] else { throw FixtureError("no result: \(data)") }
        return result.compactMap { series in
            guard let labels = series["metric"] as? [String: String], let pair = series["value"] as? [Any],
                let text = pair.last as? String, let value = Double(text)
            else { return nil }
            return (labels, value)
        }
    }

    /// The alerts its rules hold now, pending or firing: each alert's labels (its name as `alertname`) and state.
    public func alerts() async throws -> [(labels: [String: String], state: String)] {
        let data = try await data("/api/v1/alerts")
        guard let alerts = data["alerts"] as? [[String: Any]] else { throw FixtureError("no alerts: \(data)") }
        return alerts.compactMap { alert in
            guard let labels = alert["labels"] as? [String: String], let state = alert["state"] as? String else {
                return nil
            }
            return (labels, state)
        }
    }

    /// The `data` of an API answer that says success.
    private func data(_ pathAndQuery: String) async throws -> [String: Any] {
        let (status, body) = try await get(pathAndQuery)
        guard status == 200, let document = try JSONSerialization.jsonObject(with: body) as? [String: Any],
            document["status"] as? String == "success", let data = document["data"] as? [String: Any]
        else { throw FixtureError("prometheus answered \(status): \(String(decoding: body, as: UTF8.self))") }
        return data
    }

    private func get(_ pathAndQuery: String) async throws -> (status: Int, body: Data) {
        let answer = try await LoopbackHTTP.request("http://127.0.0.1:\(port)\(pathAndQuery)")
        return (answer.status, Data(answer.body.utf8))
    }
}
