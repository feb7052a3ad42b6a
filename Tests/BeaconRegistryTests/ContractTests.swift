import BeaconRegistry
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// docs/registry-api.yaml and the code say the same thing.
@Suite struct ContractTests {
    static let document = (try? String(
        contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/registry-api.yaml"), encoding: .utf8)) ?? ""

    /// The names in the `required: [...]` line that follows `marker`.
    static func required(after marker: String) -> Set<String> {
        guard let start = document.range(of: marker),
            let line = document[start.upperBound...].split(separator: "\n").first(where: { $0.contains("required: [") }),
            let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]")
        else { return [] }
        return Set(line[line.index(after: open)..<close].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    @Test func theSightingBodyHasExactlyTheDocumentedFields() throws {
        let sighting = makeSightings(1)[0]
        let body = try #require(FlatJSON.object(SightingPayload(sighting, stationID: "s", latitude: 1, longitude: 2).json))
        let required = Self.required(after: "    Sighting:")
        #expect(!required.isEmpty)
        #expect(required.isSubset(of: Set(body.keys)))
        #expect(Set(body.keys).subtracting(required) == ["rssi"], "rssi is the one optional field")
    }

    @Test func theBikeSchemaRequiresWhatTheDecoderRequires() {
        #expect(Self.required(after: "    Bike:") == ["id", "beaconMinor", "missing"])
    }
}
