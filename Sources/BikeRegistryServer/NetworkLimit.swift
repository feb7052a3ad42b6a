import BikeRegistryCore
import BikeRegistryStore
import Foundation

/// A limit on what one network (`ClientNetwork`) does, under a cap on everyone together where one is given, so that
/// the many networks one attacker holds do not each get a whole budget. Counted in the database (`CountLimit`), so
/// every server of one database counts together and a restart forgives nothing (issue 52). A network is kept only
/// as its hash, and only until its window ends (the sweep deletes it then).
struct NetworkLimit: Sendable {
    let perNetwork: CountLimit
    let everyone: CountLimit?
    let database: any RegistryStore
    /// Told of each refusal, by the name of the limit that refused (`CountLimit.name`).
    let metrics: RegistryMetrics?

    /// Counts one from `network`: nil when it may go ahead, otherwise the whole seconds to wait. Everyone's cap is
    /// read first, so that while it is reached nothing is written per network and the table cannot grow with the
    /// networks an attacker holds; a network over its own limit is refused before it counts against everyone's.
    func count(_ network: String, now: Date) async throws -> Int? {
        if let wait = try await everyoneWaits(now: now) { return wait }
        let counts = try await database.count(perNetwork, key: Self.key(network), under: everyone, now: now)
        if let wait = perNetwork.wait(counted: counts.counted, now: now) { return refused(by: perNetwork, wait) }
        guard let everyone, let tally = counts.everyone else { return nil }
        return everyone.wait(counted: tally, now: now).map { refused(by: everyone, $0) }
    }

    /// Whether `network` may do one more now, counting nothing (`note` counts what turns out to count, such as a
    /// claim code found wrong): nil when it may, otherwise the whole seconds to wait.
    func check(_ network: String, now: Date) async throws -> Int? {
        if let wait = try await everyoneWaits(now: now) { return wait }
        return perNetwork.wait(before: try await database.tally(perNetwork, key: Self.key(network)), now: now)
            .map { refused(by: perNetwork, $0) }
    }

    private func refused(by limit: CountLimit, _ wait: Int) -> Int {
        metrics?.refused(by: limit.name)
        return wait
    }

    /// Counts one from `network` (and for everyone, unless the network is past its own limit).
    func note(_ network: String, now: Date) async throws {
        _ = try await database.count(perNetwork, key: Self.key(network), under: everyone, now: now)
    }

    private func everyoneWaits(now: Date) async throws -> Int? {
        guard let everyone else { return nil }
        return everyone.wait(before: try await database.tally(everyone, key: CountLimit.everyone), now: now)
            .map { refused(by: everyone, $0) }
    }

    /// The network's key in the database: its hash, so the table holds no address as written.
    static func key(_ network: String) -> String { Secrets.hash(network) }
}
