import BikeRegistryCore
import Foundation

extension SQLRegistryStore {
    public func tally(_ limit: CountLimit, key: String) async throws -> CountLimit.Tally {
        guard
            let row = try await database.readRow(
                "SELECT counted, windowEnd FROM limitCount WHERE limitName = \(limit.name) AND limitKey = \(key)")
        else { return .none }
        return CountLimit.Tally(count: try row.decode(0), windowEnd: try row.decode(1))
    }

    public func count(_ limit: CountLimit, key: String, under everyone: CountLimit?, now: Date) async throws
        -> (counted: CountLimit.Tally, everyone: CountLimit.Tally?)
    {
        try await database.transaction { connection in
            let counted = try await LimitSQL.add(limit, key: key, now: now, connection)
            guard let everyone, limit.wait(counted: counted, now: now) == nil else { return (counted, nil) }
            return (counted, try await LimitSQL.add(everyone, key: CountLimit.everyone, now: now, connection))
        }
    }

    public func forgetEndedCounts(now: Date) async throws -> Int {
        try await database.write("DELETE FROM limitCount WHERE windowEnd <= \(now) RETURNING 1").count
    }
}

enum LimitSQL {
    /// One more for `key` under `limit`, in a new window where the last is over as `CountLimit.isOver` says (ended,
    /// give or take `CountLimit.slack`, or ending more than two windows past `now`); the count and the window's end
    /// as they now stand.
    static func add(_ limit: CountLimit, key: String, now: Date, _ connection: any SQLConnection) async throws
        -> CountLimit.Tally
    {
        let over: SQL =
            """
            limitCount.windowEnd <= \(now.addingTimeInterval(CountLimit.slack))
            OR limitCount.windowEnd > \(now.addingTimeInterval(2 * limit.window))
            """
        guard
            let row = try await connection.row(
                """
                INSERT INTO limitCount (limitName, limitKey, counted, windowEnd)
                VALUES (\(limit.name), \(key), 1, \(now.addingTimeInterval(limit.window)))
                ON CONFLICT (limitName, limitKey) DO UPDATE SET
                    counted = CASE WHEN \(over) THEN 1 ELSE limitCount.counted + 1 END,
                    windowEnd = CASE WHEN \(over) THEN excluded.windowEnd ELSE limitCount.windowEnd END
                RETURNING counted, windowEnd
                """)
        else { throw RegistryStoreError("the database returned no count for the limit \(limit.name)") }
        return CountLimit.Tally(count: try row.decode(0), windowEnd: try row.decode(1))
    }
}
