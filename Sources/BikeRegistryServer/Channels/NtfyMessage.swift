import BikeRegistryCore
import BikeRegistryStore
import Foundation

/// A notification as one ntfy publish: a short text and the Title, Tags, Priority and Click headers. Click opens the
/// café's position in a map (OpenStreetMap's link works in a phone's browser and in map apps).
struct NtfyMessage: Equatable {
    var body: String
    var headers: [(String, String)]

    static func == (left: NtfyMessage, right: NtfyMessage) -> Bool {
        left.body == right.body && left.headers.map { "\($0.0):\($0.1)" } == right.headers.map { "\($0.0):\($0.1)" }
    }

    init(_ payload: NotificationPayload) {
        let station = payload.data.station
        let time =
            ISOTime.readable(payload.data.seenAt)
            + (payload.data.timesAsReceived == true ? " (the station's clock was wrong; shown as received)" : "")
        let place = String(format: "%.5f, %.5f", station.latitude, station.longitude)
        switch payload.type {
        case .seen:
            body = "Your bike was heard at \(station.name) (\(place)) at \(time), \(payload.data.proximity)."
        case .left:
            body = "Your bike is no longer heard at \(station.name) (\(place)); last heard at \(time)."
        case .test:
            body =
                "A test from bike-registry at \(time): when a station hears your missing bike, a message here "
                + "says where."
        }
        let title: String =
            switch payload.type {
            case .seen: "Bike seen at \(station.name)"
            case .left: "Bike left \(station.name)"
            case .test: "Test from bike-registry"
            }
        headers = [
            ("Title", Self.headerValue(title)),
            ("Tags", payload.type == .seen ? "motorcycle,warning" : "motorcycle"),
            ("Priority", payload.type == .seen ? "high" : "default"),
            (
                "Click",
                "https://www.openstreetmap.org/?mlat=\(station.latitude)&mlon=\(station.longitude)#map=18/\(station.latitude)/\(station.longitude)"
            ),
        ]
    }

    /// A message about the bike's report: the reminder before it lapses, the lapse, a pause.
    init(_ notice: ReportNotice) {
        let lapses = notice.lapsesAt.map(ISOTime.readable) ?? "soon"
        switch notice.type {
        case .lapsing:
            body =
                "Your missing report lapses \(lapses). If the bike is still missing, open its page and press "
                + "\"Still missing\"; otherwise stations stop listening for it then."
        case .lapsed:
            body =
                "Your missing report lapsed \(lapses): stations no longer listen for the bike. Report it missing "
                + "again on its page if it still is."
        case .paused:
            body =
                "Someone reported your bike's beacon as placed on them without their consent. Its messages are paused "
                + "until the registry's operator has looked at the report."
        }
        let title: String =
            switch notice.type {
            case .lapsing: "Missing report lapses soon"
            case .lapsed: "Missing report lapsed"
            case .paused: "Bike's messages paused"
            }
        headers = [
            ("Title", title), ("Tags", "motorcycle"), ("Priority", notice.type == .paused ? "high" : "default"),
        ]
    }

    /// A header value as is when it is printable ASCII; otherwise RFC 2047's UTF-8 encoded word, which ntfy decodes
    /// (a café's name is often not ASCII).
    static func headerValue(_ text: String) -> String {
        if text.utf8.allSatisfy({ (0x20..<0x7f).contains($0) }) { return text }
        return "=?UTF-8?B?" + Data(text.utf8).base64EncodedString() + "?="
    }
}
