import BeaconPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program and takes what it prints on standard output (standard error goes to /dev/null), for one-line
/// answers such as `bluetoothd --version`. Gives up (and kills it) after `timeoutMilliseconds`.
enum ProgramOutput {
    static func run(_ arguments: [String], limit: Int = 4_096, timeoutMilliseconds: Int32 = 2_000) -> (
        status: Int32, output: String
    )? {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return nil }
        defer { close(pipeEnds[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The child keeps only its stdout end of the pipe (doctor starts no other process meanwhile).
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], STDOUT_FILENO)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        close(pipeEnds[1])
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        var descriptor = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
        var finished = false
        while output.count < limit, poll(&descriptor, 1, timeoutMilliseconds) > 0 {
            let count = retryingOnInterrupt { read(pipeEnds[0], &buffer, buffer.count) }
            if count <= 0 {
                finished = true
                break
            }
            output += buffer.prefix(count)
        }
        if !finished { kill(pid, SIGKILL) }
        var status: Int32 = 0
        _ = retryingOnInterrupt { waitpid(pid, &status, 0) }
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exitStatus, String(decoding: output.prefix(limit), as: UTF8.self))
    }
}
