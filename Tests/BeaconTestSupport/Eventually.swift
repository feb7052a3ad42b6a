import Foundation

/// Polls `condition` every 5 ms for up to `seconds`: true as soon as it holds, false when the time ran out. The
/// time is a ceiling for a slow machine (a sanitizer's run), never what a passing test waits. A cancelled test (its
/// time limit) stops waiting at once: its sleeps would end at once, and the loop spin on a core the others need.
public func eventually(within seconds: Double = 60, _ condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline, !Task.isCancelled {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try condition()
}

/// What a callback on another thread (libmosquitto's, a server's) has handed over, in order. Behind an NSLock, a
/// pthread mutex, which ThreadSanitizer follows across threads Swift's runtime does not know.
public final class Collected<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []

    public init() {}

    public func add(_ element: Element) { lock.withLock { elements.append(element) } }
    public var all: [Element] { lock.withLock { elements } }
}
