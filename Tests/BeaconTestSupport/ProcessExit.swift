public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child's exit, seen without Foundation's help and without blocking a thread, and signals that reach only the
/// child itself.
///
/// Foundation's `Process` learns that a child ended from a socket the child holds open, and a process spawned
/// beside it at the same moment can inherit that socket and hold it for as long as it lives
/// (swift-corelibs-foundation#4795). `isRunning` then stays true, and `waitUntilExit` spins a thread at full
/// speed. On one of the cooperative pool's two threads (CI's sanitizer step of 16d0416: a killed bike-registry,
/// a zombie for minutes) that starved every suite of the run. `waitid` with `WNOWAIT` asks the kernel instead and
/// leaves the child to be reaped by Foundation as usual.
///
/// Its process id is the child's only until Foundation has reaped it. After that the kernel gives the number to the
/// next process or thread, with 32,768 numbers on Debian's default `pid_max`: in a whole run, often another of this
/// process's children (a broker, a registry of another test). So everything here first asks Foundation's
/// `isRunning`, which stays true until the reaping. A deinit that killed the id after the daemon had ended by itself
/// killed other tests' brokers.
///
/// And a `Process` holds its run-loop source, which holds the `Process`, until `waitUntilExit` lets go of both: a
/// child never waited for that way keeps its `Process` and every file handle and pipe it was given. So once the kernel
/// says the child ended and Foundation has reaped it, `waitUntilExit` is called here too, and returns at once. The
/// test process otherwise passed 1,024 descriptors, where libmosquitto's `select` refuses a socket (every in-process
/// MQTT client stayed "connecting", the local runs of the first `waitForExit`).
extension Process {
    /// The exit status (or the signal that ended it), once it has ended; nil while it runs.
    public var exitStatus: Int32? {
        guard isRunning else { return terminationStatus }
        var information = siginfo_t()
        let result = waitid(P_PID, id_t(processIdentifier), &information, WEXITED | WNOHANG | WNOWAIT)
        if result != 0 {
            // Reaped (ECHILD) by Foundation since the line above: its own word is good now.
            return isRunning ? nil : terminationStatus
        }
        guard information._sifields._sigchld.si_pid != 0 else { return nil }
        return information._sifields._sigchld.si_status
    }

    /// Whether it has ended, by the kernel's word.
    public var hasExited: Bool { exitStatus != nil }

    /// Sends `signal` to the child, unless it has ended and been reaped, when the id may be another's.
    public func send(_ signal: Int32) {
        guard isRunning else { return }
        kill(processIdentifier, signal)
    }

    /// Blocks until it has ended, by the kernel's word, and gives its exit status (or the signal that ended it).
    ///
    /// For `waitUntilExit`'s places: that waits for the socket above and spins while another child holds it, while
    /// this sleeps in the kernel for exactly the child's own life, which is short wherever it is called (a tool, or a
    /// child just sent SIGKILL).
    @discardableResult
    public func waitForExit() -> Int32 {
        guard isRunning else { return released(terminationStatus) }
        var information = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &information, WEXITED | WNOWAIT) != 0 {
            guard errno == EINTR else {
                // Reaped (ECHILD) by Foundation, which says so a moment later.
                while isRunning { usleep(1_000) }
                return released(terminationStatus)
            }
        }
        let status = information._sifields._sigchld.si_status
        // Foundation reaps it within moments, unless another child holds its socket (above): then it is left.
        for _ in 0..<2_000 where isRunning { usleep(1_000) }
        return isRunning ? status : released(status)
    }

    /// Waits up to `seconds` for it to end, looking every 20 ms without holding a thread; its status, or nil.
    public func exited(within seconds: Double) async -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        var status = exitStatus
        while status == nil, Date() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
            status = exitStatus
        }
        guard let status else { return nil }
        for _ in 0..<100 where isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        return isRunning ? status : released(status)
    }

    /// `status`, after `waitUntilExit` has let go of the run-loop source (it returns at once: Foundation has reaped
    /// the child).
    private func released(_ status: Int32) -> Int32 {
        waitUntilExit()
        return status
    }
}
