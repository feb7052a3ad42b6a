public import Foundation

/// A café's station as the operator added it.
public struct Station: Sendable, Equatable {
    public var id: Int64
    public var name: String
    /// SHA-256 of its key (`Secrets.hash`): what a request's key is looked up by. Never the key.
    public var keyHash: String
    public var latitude: Double
    public var longitude: Double
    public var createdAt: Date
    public var revokedAt: Date?
    public var lastRefreshAt: Date?
    /// When its latest sighting was received (read from its sightings by `stations()`; nil from a key lookup).
    public var lastSightingAt: Date?
    /// The station's User-Agent at its last refresh (beacond/VERSION).
    public var userAgent: String?
}

/// A new station's checked values and key, made once whichever store keeps them.
struct NewStationRecord {
    var name: String
    var latitude: Double
    var longitude: Double
    var key = Secrets.newToken(prefix: "bks_")

    init(name: String, latitude: Double, longitude: Double) throws(RegistryStoreError) {
        guard !name.isEmpty, name.count <= 200 else {
            throw RegistryStoreError("a station's name is 1 to 200 characters")
        }
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw RegistryStoreError("latitude is -90 to 90 and longitude -180 to 180")
        }
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
    }

    var exists: RegistryStoreError {
        RegistryStoreError("a station named \(name) exists already (revoked ones keep their name)")
    }
}
