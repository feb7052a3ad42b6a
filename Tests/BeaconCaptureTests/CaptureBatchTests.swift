import BeaconWire
import Foundation
import Testing

@testable import BeaconCapture

/// The capture thread's reads: adverts that arrive while it gathers are read together, a batch per system call,
/// and stamped once, with the monotonic clock (which a stepped wall clock does not move).
@Suite(.timeLimit(.minutes(20))) struct CaptureBatchTests {
    /// An LE Advertising Report event carrying an iBeacon of minor `n`.
    static func report(_ n: UInt8) -> [UInt8] {
        let uuid: [UInt8] = [
            0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
        ]
        let data: [UInt8] =
            [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid + [0x00, 0x01, 0x00, n, 0xC5]
        let body: [UInt8] = [0x01, 0x00, 0x01, n, 0x22, 0x33, 0x44, 0x55, 0x66, UInt8(data.count)] + data + [0xC0]
        return [0x04, 0x3E, UInt8(body.count + 1), 0x02] + body
    }

    static func monotonic() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    @Test(arguments: [0, 50])
    func advertsThatArriveTogetherAreReadTogetherAndStampedMonotonic(gather: Int) throws {
        let controller = FakeController(extended: false)
        var settings = CaptureSettings(intervalMilliseconds: 100, windowMilliseconds: 100)
        settings.gatherMilliseconds = gather
        let capture = HCICapture(sockets: [controller.socket], settings: settings)
        try capture.start()
        _ = try capture.poll(timeoutMilliseconds: 20) { _ in }  // the scan commands' answers
        // The first advert wakes the thread; the rest arrive while it gathers (or are already waiting).
        controller.send(Self.report(0))
        let span = SenderSpan()
        let sender = Thread {
            let start = Self.monotonic()
            for n in 1..<150 {
                controller.send(Self.report(UInt8(n)))
                usleep(100)
            }
            span.finish(start: start, end: Self.monotonic())
        }
        sender.start()
        let before = Self.monotonic()
        var stamps: [Int64] = []
        var polls = 0
        while stamps.count < 150 && polls < 1_000 {
            polls += 1
            try capture.poll(timeoutMilliseconds: 500) { record in
                if record.payload.count > 3 && record.payload[1] == 0x3E {
                    stamps.append(record.time?.nanosecondsSinceEpoch ?? 0)
                }
            }
        }
        let after = Self.monotonic()
        #expect(stamps.count == 150)
        #expect(stamps.allSatisfy { (before...after).contains($0) }, "stamped with the monotonic clock")
        if gather > 0 {
            // 150 adverts over about 20 ms, gathered 50 ms: one or two rounds, each one clock read. A loaded machine
            // (a sanitizer's run) can stretch the sender's 149 sends well past 50 ms, so the bound is the sender's
            // own span in gathers, plus the first round and one that began as the span ended: without gathering,
            // a read a send would take some 150 rounds.
            let sent = span.nanoseconds()
            let gatherNanoseconds = Int64(gather) * 1_000_000
            let rounds = 2 + Int((sent + gatherNanoseconds - 1) / gatherNanoseconds)
            #expect(polls <= rounds, "\(polls) polls, the sends spanning \(sent / 1_000_000) ms")
            #expect(Set(stamps).count <= rounds, "\(Set(stamps).count) different stamps")
        }
    }
}

/// How long the sender thread's sends took, which the test reads once it has had every advert.
private final class SenderSpan: @unchecked Sendable {
    private let noted = NSCondition()
    private var span: Int64?

    func finish(start: Int64, end: Int64) {
        noted.withLock {
            span = end - start
            noted.signal()
        }
    }

    /// Nanoseconds; waits for the sender to note them (it does so right after its last send).
    func nanoseconds() -> Int64 {
        noted.withLock {
            while span == nil { noted.wait() }
            return span!
        }
    }
}
