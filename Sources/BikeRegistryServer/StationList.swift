import BikeRegistryCore
import Foundation
import ListChanges
import NIOCore

/// The stations' list: each missing bike as `GET /bikes` lists it (`ListedEntry`, the format beacond shares), in the
/// byte order of the bikes' ids, whatever the database's collation, so that every server of one database lists the
/// same bytes and a station's changes name bikes in one order.
enum StationList {
    /// The bikes of one version of the list, rotating ones by the identities of the moment (`RotatingListing`). A
    /// rotating bike whose key the server cannot open is left out (`RotatingListing.unopened`): its entry would match
    /// nothing.
    static func entries(_ bikes: [MissingBike], identities rotating: [String: [[Int]]]) -> [ListedEntry] {
        bikes.compactMap { bike -> ListedEntry? in
            guard let beacon = bike.rotating else {
                return ListedEntry(
                    id: bike.id, uuid: bike.uuid, major: bike.major, minor: bike.minor, make: bike.make,
                    model: bike.model, colour: bike.colour)
            }
            guard let identities = rotating[bike.id] else { return nil }
            return ListedEntry(
                id: bike.id, uuid: beacon.uuid, major: nil, minor: 0,
                identities: identities.map { UInt32($0[0]) << 16 | UInt32($0[1]) }, make: bike.make, model: bike.model,
                colour: bike.colour)
        }.sorted { ListedEntry.idOrder($0.id, $1.id) }
    }

    /// `GET /bikes`'s body (docs/registry-api.yaml, Bike): encoded once per version of the list and, with rotating
    /// bikes, once per window (`RegistrySnapshot`).
    static func encode(_ entries: [ListedEntry]) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONBody.encoder.encode(entries))
    }
}
