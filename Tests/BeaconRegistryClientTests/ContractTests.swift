import BeaconDelivery
import BeaconEngine
import BeaconRegistryClient
import BeaconTestSupport
import BikeListJSON
import Foundation
import RegistryTestServer
import Testing

/// docs/registry-api.yaml and the code say the same thing.
@Suite(.timeLimit(.minutes(20))) struct ContractTests {
    static let document =
        (try? String(
            contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/registry-api.yaml"), encoding: .utf8))
        ?? ""

    /// The names in the `required: [...]` line that follows `marker`.
    static func required(after marker: String) -> Set<String> {
        guard let start = document.range(of: marker),
            let line = document[start.upperBound...].split(separator: "\n").first(where: { $0.contains("required: [") }
            ),
            let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]")
        else { return [] }
        return Set(
            line[line.index(after: open)..<close].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    @Test func theSightingBodyHasExactlyTheDocumentedFields() throws {
        let sighting = makeSightings(1)[0]
        let body = try #require(
            FlatJSON.object(OutgoingSighting(sighting, stationID: "s", latitude: 1, longitude: 2).json))
        let required = Self.required(after: "    Sighting:")
        #expect(!required.isEmpty)
        #expect(required.isSubset(of: Set(body.keys)))
        #expect(Set(body.keys).subtracting(required) == ["rssi"], "rssi is the one optional field")
    }

    /// The names of `- required: [X]` lines (the alternatives of an `anyOf`) between `marker` and the schema's
    /// `properties:`.
    static func alternatives(after marker: String) -> Set<String> {
        guard let start = document.range(of: marker) else { return [] }
        var names = Set<String>()
        for line in document[start.upperBound...].split(separator: "\n") {
            if line.contains("properties:") { break }
            guard line.contains("- required: ["), let open = line.firstIndex(of: "["),
                let close = line.firstIndex(of: "]")
            else { continue }
            names.insert(String(line[line.index(after: open)..<close]).trimmingCharacters(in: .whitespaces))
        }
        return names
    }

    /// Each field of a complete bike left out in turn, a fixed beacon's and a rotating beacon's: the decoder refuses
    /// the element exactly when the document says the field is required, or it is the one alternative of the
    /// schema's `anyOf` (beaconMinor or beaconIdentities) that the bike has.
    @Test func theBikeSchemaRequiresWhatTheDecoderRequires() throws {
        let required = Self.required(after: "    Bike:")
        let alternatives = Self.alternatives(after: "    Bike:")
        #expect(!required.isEmpty && alternatives == ["beaconMinor", "beaconIdentities"])
        let common: [(String, String)] = [
            ("id", #""b1""#), ("beaconUUID", #""21EECF71-D5C7-4A00-9B90-27C94B5146EA""#), ("missing", "true"),
            ("make", #""Ducati""#), ("model", #""Monster""#), ("colour", #""red""#),
        ]
        let fixed = common + [("beaconMajor", "1"), ("beaconMinor", "7")]
        let rotating = common + [("beaconIdentities", "[[1,7],[9,3]]")]
        for complete in [fixed, rotating] {
            #expect(
                required.isSubset(of: Set(complete.map(\.0))),
                "the document requires a field this test does not know: \(required)")
            for (left, _) in complete {
                let element =
                    "{" + complete.filter { $0.0 != left }.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
                var reader = BikeListReader(shape: .answer)
                var accepted = false
                try reader.feed(Array("[\(element)]".utf8)[...]) { item in
                    if case .entry = item { accepted = true }
                }
                try reader.finish { _ in }
                let needed = required.contains(left) || alternatives.contains(left)
                #expect(accepted == !needed, "without \(left): the decoder \(accepted ? "takes" : "refuses") it")
            }
        }
    }
}
