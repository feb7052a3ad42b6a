import BeaconPOSIX

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The client end of the control socket, for `beacond status` and `beacond refresh`.
public enum ControlClient {
    public struct Failure: Error, CustomStringConvertible {
        public enum Kind: Sendable {
            /// Nothing is listening (no socket, or a socket nobody serves): the daemon is not running.
            case notRunning
            /// The socket is there but this user may not use it.
            case permission
            /// Connected, but no whole answer came in time (a daemon that hangs, or is too busy).
            case noAnswer
        }

        public var description: String
        public var kind: Kind

        public var notRunning: Bool { kind == .notRunning }

        /// `beacond status`'s exit status for it: 3 not running, 4 no permission, 5 no answer.
        public var exitCode: Int32 {
            switch kind {
            case .notRunning: 3
            case .permission: 4
            case .noAnswer: 5
            }
        }
    }

    public static func send(_ request: String, path: String, timeoutSeconds: Int = 5) throws(Failure) -> ControlResponse
    {
        let socket: UnixSocket
        do {
            socket = try UnixSocket.connect(path: path, timeoutSeconds: timeoutSeconds)
        } catch {
            switch error.errno {
            case ENOENT, ECONNREFUSED:
                throw Failure(description: "beacond is not running (nothing listens on \(path))", kind: .notRunning)
            case EACCES, EPERM:
                throw Failure(
                    description: "no permission to use \(path): run as root or as a member of the beacond group",
                    kind: .permission)
            default:
                throw Failure(description: "cannot reach beacond: \(error)", kind: .notRunning)
            }
        }
        let line = Array(#"{"request":"\#(request)"}"#.utf8) + [UInt8(ascii: "\n")]
        let answer: [UInt8]
        do {
            try socket.writeAll(line)
            answer = try socket.readAll(limit: 4 * 1024 * 1024)
        } catch {
            throw Failure(
                description: "beacond did not answer on \(path) within \(timeoutSeconds) s: \(error)", kind: .noAnswer)
        }
        guard let response = try? JSONDecoder().decode(ControlResponse.self, from: Data(answer)) else {
            throw Failure(description: "beacond answered something that is not a control response", kind: .noAnswer)
        }
        return response
    }
}
