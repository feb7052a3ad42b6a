import BikeRegistryCore
import BikeRegistryStore
import Crypto
import Testing

/// The registry's window over a rotating beacon's identities: what it lists and what it verifies.
@Suite(.timeLimit(.minutes(5))) struct RotatingWindowTests {
    static let key = SymmetricKey(data: Array(0..<16 as Range<UInt8>))
    /// 2026-11-29T12:00:00Z.
    static let now: Int64 = 1_795_953_600

    @Test func twoHoursEitherSideAtFifteenMinutesIsSeventeenIdentities() {
        let window = RotatingWindow(period: 900)
        #expect(window.halfWidth == 8)
        let epochs = window.epochs(at: Self.now)
        #expect(epochs.count == 17 && epochs.lowerBound == Self.now / 900 - 8)
        let identities = window.identities(key: Self.key, at: Self.now)
        #expect(identities.map(\.epoch) == epochs.map(UInt64.init))
        #expect(identities[8] == RotatingIdentity(key: Self.key, period: 900, unixTime: UInt64(Self.now)))
        #expect(RotatingWindow(period: 60).halfWidth == 120)
        #expect(RotatingWindow(period: 1).halfWidth == RotatingWindow.maximumHalfWidth, "a short period is capped")
    }

    /// Where the listing's ETag moves: the start of the epoch in progress, a multiple of the period whatever the
    /// learned offset (whole periods), before 1970 too.
    @Test func anEpochStartsAtAMultipleOfItsPeriod() {
        for offset: Int64 in [0, 2_400, -3_600] {
            let window = RotatingWindow(period: 60, offset: offset)
            #expect(window.epochStart(at: 119) == 60 && window.epochStart(at: 120) == 120)
            #expect(window.epochStart(at: -1) == -60 && window.epochStart(at: Self.now) == Self.now)
        }
        #expect(RotatingWindow(period: 900).epochStart(at: Self.now + 899) == Self.now)
    }

    @Test func theIdentityOfTheMomentIsVerifiedAndACloneFromThreeHoursAgoIsNot() {
        let window = RotatingWindow(period: 60)
        let present = RotatingIdentity(key: Self.key, period: 60, unixTime: UInt64(Self.now))
        #expect(window.verify(key: Self.key, at: Self.now, major: present.major, minor: present.minor) == Self.now / 60)
        let old = RotatingIdentity(key: Self.key, period: 60, unixTime: UInt64(Self.now - 3 * 3_600))
        #expect(window.verify(key: Self.key, at: Self.now, major: old.major, minor: old.minor) == nil)
        // Two hours back is the window's edge, and still in it.
        let edge = RotatingIdentity(key: Self.key, period: 60, unixTime: UInt64(Self.now - 7_200))
        #expect(window.verify(key: Self.key, at: Self.now, major: edge.major, minor: edge.minor) != nil)
    }

    @Test func aClockFortyMinutesFastIsVerifiedAndItsOffsetLearned() {
        let fast: Int64 = 40 * 60
        let window = RotatingWindow(period: 900)
        let shown = RotatingIdentity(key: Self.key, period: 900, unixTime: UInt64(Self.now + fast))
        let epoch = window.verify(key: Self.key, at: Self.now, major: shown.major, minor: shown.minor)
        #expect(epoch == (Self.now + fast) / 900)
        let offset = window.learn(epoch: epoch ?? 0, at: Self.now)
        #expect(abs(offset - fast) < 900 && offset % 900 == 0, "learned \(offset) s, in whole periods")
        // Centred on what it learned, the window follows the beacon: the identity it shows is the centre.
        let learned = RotatingWindow(period: 900, offset: offset)
        #expect(learned.centre(at: Self.now + 600) == (Self.now + 600 + offset) / 900)
        #expect(learned.identities(key: Self.key, at: Self.now)[8].epoch == UInt64((Self.now + offset) / 900))
        // A clock 3 hours fast is outside a window at offset 0, and inside one that learned 2 h 45 of it.
        let faster = RotatingIdentity(key: Self.key, period: 900, unixTime: UInt64(Self.now + 3 * 3_600))
        #expect(window.verify(key: Self.key, at: Self.now, major: faster.major, minor: faster.minor) == nil)
        #expect(
            RotatingWindow(period: 900, offset: 9_900).verify(
                key: Self.key, at: Self.now, major: faster.major, minor: faster.minor) != nil)
    }

    @Test func timesBeforeTheEpochAndNegativeOffsetsRoundDown() {
        #expect(RotatingWindow(period: 900, offset: -1_000).centre(at: 800) == -1)
        #expect(RotatingWindow(period: 900).epochs(at: 100) == 0...8, "none before epoch 0")
        #expect(RotatingWindow(period: 900).learn(epoch: 5, at: 900 * 7 + 3) == -1_800)
    }
}
