import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Crypto
import Foundation
import Testing

/// The rotating-beacon scheme's test vectors, read from docs/rotating-beacon.md, against the registry's code and
/// against `beacon/rotating_id.c` compiled by the system C compiler (`beacon/check-vectors`).
@Suite(.timeLimit(.minutes(5))) struct RotatingVectorTests {
    struct Vector {
        let key: [UInt8]
        let period: UInt32
        let time: UInt64
        let epoch: UInt64
        let major: UInt16
        let minor: UInt16
        let address: String
    }

    static let document = Fixtures.repositoryRoot.appendingPathComponent("docs/rotating-beacon.md").path

    /// The table's rows: | `K` | P | time | epoch | major | minor | `address` |
    static func vectors() throws -> [Vector] {
        try String(contentsOfFile: document, encoding: .utf8).split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces.union(["`"])) }
            guard line.hasPrefix("| `"), cells.count == 7, cells[0].count == 32,
                let key = hexBytes(cells[0]), let period = UInt32(cells[1]), let time = UInt64(cells[2]),
                let epoch = UInt64(cells[3]), let major = UInt16(cells[4]), let minor = UInt16(cells[5])
            else { return nil }
            return Vector(
                key: key, period: period, time: time, epoch: epoch, major: major, minor: minor, address: cells[6])
        }
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        return stride(from: 0, to: digits.count, by: 2).map { index in
            UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)
        }
        .reduce(into: [UInt8]?([])) { bytes, byte in
            if let byte { bytes?.append(byte) } else { bytes = nil }
        }
    }

    @Test func theRegistrysCodeGivesEveryVectorInTheDocument() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count >= 8, "the document's table was not found")
        for vector in vectors {
            let identity = RotatingIdentity(
                key: SymmetricKey(data: vector.key), period: vector.period, unixTime: vector.time)
            #expect(
                identity.epoch == vector.epoch && identity.major == vector.major && identity.minor == vector.minor
                    && identity.addressText == vector.address,
                "P=\(vector.period) t=\(vector.time): \(identity.epoch) \(identity.major) \(identity.minor) \(identity.addressText)"
            )
            #expect(identity.address[0] & 0xC0 == 0, "a non-resolvable private address")
        }
    }

    @Test func anEpochChangesExactlyAtAMultipleOfThePeriod() {
        let key = SymmetricKey(data: [UInt8](repeating: 7, count: 16))
        let period: UInt32 = 900
        let boundary: UInt64 = 1_764_288_900
        let before = RotatingIdentity(key: key, period: period, unixTime: boundary - 1)
        let at = RotatingIdentity(key: key, period: period, unixTime: boundary)
        #expect(before.epoch + 1 == at.epoch)
        #expect(before != at && before.address != at.address)
        #expect(RotatingIdentity(key: key, period: period, unixTime: boundary + 899) == at)
    }

    @Test func theBeaconsCFileGivesTheSameVectors() async throws {
        let run = try await BeacondRun.run(
            executable: Fixtures.repositoryRoot.appendingPathComponent("beacon/check-vectors").path, [])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("8 vectors from docs/rotating-beacon.md"), "\(run.stdout)")
    }
}
