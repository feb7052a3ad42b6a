import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

/// Issue 53: `bike-registry status`, read from the running server's metrics listener or from the database, says the
/// same of the same registry: readiness (the server's only), the bikes, messages owed, and the stations that went
/// silent, each named; exit 0 when nothing needs the operator, 1 when something does, 3 when nothing can be read.
@Suite(.timeLimit(.minutes(20))) struct RegistryStatusTests {
    @Test func statusNamesTheSilentCafeFromTheMetricsAndFromTheDatabase() async throws {
        let directory = try TemporaryDirectory("bike-registry-status")
        defer { directory.remove() }
        let testDatabase = try await TestDatabase.make(.sqlite, in: directory.path)
        let database = testDatabase.location
        let metricsPort = try LoopbackPort.free()
        let process = try await RegistryProcess.start(
            database: database, in: directory, arguments: ["--metrics-listen", "127.0.0.1:\(metricsPort)"])
        try await withTeardown({
            process.server.terminate()
            _ = await process.server.waitForExit(seconds: 10)
        }) {
            _ = try await process.client.register(minor: 101)
            #expect(try await process.client.request(.GET, "/bikes", bearer: process.stationKey).status == 200)
            let fromMetrics = ["status", "--metrics", "127.0.0.1:\(metricsPort)"]
            let fromDatabase = ["status", "--database", database]
            // The café's station refreshed (written within 5 s by the server): nothing needs the operator.
            var calm = try await BackupTests.command(fromMetrics)
            for _ in 0..<80 where !calm.stdout.contains("1 listening") {
                try await Task.sleep(for: .milliseconds(250))
                calm = try await BackupTests.command(fromMetrics)
            }
            #expect(calm.status == 0, "\(calm)")
            #expect(calm.stdout.contains(": ready") && calm.stdout.contains("1 listening, 0 silent"), "\(calm.stdout)")
            #expect(calm.stdout.contains("1 registered, 0 missing"), "\(calm.stdout)")

            // A second café, its name with a quote and a backslash (escaped on the page), silent for two hours.
            let name = #"The "Bell" \ Inn"#
            _ = try await RegistryProcess.addStation(name, database: database)
            try await testDatabase.execute([
                "UPDATE station SET lastRefreshAt = \(Date().addingTimeInterval(-7_200).timeIntervalSince1970) WHERE name = '\(name)'"
            ])
            try await Task.sleep(for: .milliseconds(1_100))  // past the page's one-second reuse
            let said = try await BackupTests.command(fromMetrics)
            #expect(said.status == 1, "\(said)")
            #expect(said.stdout.contains("\(name): silent, last fetched the list 2 h"), "\(said.stdout)")
            #expect(said.stdout.contains("Problems   \(name): silent for 2 h"), "\(said.stdout)")

            let json = try await BackupTests.command(fromMetrics + ["--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(object["ready"] as? Bool == true && object["bikes"] as? Int == 1, "\(object)")
            let stations = try #require(object["stations"] as? [[String: Any]])
            #expect(Set(stations.compactMap { $0["name"] as? String }) == ["Ace Café", name])
            #expect(stations.first { $0["name"] as? String == name }?["listening"] as? Bool == false)

            // From the database: the same stations and problem; readiness not known.
            let read = try await BackupTests.command(fromDatabase)
            #expect(read.status == 1, "\(read)")
            #expect(
                read.stdout.contains("readiness not known") && read.stdout.contains("\(name): silent"), "\(read.stdout)"
            )
            let readJSON = try await BackupTests.command(fromDatabase + ["--json"])
            let readObject = try #require(
                try JSONSerialization.jsonObject(with: Data(readJSON.stdout.utf8)) as? [String: Any])
            #expect(
                readObject["ready"] is NSNull && readObject["problems"] as? [String] == object["problems"] as? [String])

            // Nothing to read: exit 3, saying why.
            let nobody = try await BackupTests.command(["status", "--metrics", "127.0.0.1:1"])
            #expect(nobody.status == 3 && !nobody.stderr.isEmpty, "\(nobody)")
        }
    }
}
