import Foundation

/// `.ci/run`'s sanitizer step sets BEACOND_LOAD_TESTS=off: the tests of speeds, loads and many processes are left
/// out there (each suite says why), or run lighter; they run in the plain step on every commit.
public enum LoadTests {
    public static let areOff = ProcessInfo.processInfo.environment["BEACOND_LOAD_TESTS"] == "off"
}
