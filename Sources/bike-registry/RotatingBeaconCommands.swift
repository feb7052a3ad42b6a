import ArgumentParser
import BikeRegistryCore
import BikeRegistryStore
import Crypto
import Foundation

/// Where rotating beacons' keys are sealed from: `--key-file`, or the systemd credential `beacon-key`.
struct BeaconKeyFileOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The file of the key that seals rotating beacons' keys: to issue or import them, and for serve to list and verify them.",
            discussion: """
                64 hex digits (`openssl rand -hex 32 > FILE` makes one), readable by the registry alone and kept apart \
                from the database, so that a copy of the database reveals no beacon's key. Default: the systemd \
                credential beacon-key ($CREDENTIALS_DIRECTORY/beacon-key, LoadCredential=beacon-key:FILE).
                """))
    var keyFile: String?

    static let credential = "beacon-key"

    /// The sealer of `--key-file` or of the credential, if either is there; nil when neither is. A file named but
    /// unreadable or malformed is an error.
    func sealerIfGiven() throws -> BeaconKeySealer? {
        if keyFile == nil {
            guard let directory = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"],
                FileManager.default.fileExists(atPath: directory + "/" + Self.credential)
            else { return nil }
        }
        return try sealer()
    }

    func sealer() throws -> BeaconKeySealer {
        let directory = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"]
        guard let path = keyFile ?? directory.map({ $0 + "/" + Self.credential }) else {
            throw ValidationError(
                "rotating beacons' keys are sealed with a key file: give --key-file FILE (`openssl rand -hex 32 > FILE` makes one) or the systemd credential \(Self.credential)"
            )
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("the beacon key file \(path): \(error.localizedDescription)")
        }
        do {
            return try BeaconKeySealer(keyFileText: text)
        } catch {
            throw ValidationError("the beacon key file \(path): \(error)")
        }
    }
}

/// `beacons issue --rotating` and `beacons import` of rotating beacons: the CSV `uuid,claim_code,key,period`.
enum RotatingBeaconCSV {
    static let header = "uuid,claim_code,key,period"

    /// A fresh beacon: a random 128-bit key and claim code; the key sealed, the code hashed. Returns the CSV line.
    static func issue(uuid: String, period: Int, sealer: BeaconKeySealer) -> (NewRotatingBeacon, line: String) {
        let key = SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }
        let code = ClaimCode.generate()
        let id = NewRotatingBeacon.newID()
        let beacon = NewRotatingBeacon(
            id: id, uuid: uuid, period: period, sealedKey: sealer.seal(key, beacon: id),
            codeHash: ClaimCode.hash(code)!)
        return (beacon, "\(beacon.uuid),\(code),\(Secrets.hex(key)),\(period)")
    }

    /// The rows of a rotating beacons' CSV (its header checked by the caller), each key sealed under `sealer`.
    static func read(_ lines: [String], name: String, sealer: BeaconKeySealer) throws -> [NewRotatingBeacon] {
        var beacons: [NewRotatingBeacon] = []
        for (index, line) in lines.enumerated().dropFirst() where !line.isEmpty {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let place = "\(name): line \(index + 1)"
            guard fields.count == 4, let uuid = BeaconParser.uuid(fields[0]) else {
                throw ValidationError("\(place): not a UUID, a claim code, a key and a period")
            }
            guard let hash = ClaimCode.hash(fields[1]) else {
                throw ValidationError(
                    "\(place): the claim code is not \(ClaimCode.minimumDigits) to \(ClaimCode.maximumDigits) Crockford base32 digits"
                )
            }
            guard let key = BeaconKeySealer.bytes(hex: Array(fields[2].utf8)), key.count == 16 else {
                throw ValidationError("\(place): the key is not 32 hex digits (128 bits)")
            }
            guard let period = Int(fields[3]), NewRotatingBeacon.periods.contains(period) else {
                throw ValidationError("\(place): the period is not 1 to 86400 seconds")
            }
            let id = NewRotatingBeacon.newID()
            beacons.append(
                NewRotatingBeacon(
                    id: id, uuid: uuid, period: period, sealedKey: sealer.seal(key, beacon: id),
                    codeHash: hash))
        }
        return beacons
    }
}

extension BeaconCommand.Issue {
    /// `--rotating`: the key file is read and the CSV's file made before anything is stored, so that no beacon is
    /// kept whose key was never shown.
    func issueRotating() async throws {
        let sealer = try keys.sealer()
        let output = try csv.map(BeaconCommand.newFile) ?? FileHandle.standardOutput
        let uuid = BeaconParser.uuid(region)!
        let issued = (0..<count).map { _ in RotatingBeaconCSV.issue(uuid: uuid, period: period, sealer: sealer) }
        do {
            try await database.with { try await $0.addRotatingBeacons(issued.map(\.0), now: Date()) }
        } catch let error as RegistryStoreError {
            if let csv { unlink(csv) }
            throw ValidationError("\(error)")
        }
        let text = ([RotatingBeaconCSV.header] + issued.map(\.line)).joined(separator: "\n") + "\n"
        try output.write(contentsOf: Data(text.utf8))
        if let csv {
            try output.close()
            FileHandle.standardError.write(
                Data(
                    "issued \(count) rotating beacons (every \(period) s); their keys and claim codes are in \(csv) and nowhere else\n"
                        .utf8))
        }
    }
}

extension BeaconCommand.Import {
    func importRotating(_ text: String) async throws {
        let sealer = try keys.sealer()
        let beacons = try RotatingBeaconCSV.read(BeaconCSV.lines(text), name: file, sealer: sealer)
        do {
            try await database.with { try await $0.addRotatingBeacons(beacons, now: Date()) }
        } catch let error as RegistryStoreError {
            throw ValidationError("\(file): \(error); nothing was imported")
        }
        print("imported \(beacons.count) rotating beacon\(beacons.count == 1 ? "" : "s")")
    }
}
