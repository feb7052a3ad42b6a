extension RegistrySchema {
    static let v9RotatingBeacons = Migration(identifier: "v9-rotating-beacons") { _ in
        [
            // Rotating beacons (issue 41, docs/rotating-beacon.md): no fixed identity, so a table of their own,
            // named by id. The key is sealed under the operator's key file (BeaconKeySealer), with the id as
            // its additional data; the claim code is kept as its hash, unique across both tables of beacons.
            // clockOffset is what verified sightings taught of the beacon's clock (seconds, whole periods);
            // bikeId the bike its code registered.
            """
            CREATE TABLE rotatingBeacon (
                id TEXT PRIMARY KEY,
                uuid TEXT NOT NULL,
                period INTEGER NOT NULL,
                sealedKey TEXT NOT NULL,
                codeHash TEXT NOT NULL UNIQUE,
                issuedAt DOUBLE PRECISION NOT NULL,
                revokedAt DOUBLE PRECISION,
                clockOffset BIGINT NOT NULL DEFAULT 0,
                bikeId TEXT UNIQUE
            )
            """
        ]
    }
}
