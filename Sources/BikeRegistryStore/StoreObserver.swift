/// Told of each operation a store asks of its database: `serve --metrics-listen` gives one (`RegistryMetrics`), for
/// the operation's duration, the operations under way and the database's failures by kind. A store without one does
/// the same work and measures nothing.
public protocol StoreObserver: Sendable {
    /// The operation is about to ask for a connection (PostgreSQL's pool, SQLite's writer or a reader).
    func began(_ operation: StoreOperation)
    /// It ended after `duration`. `failure` is the kind of the database's failure that ended it; nil when it
    /// succeeded, or when the store's own rule refused it (a `RegistryStoreError` it threw, a cancelled request):
    /// those say nothing of the database.
    func ended(_ operation: StoreOperation, after duration: Duration, failure: StoreFailure?)
}

/// What a store asks of its database, as `SQLDatabase` says it: a statement on its own that reads or writes, a
/// snapshot, a transaction; and PostgreSQL's sightings posted at one moment, written in one statement.
public enum StoreOperation: String, Sendable, CaseIterable {
    case read, write, snapshot, transaction
    case sightingBatch = "sighting_batch"
}

/// Why the database failed an operation, in as few kinds as an operator acts on.
public enum StoreFailure: String, Sendable, CaseIterable {
    /// No host takes writes, a connection broke or could not be made, the host is shutting down or read-only.
    case unavailable
    /// The operation passed the store's deadline.
    case timeout
    /// SQLite's file stayed locked past its busy timeout.
    case busy
    /// A deadlock or serialization failure that was not run again.
    case conflict
    /// A constraint refused a row (the store writes around them, so one is a bug).
    case constraint
    /// The disk: full, or an I/O error.
    case storage
    case other
}

/// An operation measured for the observer, if there is one.
struct StoreMeasure: Sendable {
    let observer: (any StoreObserver)?

    /// `body`, told to the observer as `operation`, its failure's kind said by `classify` (nil: not the database's).
    func run<Value>(
        _ operation: StoreOperation, classify: (any Error) -> StoreFailure?, _ body: () async throws -> Value
    ) async throws -> Value {
        guard let observer else { return try await body() }
        let started = ContinuousClock.now
        observer.began(operation)
        do {
            let value = try await body()
            observer.ended(operation, after: .now - started, failure: nil)
            return value
        } catch {
            observer.ended(operation, after: .now - started, failure: classify(error))
            throw error
        }
    }
}
