/// Runs `body`, then `teardown`, and awaits both, whether `body` returned or threw.
///
/// A test's servers and databases are stopped before the test ends. `defer` cannot await, and a
/// `defer { Task { … } }` leaves the stop to a task that outlives its test, racing the next test for ports,
/// files and both cores.
public func withTeardown<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ teardown: () async -> Void,
    _ body: () async throws -> T
) async rethrows -> T {
    let result: T
    do {
        result = try await body()
    } catch {
        await teardown()
        throw error
    }
    await teardown()
    return result
}
