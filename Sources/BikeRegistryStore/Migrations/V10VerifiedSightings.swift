extension RegistrySchema {
    static let v10VerifiedSightings = Migration(identifier: "v10-verified-sightings") { _ in
        [
            // Whether the server verified the identity heard against the bike's rotating beacon's key (issue 41).
            // A rotating beacon's bike's sighting without it is unverified: kept, owing nothing, and counted for
            // the operator (`stats`, through the bike: no lookup of the bike when a sighting is written).
            "ALTER TABLE sighting ADD COLUMN verifiedRotating BOOLEAN NOT NULL DEFAULT FALSE"
        ]
    }
}
