import BeaconTestSupport
import Foundation

/// `bike-registry` as its own process, as systemd runs it: a station added with `station add`, then `serve` on a
/// port the kernel picks, read from its listening line.
struct RegistryProcess {
    let server: DaemonProcess
    let client: RegistryClient
    /// The station's key, shown once by `station add`.
    let stationKey: String
    let notify: NotifyListener

    /// - Parameters:
    ///   - registration: `serve --registration`: open, so that tests of other things register by the beacon.
    ///   - listen: `serve --listen`: a port the kernel picks, or one a restarted server keeps.
    ///   - arguments: more of `serve`'s options.
    ///   - addStation: false for a server started again on a database that has its station.
    static func start(
        database: String, in directory: TemporaryDirectory, station: String = "Ace Café", registration: String = "open",
        listen: String = "127.0.0.1:0", arguments: [String] = [], addStation: Bool = true, name: String = "registry"
    ) async throws -> RegistryProcess {
        let key = addStation ? try await Self.addStation(station, database: database) : ""
        // As systemd runs it (Type=notify): READY=1 once it listens.
        let notify = try NotifyListener(path: directory.file("\(name)-notify.sock"))
        let server = try DaemonProcess(
            [
                "serve", "--listen", listen, "--database", database, "--allow-private-webhooks",
                "--registration", registration,
            ] + arguments,
            executable: BeacondRun.registryBinary,
            environment: ["NOTIFY_SOCKET": notify.path], logDirectory: directory.path, name: name)
        var port: Int?
        for _ in 0..<200 where port == nil {
            port =
                server.stderr.split(separator: "\n").lazy.compactMap { line in
                    line.firstRange(of: "address=127.0.0.1:").flatMap {
                        Int(line[$0.upperBound...].prefix { $0.isNumber })
                    }
                }.first
            if port == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard let port else { throw FixtureError("no listening line: \(server.stderr)") }
        return RegistryProcess(
            server: server, client: RegistryClient(baseURL: "http://127.0.0.1:\(port)"), stationKey: key,
            notify: notify)
    }

    /// `station add`: the new station's key.
    static func addStation(_ station: String, database: String) async throws -> String {
        let added = try await BeacondRun.run(
            executable: BeacondRun.registryBinary.path,
            [
                "station", "add", station, "--latitude", "51.5412", "--longitude", "-0.2769", "--json", "--database",
                database,
            ])
        guard added.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(added.stdout.utf8)) as? [String: String],
            object["name"] == station, let key = object["key"]
        else { throw FixtureError("station add: \(added.status) \(added.stdout) \(added.stderr)") }
        return key
    }
}

/// The real `beacond` replaying the café capture against a registry, as fast as it can, and exiting once every
/// sighting is delivered (`--exit-when-drained`): a café's afternoon for the tests of the whole system.
enum CafeStation {
    static func replay(to registry: String, key: String, in directory: TemporaryDirectory) throws -> DaemonProcess {
        let keyFile = directory.file("api-key")
        try "\(key)\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
        try "".write(toFile: directory.file("empty.conf"), atomically: true, encoding: .utf8)
        return try DaemonProcess(
            [
                "run", "--replay", EndToEndTests.capture, "--speed", "0", "--exit-when-drained", "--registry", registry,
                "--api-key-file", keyFile, "--state-dir", directory.file("state"), "--control-socket",
                directory.file("control.sock"), "--station-id", "ace-cafe", "--latitude", "0", "--longitude", "0",
                "--config", directory.file("empty.conf"),
            ], logDirectory: directory.path, name: "beacond")
    }
}
