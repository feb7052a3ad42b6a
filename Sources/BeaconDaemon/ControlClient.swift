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
        public var description: String
        /// True when nothing is listening (no socket, or a socket nobody serves): the daemon is not running.
        public var notRunning: Bool
    }

    public static func send(_ request: String, path: String, timeoutSeconds: Int = 5) throws(Failure) -> ControlResponse {
        let socket: UnixSocket
        do {
            socket = try UnixSocket.connect(path: path, timeoutSeconds: timeoutSeconds)
        } catch {
            switch error.errno {
            case ENOENT, ECONNREFUSED:
                throw Failure(description: "beacond is not running (nothing listens on \(path))", notRunning: true)
            case EACCES, EPERM:
                throw Failure(
                    description: "no permission to use \(path): run as root or as a member of the beacond group", notRunning: false)
            default:
                throw Failure(description: "cannot reach beacond: \(error)", notRunning: true)
            }
        }
        let line = Array(#"{"request":"\#(request)"}"#.utf8) + [UInt8(ascii: "\n")]
        let answer: [UInt8]
        do {
            try socket.writeAll(line)
            answer = try socket.readAll(limit: 4 * 1024 * 1024)
        } catch {
            throw Failure(description: "beacond did not answer on \(path): \(error)", notRunning: false)
        }
        guard let response = try? JSONDecoder().decode(ControlResponse.self, from: Data(answer)) else {
            throw Failure(description: "beacond answered something that is not a control response", notRunning: false)
        }
        return response
    }
}
