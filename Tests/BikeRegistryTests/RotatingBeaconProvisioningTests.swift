import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import GRDB
import Testing

/// Issue 41's provisioning: `beacons issue --rotating` and `beacons import` of rotating beacons, their keys sealed
/// under a key file the database does not hold, and never shown again.
@Suite(.timeLimit(.minutes(20))) struct RotatingBeaconProvisioningTests {
    static let region = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"

    static func run(_ arguments: [String], database: TestDatabase, environment: [String: String] = [:])
        async throws -> BeacondRun
    {
        try await BeacondRun.run(
            executable: BeacondRun.registryBinary.path, ["beacons"] + arguments + ["--database", database.location],
            environment: environment)
    }

    static func keyFile(in directory: TemporaryDirectory, _ text: String = "7f" + String(repeating: "00", count: 31))
        throws -> String
    {
        let path = directory.file("beacon-key")
        try "\(text)\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(arguments: StoreKind.allCases) func issuedKeysAreShownOnceAndKeptSealed(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry-rotating")
        defer { directory.remove() }
        let database = try await TestDatabase.make(store, in: directory.path)
        try await withTeardown({ await database.drop() }) {
            let issueArguments = ["issue", "--rotating", "--region", Self.region, "--count", "3", "--period", "60"]
            let keyless = try await Self.run(issueArguments, database: database)
            #expect(keyless.status != 0 && keyless.stderr.contains("--key-file FILE"), "\(keyless.stderr)")

            let key = try Self.keyFile(in: directory)
            let issued = try await Self.run(issueArguments + ["--key-file", key], database: database)
            #expect(issued.status == 0, "\(issued.stderr)")
            let lines = issued.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "uuid,claim_code,key,period" && lines.count == 4)
            let rows = lines.dropFirst().map { $0.split(separator: ",").map(String.init) }
            #expect(rows.allSatisfy { $0[0] == Self.region && $0[3] == "60" && ClaimCode.hash($0[1]) != nil })
            #expect(
                rows.allSatisfy { $0[2].wholeMatch(of: /[0-9a-f]{32}/) != nil } && Set(rows.map { $0[2] }).count == 3)

            let listed = try await Self.run(["list", "--json"], database: database)
            let beacons = try listed.jsonLines
            #expect(beacons.count == 3 && beacons.allSatisfy { $0["rotating"] as? Bool == true })
            #expect(beacons.allSatisfy { $0["state"] as? String == "issued" && $0["period"] as? Int == 60 })
            for row in rows { #expect(!listed.stdout.contains(row[2]) && !listed.stdout.contains(row[1])) }

            guard store == .sqlite else { return }
            // A copy of the database holds no key, in hex or as bytes; each sealed key opens, with the key file, to
            // the key the CSV showed, and only for its own beacon.
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.hasPrefix("registry.sqlite")
            }
            #expect(files.contains("registry.sqlite"))
            for file in files {
                // Through a file handle: Data(contentsOf:) on SQLite's shared-memory file, which the registry's
                // process had mapped, left LeakSanitizer a 4 KiB buffer of FoundationEssentials' own.
                let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: directory.file(file)))
                let bytes = try handle.readToEnd() ?? Data()
                try handle.close()
                for row in rows {
                    let raw = Data(RotatingBeaconProvisioningTests.bytes(hex: row[2]))
                    #expect(bytes.range(of: Data(row[2].utf8)) == nil && bytes.range(of: raw) == nil, "\(file)")
                }
            }
            let sealer = try BeaconKeySealer(keyFileText: try String(contentsOfFile: key, encoding: .utf8))
            let queue = try DatabaseQueue(path: database.location)
            let sealed = try await queue.read { db in
                try Row.fetchAll(db, sql: "SELECT id, sealedKey FROM rotatingBeacon").map {
                    ($0[0] as String, $0[1] as String)
                }
            }
            let opened = Set(try sealed.map { try Self.hex(sealer.open($0.1, beacon: $0.0)) })
            #expect(opened == Set(rows.map { $0[2] }))
            #expect(throws: BeaconKeySealer.Failure.self) { try sealer.open(sealed[0].1, beacon: sealed[1].0) }
        }
    }

    @Test(arguments: StoreKind.allCases) func importIsAllOrNoneAndTheKeyFileMayBeACredential(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-rotating-import")
        defer { directory.remove() }
        let database = try await TestDatabase.make(store, in: directory.path)
        try await withTeardown({ await database.drop() }) {
            let credentials = directory.path + "/credentials"
            try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
            try ("0123456789abcdef" + String(repeating: "0", count: 48)).write(
                toFile: credentials + "/beacon-key", atomically: true, encoding: .utf8)
            let systemd = ["CREDENTIALS_DIRECTORY": credentials]
            let file = directory.file("rotating.csv")
            func write(_ rows: String) throws {
                try "uuid,claim_code,key,period\r\n\(rows)".write(toFile: file, atomically: true, encoding: .utf8)
            }

            try write("\(Self.region),ABCD-EFGH-JK,000102030405060708090a0b0c0d0e0f,900\r\n")
            let imported = try await Self.run(["import", file], database: database, environment: systemd)
            #expect(
                imported.status == 0 && imported.stdout.contains("imported 1 rotating beacon"), "\(imported.stderr)")

            // The same code again, and a fixed beacon's code: nothing of the file is imported.
            let fixed = directory.file("fixed.csv")
            try "uuid,major,minor,claim_code\n\(Self.region),1,5,QRST-VWXY-Z0\n".write(
                toFile: fixed, atomically: true, encoding: .utf8)
            #expect(try await Self.run(["import", fixed], database: database).status == 0)
            try write(
                "\(Self.region),MNPQ-RSTV-WX,101112131415161718191a1b1c1d1e1f,60\n\(Self.region),qrst-vwxy-z0,202122232425262728292a2b2c2d2e2f,60\n"
            )
            let clash = try await Self.run(["import", file], database: database, environment: systemd)
            #expect(
                clash.status != 0 && clash.stderr.contains("its claim code is another beacon's; nothing was imported"),
                "\(clash.stderr)")
            try write("\(Self.region),MNPQ-RSTV-WX,0001,60\n")
            let short = try await Self.run(["import", file], database: database, environment: systemd)
            #expect(short.stderr.contains("line 2: the key is not 32 hex digits"), "\(short.stderr)")
            try write("\(Self.region),MNPQ-RSTV-WX,101112131415161718191a1b1c1d1e1f,0\n")
            let period = try await Self.run(["import", file], database: database, environment: systemd)
            #expect(period.stderr.contains("line 2: the period is not 1 to 86400 seconds"), "\(period.stderr)")

            // A key file that is not a 256-bit key in hex says so.
            try write("\(Self.region),MNPQ-RSTV-WX,101112131415161718191a1b1c1d1e1f,60\n")
            let badKey = try Self.keyFile(in: directory, "not a key")
            let refused = try await Self.run(["import", file, "--key-file", badKey], database: database)
            #expect(refused.status != 0 && refused.stderr.contains("must hold 64 hex digits"), "\(refused.stderr)")

            let listed = try await Self.run(["list"], database: database)
            #expect(
                listed.stdout.split(separator: "\n").filter { $0.contains(" rotating ") }.count == 1, "\(listed.stdout)"
            )
            #expect(listed.stdout.contains("rotating rbn_") && listed.stdout.contains("every 900 s  issued"))

            let major = try await Self.run(
                ["issue", "--rotating", "--region", "\(Self.region):1", "--count", "1"], database: database,
                environment: systemd)
            #expect(major.status != 0 && major.stderr.contains("a UUID alone"), "\(major.stderr)")
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }
}
