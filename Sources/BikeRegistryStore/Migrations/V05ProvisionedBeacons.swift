extension RegistrySchema {
    static let v5ProvisionedBeacons = Migration(identifier: "v5-provisioned-beacons") { _ in
        [
            // Beacons the operator issued or imported, each with the hash of the code on its label (issue 38).
            // Whether one is claimed is whether a bike holds its identity, so deleting the bike frees it. Bikes
            // registered before this had no code: they stay registered, and count as claimed.
            """
            CREATE TABLE beacon (
                uuid TEXT NOT NULL,
                major INTEGER NOT NULL,
                minor INTEGER NOT NULL,
                codeHash TEXT NOT NULL UNIQUE,
                issuedAt DOUBLE PRECISION NOT NULL,
                revokedAt DOUBLE PRECISION,
                PRIMARY KEY (uuid, major, minor)
            )
            """
        ]
    }
}
