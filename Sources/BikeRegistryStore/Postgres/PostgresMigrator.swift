import BikeRegistryCore
import Logging
import PostgresNIO

/// Runs `RegistrySchema`'s migrations not yet recorded, in one transaction under an advisory lock, so two servers
/// starting at once against a new database do not both create it. PostgreSQL's DDL is transactional: a migration
/// that fails leaves nothing behind.
enum PostgresMigrator {
    /// Any fixed number; every bike-registry takes the same one.
    static let lockKey: Int64 = 0x6269_6B65_7265_67

    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS registry_migrations (identifier TEXT PRIMARY KEY)", logger: logger)
            var applied = Set<String>()
            for try await identifier in try await connection.query(
                "SELECT identifier FROM registry_migrations", logger: logger
            ).decode(String.self) {
                applied.insert(identifier)
            }
            for migration in RegistrySchema.migrations where !applied.contains(migration.identifier) {
                for statement in migration.statements(.postgres) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO registry_migrations (identifier) VALUES (\(migration.identifier))", logger: logger)
                logger.info("registry database migrated", metadata: ["migration": "\(migration.identifier)"])
            }
        }
    }
}
