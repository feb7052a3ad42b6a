import BikeRegistryCore
import Foundation
import Testing

/// What a visit owes, and its messages' ids: the same however often it is decided, one a channel.
@Suite(.timeLimit(.minutes(1))) struct MessageIDTests {
    static let station = Station(
        id: 7, name: "Ace Café", keyHash: "", latitude: 51.5, longitude: -0.2, createdAt: Date(timeIntervalSince1970: 0)
    )

    static func sighting(_ kind: SightingReport.Kind, sightingId: String) -> SightingReport {
        SightingReport(
            sightingId: sightingId, bikeId: "bike_1", kind: kind, date: Date(timeIntervalSince1970: 1_000),
            firstSeen: Date(timeIntervalSince1970: 900), lastSeen: Date(timeIntervalSince1970: 1_000),
            proximity: "near", rssi: -60, count: 3)
    }

    @Test func anEnterOwesSeenAndAnExitSeenAndLeftUnderTheVisitsIds() throws {
        let now = Date(timeIntervalSince1970: 1_001)
        let enter = Self.sighting(.enter, sightingId: "a")
        let visit = VisitNotifications(sighting: enter, stationId: Self.station.id)
        let onEnter = try visit.candidates(by: enter, station: Self.station, now: now)
        #expect(onEnter.map(\.type) == [.seen, .left] && onEnter.map(\.due) == [true, false])
        #expect(onEnter[1].id.isEmpty && onEnter[1].payload.isEmpty, "nothing is made for what is not due")
        let exit = Self.sighting(.exit, sightingId: "b")
        #expect(VisitNotifications(sighting: exit, stationId: Self.station.id).visitId == visit.visitId)
        let onExit = try visit.candidates(by: exit, station: Self.station, now: now)
        #expect(onExit.map(\.due) == [true, true])
        #expect(onExit[0].id == onEnter[0].id, "bike.seen has one id however many of the visit's sightings owe it")
        #expect(onExit[1].id != onExit[0].id)
    }

    @Test func eachChannelHasItsOwnIdOfWhatIsOwed() {
        let owed = MessageID.owed(["visit_1", "bike.seen"])
        #expect(owed.hasPrefix("msg_") && owed.count == 28)
        let ids = [NotificationChannel.webhook, .ntfy, .email].map { MessageID.on($0, owed: owed) }
        #expect(Set(ids).count == 3 && ids.allSatisfy { $0.hasPrefix(owed + MessageID.separator) })
    }
}
