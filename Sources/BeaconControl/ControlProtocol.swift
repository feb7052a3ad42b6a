#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The control socket's protocol: one JSON object per line each way, then the server closes.
///
///     → {"request":"status"}
///     ← {"ok":true,"status":{…StatusReport…}}
///     → {"request":"refresh"}
///     ← {"ok":true,"message":"refresh requested"}
///
/// An unknown or malformed request gets `{"ok":false,"error":"…"}`.
public struct ControlRequest: Codable, Sendable, Equatable {
    public var request: String

    public init(request: String) { self.request = request }

    public static let known = ["status", "refresh", "retry-dead-letters"]
    /// Requests larger than this are refused unread: nothing the protocol has needs more.
    public static let maximumBytes = 4_096
}

public struct ControlResponse: Codable, Sendable, Equatable {
    public var ok: Bool
    public var error: String?
    public var message: String?
    public var status: StatusReport?

    public init(ok: Bool, error: String? = nil, message: String? = nil, status: StatusReport? = nil) {
        self.ok = ok
        self.error = error
        self.message = message
        self.status = status
    }

    public var line: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data(#"{"ok":false,"error":"response could not be encoded"}"#.utf8)
        return Array(data) + [UInt8(ascii: "\n")]
    }
}
