import BikeRegistryCore
import BikeRegistryMail
import BikeRegistryStore
import Foundation

/// Writes a notification as the e-mail its owner receives: every message a webhook gets (a sighting, a test, a
/// report's reminder, lapse or pause) and the confirmation that comes before them. Pure: the same notification, bike
/// and settings give the same message, so a retry sends the bytes the first attempt did.
///
/// The subject names the bike and the café. The body says where (the café's name, its coordinates, an
/// OpenStreetMap link), when (UTC, with its offset), how near, and what to do; the HTML part says the same with no
/// remote image, style sheet or script (nothing a mail client loads on opening). Owner-typed words (the bike's
/// make, model and colour) and the café's name are escaped in HTML and flattened in the subject.
struct MailComposer: Sendable {
    let from: MailSender
    /// `--public-url`: the base of the confirmation and unsubscribe links.
    let publicURL: String

    /// Nil when the notification's payload is not one this registry writes.
    func message(for notification: PendingNotification, bike: Bike?) -> MailMessage? {
        guard let to = MailAddress(notification.target) else { return nil }
        var content: Content
        var unsubscribe: String?
        if let confirmation = EmailConfirmationNotice.decode(notification.payload) {
            content = confirm(confirmation)
        } else {
            guard let bike, let key = bike.email?.unsubscribeKey else { return nil }
            unsubscribe = publicURL + "/unsubscribe/" + key
            let seen = publicURL + "/seen/" + key
            if let notice = ReportNotice.decode(notification.payload) {
                content = report(notice, bike: bike)
            } else if let payload = try? NotificationPayload.decode(notification.payload) {
                content = sighting(payload, bike: bike)
                content.paragraphs.append("Every sighting of it, in your own time zone: \(seen)")
                content.links.append(seen)
            } else {
                return nil
            }
        }
        var text = content.paragraphs.joined(separator: "\n\n")
        var html = content.paragraphs.map { "<p>" + Self.escaped($0, links: content.links) + "</p>" }
        if let unsubscribe {
            let footer =
                "You receive this because this address was confirmed for the bike at bike-registry. To stop these "
                + "messages: \(unsubscribe)"
            text += "\n\n-- \n" + footer
            html.append(
                "<hr><p><small>" + Self.escaped(footer, links: [unsubscribe]) + "</small></p>")
        }
        return MailMessage(
            from: from, to: to, subject: content.subject, date: notification.createdAt, messageKey: notification.id,
            text: text + "\n",
            html: "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + Self.escaped(content.subject)
                + "</title></head><body>\n" + html.joined(separator: "\n") + "\n</body></html>\n",
            unsubscribeURL: unsubscribe)
    }

    struct Content {
        var subject: String
        var paragraphs: [String]
        /// URLs in the paragraphs that the HTML part makes links.
        var links: [String] = []
    }

    private func confirm(_ notice: EmailConfirmationNotice) -> Content {
        let link = publicURL + "/confirm/" + notice.code
        return Content(
            subject: "Confirm your address for bike-registry",
            paragraphs: [
                "Someone asked bike-registry to tell this address when stations hear a missing motorbike.",
                "If that was you, confirm the address here (the link works until \(Self.time(notice.expiresAt))): \(link)",
                "If it was not you, do nothing: this address gets no other message unless it is confirmed.",
            ], links: [link])
    }

    private func sighting(_ payload: NotificationPayload, bike: Bike) -> Content {
        let station = payload.data.station
        let name = Self.name(bike)
        let map = Self.map(latitude: station.latitude, longitude: station.longitude)
        let time =
            Self.time(payload.data.seenAt)
            + (payload.data.timesAsReceived == true
                ? " (the station's clock was wrong: this is when the registry heard from it)" : "")
        let place = "\(station.name), at \(String(format: "%.5f, %.5f", station.latitude, station.longitude))"
        let page = "To change anything, open the bike's own page, from the link you kept when you registered it."
        switch payload.type {
        case .seen:
            return Content(
                subject: "\(name) was seen at \(station.name)",
                paragraphs: [
                    "\(name) was heard at \(place) at \(time), \(payload.data.proximity) to the station.",
                    "On a map: \(map)", page,
                ], links: [map])
        case .left:
            return Content(
                subject: "\(name) is no longer heard at \(station.name)",
                paragraphs: [
                    "\(name) is no longer heard at \(place). It was last heard at \(time).", "On a map: \(map)", page,
                ], links: [map])
        case .test:
            return Content(
                subject: "A test message about \(Self.name(bike, sentenceStart: false))",
                paragraphs: [
                    "This is a test from bike-registry, sent at \(time). When a station hears your missing bike, a "
                        + "message like this says where and when.",
                    page,
                ])
        }
    }

    private func report(_ notice: ReportNotice, bike: Bike) -> Content {
        let name = Self.name(bike)
        let lapses = notice.lapsesAt.map(Self.time) ?? "soon"
        switch notice.type {
        case .lapsing:
            return Content(
                subject: "The missing report for \(Self.name(bike, sentenceStart: false)) lapses soon",
                paragraphs: [
                    "The missing report for \(Self.name(bike, sentenceStart: false)) lapses at \(lapses).",
                    "If the bike is still missing, open its page and press \"Still missing\". Otherwise stations stop "
                        + "listening for it then.",
                ])
        case .lapsed:
            return Content(
                subject: "The missing report for \(Self.name(bike, sentenceStart: false)) has lapsed",
                paragraphs: [
                    "The missing report for \(Self.name(bike, sentenceStart: false)) lapsed at \(lapses): stations no "
                        + "longer listen for it.",
                    "If it is still missing, report it missing again on its page.",
                ])
        case .paused:
            return Content(
                subject: "Messages about \(Self.name(bike, sentenceStart: false)) are paused",
                paragraphs: [
                    "Someone reported the beacon of \(name.prefix(1).lowercased() + name.dropFirst()) as placed on them "
                        + "without their consent.",
                    "Its messages are paused until the registry's operator has looked at the report.",
                ])
        }
    }

    /// "Your red Triumph Bonneville".
    static func name(_ bike: Bike, sentenceStart: Bool = true) -> String {
        (sentenceStart ? "Your " : "your ") + [bike.colour, bike.make, bike.model].joined(separator: " ")
    }

    /// UTC, with the offset named: "2026-11-27 16:05:09 UTC (+00:00)".
    static func time(_ date: Date) -> String { ISOTime.readable(date) + " (+00:00)" }

    static func map(latitude: Double, longitude: Double) -> String {
        "https://www.openstreetmap.org/?mlat=\(latitude)&mlon=\(longitude)#map=18/\(latitude)/\(longitude)"
    }

    /// Text as HTML, with each of `links` (a URL the text contains) made a link.
    static func escaped(_ text: String, links: [String] = []) -> String {
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        var html = escape(text)
        for link in links {
            let escapedLink = escape(link)
            html = html.replacingOccurrences(of: escapedLink, with: "<a href=\"\(escapedLink)\">\(escapedLink)</a>")
        }
        return html
    }
}
