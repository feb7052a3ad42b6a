import ArgumentParser
import AsyncHTTPClient
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOCore
import NIOHTTP1

/// `bike-registry status`: the registry at a glance for its operator, as `beacond status` is for a café.
struct RegistryStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "The registry at a glance: readiness, the database, the list, messages owed and failing, silent stations.",
        discussion: """
            Read from the running server's metrics (--metrics, what serve's --metrics-listen says), or without it \
            from the database (--database), which cannot say whether a server is ready nor what its deliveries met \
            since it started. A station is silent when it has not fetched the list for an hour; one silent within \
            the day is named as a problem. Exits 0 when nothing needs the operator, 1 when something does (each \
            said), 3 when the metrics or the database cannot be read.
            """)

    @Option(help: "HOST:PORT of the running server's --metrics-listen.") var metrics: String?
    @Flag(help: "One JSON object.") var json = false
    @OptionGroup var database: DatabaseOption

    /// How long the metrics' page may take to come.
    static let timeout: TimeAmount = .seconds(5)
    /// The most of a page it reads: a registry of ten thousand stations writes about 2 MB.
    static let pageLimit = 16 << 20

    func run() async throws {
        let status: RegistryStatus
        do {
            status = try await read()
        } catch {
            FileHandle.standardError.write(Data("bike-registry: \(error)\n".utf8))
            throw ExitCode(3)
        }
        if json {
            try CommandOutput.printJSONLine(RegistryStatusText.json(status))
        } else {
            print(RegistryStatusText.text(status), terminator: "")
        }
        if !status.problems.isEmpty { throw ExitCode(1) }
    }

    private func read() async throws -> RegistryStatus {
        if let metrics {
            guard Serve.split(metrics) != nil else {
                throw ValidationError("--metrics is HOST:PORT, serve's --metrics-listen")
            }
            let url = "http://\(metrics)/metrics"
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: Self.timeout)
            guard response.status == .ok else { throw StatusError("\(url) answered \(response.status.code)") }
            let page = try await response.body.collect(upTo: Self.pageLimit)
            return RegistryStatus(
                samples: MetricsText.samples(String(buffer: page)), source: "metrics at \(metrics)", now: Date())
        }
        return try await database.with { store in
            RegistryStatus(
                figures: try await store.operatorFigures(), stations: try await store.stations(),
                source: store.location, primary: store.primaryHost, now: Date())
        }
    }
}

private struct StatusError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
