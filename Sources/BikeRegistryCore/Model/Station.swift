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

    package init(
        id: Int64, name: String, keyHash: String, latitude: Double, longitude: Double, createdAt: Date,
        revokedAt: Date? = nil, lastRefreshAt: Date? = nil, lastSightingAt: Date? = nil, userAgent: String? = nil
    ) {
        self.id = id
        self.name = name
        self.keyHash = keyHash
        self.latitude = latitude
        self.longitude = longitude
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.lastRefreshAt = lastRefreshAt
        self.lastSightingAt = lastSightingAt
        self.userAgent = userAgent
    }
}

/// A new station's checked values and key, made once whichever store keeps them.
package struct NewStationRecord {
    package var name: String
    package var latitude: Double
    package var longitude: Double
    package var key = Secrets.newToken(prefix: "bks_")

    package init(name: String, latitude: Double, longitude: Double) throws(RegistryStoreError) {
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

    package var exists: RegistryStoreError {
        RegistryStoreError("a station named \(name) exists already (revoked ones keep their name)")
    }
}
