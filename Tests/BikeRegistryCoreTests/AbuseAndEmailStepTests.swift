import BikeRegistryCore
import Foundation
import Testing

/// A finder's report and an owner's change of address, decided without a database.
@Suite(.timeLimit(.minutes(1))) struct AbuseAndEmailStepTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aReportPausesABikeOnceAndTellsItsOwnerOnce() {
        let steps = AbuseStep.steps(reportId: "abuse_1", bikeId: "bike_1", paused: false, now: Self.now)
        #expect(
            steps == [
                .keep(reportId: "abuse_1"),
                .pause(notice: ReportNotice(type: .paused, timestamp: Self.now, bikeId: "bike_1", lapsesAt: nil)),
            ])
        #expect(AbuseStep.outcome(of: steps, reportId: "abuse_1") == .recorded(id: "abuse_1", paused: true))
        let again = AbuseStep.steps(reportId: "abuse_2", bikeId: "bike_1", paused: true, now: Self.now)
        #expect(again == [.keep(reportId: "abuse_2")], "a paused bike's next report is kept, and pauses nothing")
        #expect(AbuseStep.outcome(of: again, reportId: "abuse_2") == .recorded(id: "abuse_2", paused: false))
    }

    static func bike(email: OwnerEmail.State?) -> Bike {
        var bike = Bike(
            id: "bike_1", uuid: "U", major: 1, minor: 2, make: "m", model: "m", colour: "c", missing: false,
            createdAt: now, webhookSecret: "whsec_x")
        if let email {
            bike.targets = [
                NotificationTarget(channel: .email, address: "o@example.com", state: email, unsubscribeKey: "k")
            ]
        }
        return bike
    }

    @Test func anAddressConfirmedAlreadyOrNoneRemovedChangesNothing() {
        #expect(EmailStep.first(current: Self.bike(email: .confirmed), to: "o@example.com") == .unchanged)
        #expect(EmailStep.first(current: Self.bike(email: nil), to: nil) == .unchanged)
        #expect(EmailStep.first(current: Self.bike(email: .failing), to: nil) == .remove)
    }

    @Test func aNewAddressOrOneNotConfirmedIsCountedAgainstTheLimits() {
        #expect(EmailStep.first(current: Self.bike(email: .unconfirmed), to: "o@example.com") == .countConfirmations)
        #expect(EmailStep.first(current: Self.bike(email: .failing), to: "o@example.com") == .countConfirmations)
        #expect(EmailStep.first(current: Self.bike(email: .confirmed), to: "new@example.com") == .countConfirmations)
        let limits = EmailLimits(perBikePerDay: 3, perAddressPerDay: 5)
        #expect(EmailStep.limited(sentToBike: 2, sentToAddress: 4, limits: limits) == .success(.confirm))
        #expect(EmailStep.limited(sentToBike: 3, sentToAddress: 0, limits: limits) == .failure(.bikeLimited))
        #expect(EmailStep.limited(sentToBike: 0, sentToAddress: 5, limits: limits) == .failure(.addressLimited))
    }
}

/// The one beacon parser the API, the pages, the finder and the command line share.
@Suite(.timeLimit(.minutes(1))) struct BeaconParserTests {
    @Test func numbersAreSixteenBitsInASCIIDigits() {
        #expect(BeaconParser.number("0") == 0 && BeaconParser.number("65535") == 65535)
        #expect(BeaconParser.number("65536") == nil && BeaconParser.number("-1") == nil)
        #expect(BeaconParser.number("١٢") == nil && BeaconParser.number("1e3") == nil && BeaconParser.number("") == nil)
        #expect(BeaconParser.number(70_000) == nil && BeaconParser.number(7) == 7)
    }

    @Test func aUUIDIsKeptInUpperCase() {
        #expect(BeaconParser.uuid("21eecf71-d5c7-4a00-9b90-27c94b5146ea") == "21EECF71-D5C7-4A00-9B90-27C94B5146EA")
        #expect(BeaconParser.uuid("21EECF71D5C74A009B9027C94B5146EA") == nil)
    }

    @Test func aFindersBeaconMayHaveWhiteSpaceAroundEachPart() throws {
        let beacon = try #require(
            BeaconParser.beacon(uuid: " 21eecf71-d5c7-4a00-9b90-27c94b5146ea ", major: " 1", minor: "101 "))
        #expect(beacon.uuid == "21EECF71-D5C7-4A00-9B90-27C94B5146EA" && beacon.major == 1 && beacon.minor == 101)
        #expect(BeaconParser.beacon(uuid: "x", major: "1", minor: "1") == nil)
    }

    @Test func theCommandLineTakesABeaconOrARegion() throws {
        let region = try #require(BeaconParser.colonSeparated("21EECF71-D5C7-4A00-9B90-27C94B5146EA:1"))
        #expect(region.major == 1 && region.minor == nil)
        #expect(BeaconParser.colonSeparated("21EECF71-D5C7-4A00-9B90-27C94B5146EA:1:7")?.minor == 7)
        for bad in [
            "21EECF71-D5C7-4A00-9B90-27C94B5146EA", "21EECF71-D5C7-4A00-9B90-27C94B5146EA:1:", "x:1:2", ":1:2:3",
        ] {
            #expect(BeaconParser.colonSeparated(bad) == nil, "\(bad)")
        }
    }
}

/// What an attempt's answer makes of the message, on a clock the test sets.
@Suite(.timeLimit(.minutes(1))) struct DeliveryStepTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let schedule = RetrySchedule(base: 5)

    static func outcome(
        _ answer: DeliveryStep.Answer, _ refusal: TargetRefusal = .remove, attempts: Int = 0, age: TimeInterval = 60
    )
        -> NotificationOutcome
    {
        DeliveryStep.outcome(
            of: answer, refusal: refusal, attempts: attempts, createdAt: now.addingTimeInterval(-age),
            schedule: schedule, now: now)
    }

    @Test func aRefusalForGoodDoesWhatItsChannelSays() {
        #expect(Self.outcome(.delivered) == .delivered)
        #expect(
            Self.outcome(.refusedForGood(reason: "the endpoint answered 410 Gone"), .remove)
                == .refused(.remove, error: "the endpoint answered 410 Gone"))
        #expect(Self.outcome(.refusedForGood(reason: "550"), .markFailing) == .refused(.markFailing, error: "550"))
    }

    @Test func aFailureIsTriedAgainBackingOffUntilThreeDaysHavePassed() {
        #expect(
            Self.outcome(.failed(reason: "HTTP 500", retryAfter: nil))
                == .retry(at: Self.now.addingTimeInterval(5), error: "HTTP 500"))
        #expect(
            Self.outcome(.failed(reason: "HTTP 500", retryAfter: nil), attempts: 3)
                == .retry(at: Self.now.addingTimeInterval(40), error: "HTTP 500"), "doubling")
        #expect(
            Self.outcome(.failed(reason: "HTTP 429", retryAfter: 120))
                == .retry(at: Self.now.addingTimeInterval(120), error: "HTTP 429"),
            "at least the endpoint's Retry-After")
        #expect(
            Self.outcome(.failed(reason: "HTTP 429", retryAfter: 86_400))
                == .retry(at: Self.now.addingTimeInterval(3_600), error: "HTTP 429"), "but never past an hour")
        #expect(
            Self.outcome(.failed(reason: "HTTP 500", retryAfter: nil), age: 3 * 86_400 + 1)
                == .abandon(error: "HTTP 500"))
    }
}
