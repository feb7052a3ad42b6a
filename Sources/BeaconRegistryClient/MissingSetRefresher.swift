public import BeaconEngine
import BeaconPOSIX
public import BeaconWire
public import DaemonSupport
import ListChanges
import LockedValue
public import Logging

/// Keeps the engine's missing-bike set current: loads the offline cache at start, then asks the registry
/// every `interval` (±20 % jitter), conditionally (ETag / Last-Modified), backing off exponentially while it
/// fails, and at once when `refreshNow()` is called. A bad answer never replaces a good set.
public final class MissingSetRefresher<C: Clock>: Sendable where C.Duration == Duration {
    private let registry: any Registry
    private let cache: BikeCache?
    private let regions: [BeaconRegion]
    private let mailbox: MissingSetMailbox
    private let clock: C
    private let logger: Logger
    private let wallClock: @Sendable () -> Int64
    private let doorbell = Doorbell()
    private let state: LockedValue<State>
    /// A first start's attempt still under way when its patience ran out, for `run` to finish.
    private let carriedOver = LockedValue<Task<Bool, Never>?>(nil)

    struct State {
        var status: RegistrySyncStatus
        var validators: CacheValidators?
        /// The registry the validators came from: another one's (after a reload changed it) are not sent.
        var validatorsFrom: String?
        /// The ETag of the list the cache holds whole (version 2), which the next refresh asks the changes since.
        var heldWhole: String?
        var policy: RefreshPolicy
    }

    public init(
        registry: any Registry, cache: BikeCache?, regions: [BeaconRegion], mailbox: MissingSetMailbox, clock: C,
        interval: Duration = .seconds(300), jitter: Double = 0.2,
        backoff: Backoff = Backoff(base: .seconds(10), cap: .seconds(1_800)), logger: Logger,
        wallClock: @escaping @Sendable () -> Int64
    ) {
        self.registry = registry
        self.cache = cache
        self.regions = regions
        self.mailbox = mailbox
        self.clock = clock
        self.logger = logger
        self.wallClock = wallClock
        self.state = LockedValue(
            State(
                status: RegistrySyncStatus(registry: registry.displayName),
                policy: RefreshPolicy(interval: interval, jitter: jitter, backoff: backoff)))
    }

    /// The registry is named as it is now: a SIGHUP may have pointed the refresher at another one.
    public var status: RegistrySyncStatus {
        var status = state.withLock { $0.status }
        status.registry = registry.displayName
        return status
    }

    /// Asks the running loop to refresh now (the control socket's `refresh`, SIGHUP).
    public func refreshNow() { doorbell.ring() }

    /// Publishes the cached set, if there is a usable one. Call before capture starts. `progress` is told the bytes
    /// read so far, a piece of the file at a time.
    @discardableResult
    public func loadCache(progress: (Int) -> Void = { _ in }) -> Bool {
        guard let cache else { return false }
        do {
            guard let contents = try cache.load(regions: regions, progress: progress) else {
                logger.notice("no cached bike list yet", metadata: ["cache.path": "\(cache.path)"])
                return false
            }
            // A list is its registry's: another registry's bike ids mean nothing to this one, which would keep every
            // sighting reported under them quietly (an unknown bike) and tell no owner. So a station pointed at a new
            // registry starts as a first start does, waiting for that registry's list.
            // Compared, and shown, redacted: the cache names its registry as `displayName` does, but one written by
            // hand or by an older beacond may carry a key in its URL.
            let source = RegistryAddress.redacted(contents.source)
            guard source == registry.displayName else {
                logger.notice(
                    "the cached bike list is another registry's; not used",
                    metadata: ["cache.source": "\(source)", "registry": "\(registry.displayName)"])
                return false
            }
            let set = contents.set
            mailbox.publish(set)
            state.withLock { state in
                state.validators = contents.validators
                state.validatorsFrom = source
                state.heldWhole = contents.checksum == nil ? nil : contents.validators.etag
                state.status.source = .cache
                state.status.missing = set.count
                state.status.fetchedAt = contents.fetchedAt
            }
            logger.info(
                "missing bikes loaded from the cache",
                metadata: ["bikes.missing": "\(set.count)", "cache.fetchedAt": "\(contents.fetchedAt)"])
            return true
        } catch  where error.code == .damaged {
            // Moved aside rather than left: the next good list is written in its place, and the bytes are kept.
            do {
                let movedTo = try DamagedFile.moveAside(cache.path, wallMilliseconds: wallClock())
                logger.error(
                    "bike cache damaged; moved aside, starting without it",
                    metadata: ["error": "\(error)", "cache.movedTo": "\(movedTo)"])
            } catch let moveError {
                logger.error(
                    "bike cache damaged and cannot be moved aside; starting without it",
                    metadata: ["error": "\(error)", "move.error": "\(moveError)"])
            }
            return false
        } catch {
            logger.error("bike cache unusable; starting without it", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// One refresh attempt; returns whether it succeeded.
    @discardableResult
    public func refreshOnce() async -> Bool { await refresh(askingChanges: true) }

    /// A refresh, asking only the changes since the list the cache holds whole when `askingChanges` and there is
    /// one; the whole list otherwise.
    private func refresh(askingChanges: Bool) async -> Bool {
        let started = wallClock()
        let source = registry.displayName
        let (validators, heldWhole) = state.withLock { state -> (CacheValidators?, String?) in
            state.status.lastAttempt = started
            state.status.requestStartedAt = started
            return state.validatorsFrom == source ? (state.validators, state.heldWhole) : (nil, nil)
        }
        defer { state.withLock { $0.status.requestStartedAt = nil } }
        let recording = cache.map { cache in
            ListRecording(
                cache: cache, changesSince: askingChanges ? heldWhole : nil, fetchedAt: started, source: source)
        }
        do {
            switch try await registry.fetchMissing(validators: validators, regions: regions, recording: recording) {
            case .notModified:
                let now = wallClock()
                state.withLock { state in
                    state.status.lastSuccess = now
                    state.status.lastError = nil
                    state.status.lastErrorStatus = nil
                    state.status.consecutiveFailures = 0
                }
                logger.debug("bike list not modified")
                return true
            case .list(let set, let validators, let recorded):
                return take(set, validators: validators, from: source, recorded: recorded)
            case .changes(let changes, let validators):
                return await apply(changes, validators: validators, from: source)
            }
        } catch {
            state.withLock { state in
                state.status.lastError = error.message
                if case .status(let code) = error.code {
                    state.status.lastErrorStatus = code
                } else {
                    state.status.lastErrorStatus = nil
                }
                state.status.consecutiveFailures += 1
            }
            logger.warning("bike list refresh failed; keeping the set we have", metadata: ["error": "\(error.message)"])
            return false
        }
    }

    /// The changes since the list the cache holds, applied to it (`BikeCache.applying`) and taken when the list they
    /// make is the registry's (its checksum); otherwise said, in the log and `status`, and the whole list fetched.
    private func apply(_ changes: ListChanges, validators: CacheValidators, from source: String) async -> Bool {
        guard let cache else { return await refresh(askingChanges: false) }
        let refused: String
        do throws(RegistryError) {
            let (set, file) = try cache.applying(
                changes, regions: regions, validators: validators, fetchedAt: wallClock(), source: source)
            if file.checksum.description == changes.checksum, file.checksum.count == changes.count {
                return take(set, validators: validators, from: source, recorded: file, changed: true)
            }
            file.abandon()
            refused =
                "the changes to \(changes.version) did not add up (checksum \(file.checksum) of \(file.checksum.count) bikes, the registry's \(changes.checksum) of \(changes.count))"
        } catch {
            refused = "the changes to \(changes.version) could not be applied: \(error.message)"
        }
        let now = wallClock()
        state.withLock { state in
            state.heldWhole = nil
            state.status.changesRefused = refused
            state.status.changesRefusedAt = now
        }
        logger.error("\(refused); fetching the whole list")
        return await refresh(askingChanges: false)
    }

    /// A new list from the registry, whole or by its changes: matched against from now on and cached (the list whole,
    /// `recorded`, when the fetch wrote it; otherwise the set), unless `RefreshPolicy` refuses it.
    private func take(
        _ set: MissingBikeSet, validators: CacheValidators, from source: String, recorded: ListFile?,
        changed: Bool = false
    ) -> Bool {
        let statistics = set.statistics
        let note: String?
        switch RefreshPolicy.verdict(on: statistics, kept: mailbox.latest.count) {
        case .refuse(let reason):
            recorded?.abandon()
            state.withLock { state in
                state.status.lastError = reason
                state.status.lastErrorStatus = nil
                state.status.refusedList = reason
                state.status.skippedEntries = statistics.rejectedTotal
                state.status.consecutiveFailures += 1
            }
            logger.error(
                "bike list refused",
                metadata: ["reason": "\(reason)", "bikes.skipped": "\(statistics.rejectedTotal)"])
            return false
        case .take(let taken):
            note = taken
            if taken != nil {
                logger.error(
                    "bike list mostly unusable; taken, as there is no list yet",
                    metadata: ["bikes.skipped": "\(statistics.rejectedTotal)"])
            }
        }
        mailbox.publish(set)
        let now = wallClock()
        state.withLock { state in
            state.validators = validators
            state.validatorsFrom = source
            state.heldWhole = nil
            if changed { state.status.changesApplied += 1 } else { state.status.wholeLists += 1 }
            state.status.source = .registry
            state.status.missing = set.count
            state.status.skippedEntries = set.statistics.rejectedTotal
            state.status.refusedList = note
            state.status.fetchedAt = now
            state.status.lastSuccess = now
            state.status.lastError = nil
            state.status.lastErrorStatus = nil
            state.status.consecutiveFailures = 0
        }
        logger.info(
            changed ? "missing bikes changed" : "missing bikes refreshed",
            metadata: ["bikes.missing": "\(set.count)", "bikes.skipped": "\(set.statistics.rejectedTotal)"])
        do {
            if let recorded, let cache {
                try cache.commit(recorded)
                state.withLock { $0.heldWhole = validators.etag }
            } else {
                try cache?.store(.init(set: set, validators: validators, fetchedAt: now, source: source))
            }
        } catch {
            logger.error("cannot write the bike cache", metadata: ["error": "\(error)"])
        }
        return true
    }

    /// A first start's attempt at the registry (there is no cache, so without it nothing can be detected), waited
    /// for at most `patience`: a registry slow to send a big list must not hold capture, and READY=1, past the
    /// unit's start timeout. An attempt still under way then is not abandoned (the list is still worth having);
    /// `run` takes its result as its own first. Returns whether the list came within `patience`.
    @discardableResult
    public func firstRefresh(patience: Duration) async -> Bool {
        let finished = Doorbell()
        let result = LockedValue<Bool?>(nil)
        let attempt = Task {
            let succeeded = await refreshOnce()
            result.withLock { $0 = succeeded }
            finished.ring()
            return succeeded
        }
        await finished.wait(timeout: patience, clock: clock)
        if let succeeded = result.withLock({ $0 }) { return succeeded }
        carriedOver.withLock { $0 = attempt }
        logger.warning(
            "no bike list within \(patience.components.seconds) s of starting; capture starts without one while the request carries on",
            metadata: ["registry": "\(registry.displayName)"])
        return false
    }

    /// Refreshes until cancelled.
    public func run() async {
        var carried = carriedOver.withLock { $0.take() }
        while !Task.isCancelled {
            let succeeded: Bool
            if let attempt = carried {
                carried = nil
                succeeded = await withTaskCancellationHandler {
                    await attempt.value
                } onCancel: {
                    attempt.cancel()
                }
            } else {
                succeeded = await refreshOnce()
            }
            let delay = state.withLock { state in
                var random = SystemRandomNumberGenerator()  // stateless; see SightingPoster.run
                return state.policy.delay(afterSuccess: succeeded, using: &random)
            }
            let next = wallClock() + delay.saturatingNanoseconds / 1_000_000
            state.withLock { $0.status.nextRefresh = next }
            await doorbell.wait(timeout: delay, clock: clock)
        }
    }
}

/// What `status` says about the missing-bike set and the registry. Times are milliseconds since the epoch.
public struct RegistrySyncStatus: Hashable, Sendable {
    public enum Source: String, Hashable, Sendable {
        /// Nothing yet: no cache and no answer from the registry.
        case none
        /// The offline cache: the registry has not answered since start.
        case cache
        case registry
    }
    public var registry: String
    public var source: Source = .none
    public var missing = 0
    public var skippedEntries = 0
    /// When the set in use was fetched from the registry (whether it came to us directly or via the cache).
    public var fetchedAt: Int64?
    public var lastAttempt: Int64?
    public var lastSuccess: Int64?
    public var nextRefresh: Int64?
    public var lastError: String?
    /// The HTTP status of the last failure, when it was an answer (401, 307…) rather than no answer.
    public var lastErrorStatus: Int?
    public var consecutiveFailures = 0
    /// When the request under way started; nil between requests.
    public var requestStartedAt: Int64?
    /// Why the last list from the registry was not trusted (mostly unusable entries), while that stands.
    public var refusedList: String?
    /// Lists taken whole from the registry since start, and lists followed by their changes.
    public var wholeLists = 0
    public var changesApplied = 0
    /// The last changes that did not make the registry's list (its checksum), and when: the whole list was fetched.
    public var changesRefused: String?
    public var changesRefusedAt: Int64?

    public init(registry: String) { self.registry = registry }

    /// How old the set in use is, nil with no set.
    public func age(now: Int64) -> Duration? { fetchedAt.map { .milliseconds(now - $0) } }
}
