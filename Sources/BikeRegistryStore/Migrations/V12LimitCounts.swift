extension RegistrySchema {
    static let v12LimitCounts = Migration(identifier: "v12-limit-counts") { _ in
        [
            // The limits on what anonymous networks do (registrations, wrong claim codes, finders' look-ups and
            // reports, mail links), counted here so every server of one database counts together and a restart
            // forgives nothing (issue 52): one row per limit and key (a network's hash), its count in the window
            // that ends at windowEnd. The sweep deletes the windows that have ended.
            """
            CREATE TABLE limitCount (
                limitName TEXT NOT NULL,
                limitKey TEXT NOT NULL,
                counted BIGINT NOT NULL,
                windowEnd DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (limitName, limitKey)
            )
            """,
            "CREATE INDEX limitCount_windowEnd ON limitCount(windowEnd)",
        ]
    }
}
