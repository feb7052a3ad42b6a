public import ArgumentParser
import BikeRegistryCore
import BikeRegistryServer
import BikeRegistryStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension RegistrationMode: ExpressibleByArgument {}

struct BeaconCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacons",
        abstract: "Issue, import, list and revoke provisioned beacons and their claim codes.",
        discussion: """
            Under `serve --registration claim-code` (the default) an owner registers a bike with the claim code printed \
            on its beacon's label, never by the beacon's numbers, which anyone nearby can read off it. Only a hash of \
            each code is stored: the CSV `issue` prints is the only copy.
            """,
        subcommands: [Issue.self, Import.self, List.self, Revoke.self])

    static let header = "uuid,major,minor,claim_code"

    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make beacons with fresh claim codes and print them as CSV, once.",
            discussion: """
                Minors are the lowest from --first-minor that no bike and no beacon holds. The CSV \
                (uuid,major,minor,claim_code) is for programming the beacons and printing their labels; the codes are \
                not stored, only their hashes, so keep it until the labels are printed and then destroy it. \
                With --rotating, beacons whose identity changes every --period seconds under a key of their own \
                (docs/rotating-beacon.md): the CSV is uuid,claim_code,key,period, the key 32 hex digits for programming \
                the beacon; the registry keeps each key sealed under --key-file's, and never shows it again.
                """)

        @Option(
            help: "The beacons' region: UUID:MAJOR, or with --rotating UUID alone (their identities use every major).")
        var region: String
        @Option(help: "How many beacons to make (1 to 65536).") var count: Int
        @Option(help: "The lowest minor to use.") var firstMinor = 1
        @Flag(help: "Rotating beacons, each with a key of its own.") var rotating = false
        @Option(help: "With --rotating: seconds per identity (1 to 86400).") var period = NewRotatingBeacon
            .defaultPeriod
        @Option(help: "Write the CSV to this new file (created for its owner alone) rather than standard output.")
        var csv: String?
        @OptionGroup var keys: BeaconKeyFileOption
        @OptionGroup var database: DatabaseOption

        func validate() throws {
            guard (1...65536).contains(count) else { throw ValidationError("--count is 1 to 65536") }
            guard (0...65535).contains(firstMinor) else { throw ValidationError("--first-minor is 0 to 65535") }
            if rotating {
                guard BeaconParser.uuid(region) != nil else {
                    throw ValidationError(
                        "with --rotating, --region is a UUID alone: rotating identities use every major")
                }
                guard NewRotatingBeacon.periods.contains(period) else {
                    throw ValidationError("--period is 1 to 86400 seconds")
                }
            } else {
                guard let parsed = BeaconArgument(argument: region), parsed.minor == nil else {
                    throw ValidationError("--region is UUID:MAJOR, with no minor")
                }
            }
        }

        func run() async throws {
            if rotating { return try await issueRotating() }
            let region = BeaconArgument(argument: self.region)!
            // The file is made before anything is issued: codes issued and then not written could claim nothing.
            let output = try csv.map(BeaconCommand.newFile) ?? FileHandle.standardOutput
            let codes = (0..<count).map { _ in ClaimCode.generate() }
            let minors: [Int]
            do {
                minors = try await database.with {
                    try await $0.issueBeacons(
                        uuid: region.uuid, major: region.major, firstMinor: firstMinor,
                        codeHashes: codes.map { ClaimCode.hash($0)! }, now: Date())
                }
            } catch let error as RegistryStoreError {
                if let csv { unlink(csv) }
                throw ValidationError("\(error)")
            }
            var text = BeaconCommand.header + "\n"
            for (minor, code) in zip(minors, codes) { text += "\(region.uuid),\(region.major),\(minor),\(code)\n" }
            try output.write(contentsOf: Data(text.utf8))
            if let csv {
                try output.close()
                FileHandle.standardError.write(
                    Data(
                        "issued \(count) beacons (minors \(minors.first!)-\(minors.last!)); their claim codes are in \(csv) and nowhere else\n"
                            .utf8))
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add beacons programmed elsewhere, with their claim codes, all or none.",
            discussion: """
                FILE (or - for standard input) is CSV with the header uuid,major,minor,claim_code, as `issue` prints it, \
                or uuid,claim_code,key,period for rotating beacons, as `issue --rotating` prints it (their keys sealed \
                under --key-file's). \
                A code has at least 10 Crockford base32 digits (50 bits); case, dashes and spaces are ignored. A line \
                that cannot be added stops the import and nothing is added.
                """)

        @Argument(help: "The CSV file; - for standard input.") var file: String
        @OptionGroup var keys: BeaconKeyFileOption
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let text = try CommandOutput.readInput(file)
            if BeaconCSV.lines(text).first == RotatingBeaconCSV.header { return try await importRotating(text) }
            let beacons = try BeaconCSV.read(text, name: file)
            do {
                try await database.with { try await $0.importBeacons(beacons, now: Date()) }
            } catch let error as RegistryStoreError {
                throw ValidationError("\(file): \(error); nothing was imported")
            }
            print("imported \(beacons.count) beacon\(beacons.count == 1 ? "" : "s")")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the beacons: issued (its code claims it), claimed (a bike holds it) or revoked.",
            discussion:
                "Bikes registered without a code (before claim codes, or under open registration) are listed as claimed, with no issue time."
        )

        @Flag(help: "One JSON object per beacon.") var json = false
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let beacons = try await database.with { try await $0.beacons() }
            for beacon in beacons {
                let issued = beacon.issuedAt.map(ISOTime.format)
                if json {
                    let fields: [String: Any] = [
                        "uuid": beacon.uuid, "major": beacon.major, "minor": beacon.minor,
                        "state": beacon.state.rawValue, "issuedAt": issued ?? NSNull(),
                    ]
                    try CommandOutput.printJSONLine(fields)
                } else {
                    print(
                        "\(beacon.uuid):\(beacon.major):\(beacon.minor)  \(beacon.state.rawValue)  \(issued.map { "issued \($0)" } ?? "no claim code")"
                    )
                }
            }
            let rotating = try await database.with { try await $0.rotatingBeacons() }
            for beacon in rotating {
                let issued = ISOTime.format(beacon.issuedAt)
                if json {
                    try CommandOutput.printJSONLine([
                        "uuid": beacon.uuid, "rotating": true, "id": beacon.id, "period": beacon.period,
                        "state": beacon.state.rawValue, "issuedAt": issued,
                    ])
                } else {
                    print(
                        "\(beacon.uuid) rotating \(beacon.id) every \(beacon.period) s  \(beacon.state.rawValue)  issued \(issued)"
                    )
                }
            }
            if beacons.isEmpty && rotating.isEmpty && !json {
                print("no beacons; make some with `bike-registry beacons issue --region UUID:MAJOR --count N`")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Withdraw a beacon: its claim code registers nothing from now on. A bike registered with it stays.")

        @Argument(help: "The beacon: UUID:MAJOR:MINOR, or a rotating beacon's id (rbn_…, as `beacons list` shows it).")
        var beacon: String
        @OptionGroup var database: DatabaseOption

        private var rotating: Bool { beacon.hasPrefix("rbn_") }

        func validate() throws {
            guard rotating || BeaconArgument(argument: beacon)?.minor != nil else {
                throw ValidationError("the beacon is UUID:MAJOR:MINOR, or a rotating beacon's id (rbn_…)")
            }
        }

        func run() async throws {
            let revoked = try await database.with { store in
                if rotating { return try await store.revokeRotatingBeacon(id: beacon, now: Date()) }
                let fixed = BeaconArgument(argument: beacon)!
                return try await store.revokeBeacon(
                    uuid: fixed.uuid, major: fixed.major, minor: fixed.minor!, now: Date())
            }
            guard revoked else { throw ValidationError("no provisioned beacon \(beacon) (or it is revoked already)") }
            print("beacon \(beacon) revoked")
        }
    }

    /// A new file for the codes, readable by its owner alone; an existing one is never overwritten.
    static func newFile(_ path: String) throws -> FileHandle {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ValidationError("--csv \(path): \(String(cString: strerror(errno)))")
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }
}

/// `beacons import`'s CSV: the header `uuid,major,minor,claim_code`, then one beacon a line.
enum BeaconCSV {
    /// The file's lines, trimmed, without the empty ones at its end. By Character: "\r\n" is one, a newline, as a
    /// spreadsheet writes it.
    static func lines(_ text: String) -> [String] {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    static func read(_ text: String, name: String) throws -> [NewBeacon] {
        let lines = lines(text)
        guard lines.first == BeaconCommand.header else {
            throw ValidationError(
                "\(name): the first line must be \(BeaconCommand.header), or \(RotatingBeaconCSV.header) for rotating beacons"
            )
        }
        var beacons: [NewBeacon] = []
        for (index, line) in lines.enumerated().dropFirst() where !line.isEmpty {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard fields.count == 4, let beacon = BeaconArgument(argument: fields[0...2].joined(separator: ":")),
                let minor = beacon.minor
            else {
                throw ValidationError(
                    "\(name): line \(index + 1): not a UUID, a major and a minor (0 to 65535) and a code")
            }
            guard let hash = ClaimCode.hash(fields[3]) else {
                throw ValidationError(
                    "\(name): line \(index + 1): the claim code is not \(ClaimCode.minimumDigits) to \(ClaimCode.maximumDigits) Crockford base32 digits"
                )
            }
            beacons.append(NewBeacon(uuid: beacon.uuid, major: beacon.major, minor: minor, codeHash: hash))
        }
        return beacons
    }
}
