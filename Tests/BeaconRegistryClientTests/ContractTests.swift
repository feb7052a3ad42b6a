import BeaconDelivery
import BeaconEngine
import BeaconRegistryClient
import BeaconTestSupport
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

    /// Each field of a complete bike left out in turn: the decoder refuses the element exactly when the document
    /// says the field is required.
    @Test func theBikeSchemaRequiresWhatTheDecoderRequires() throws {
        let required = Self.required(after: "    Bike:")
        #expect(!required.isEmpty)
        let complete: [(String, String)] = [
            ("id", #""b1""#), ("beaconUUID", #""21EECF71-D5C7-4A00-9B90-27C94B5146EA""#), ("beaconMajor", "1"),
            ("beaconMinor", "7"),
            ("missing", "true"), ("make", #""Ducati""#), ("model", #""Monster""#), ("colour", #""red""#),
        ]
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
            #expect(
                accepted == !required.contains(left),
                "without \(left): the decoder \(accepted ? "takes" : "refuses") it")
        }
    }
}
