import BeaconCapture
import BeaconWire
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT/SIGTERM as a flag a polling loop checks, so the scan is disabled and files closed on the way out
/// (`beacond record`, `beacond scan`).
enum StopSignal {
    private static let flag = Atomic<Bool>(false)

    static var received: Bool { flag.load(ordering: .relaxed) }

    static func install() {
        let handler: @convention(c) (Int32) -> Void = { _ in StopSignal.flag.store(true, ordering: .relaxed) }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
    }

    /// Polls `radio` until a stop signal or the end of `duration` (none: until a signal), handing each event to
    /// `body` and calling `afterEachPoll` between polls. Returns the error that ended it early, if one did.
    static func poll(
        _ radio: any LiveRadio, for duration: Double?, afterEachPoll: () -> Void = {},
        _ body: (CaptureRecord) throws -> Void
    ) -> (any Error)? {
        let deadline = duration.map { Date().addingTimeInterval($0) }
        while !received, deadline.map({ Date() < $0 }) ?? true {
            do {
                try radio.poll(timeoutMilliseconds: 100, body)
            } catch {
                return error
            }
            afterEachPoll()
        }
        return nil
    }
}
