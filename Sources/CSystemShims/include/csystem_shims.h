// System calls Swift cannot reach through Glibc's module: GNU extensions that need _GNU_SOURCE, and headers the
// module leaves out. Declared here with no system header, so that no C type is defined twice for Swift; shims.c
// defines them.
#pragma once

/// Names the calling thread (at most 15 bytes are kept), so `top -H` and /proc/PID/task/TID/comm tell beacond's
/// threads apart. 0 or an errno.
int CSystemShims_setThreadName(const char *name);

/// Reads up to `count` datagrams waiting on `fd` in one system call (recvmmsg, MSG_DONTWAIT), the i-th into
/// `buffers + i * size`, its length in `lengths[i]`. How many were read; 0 when none waited; -1 with errno.
int CSystemShims_receiveMany(int fd, void *buffers, unsigned size, unsigned count, unsigned *lengths);

/// The kernel's clock discipline, read without changing anything (adjtimex with no modes): the maximum error it
/// estimates, in microseconds, and its status bits (STA_UNSYNC, …). The clock state (TIME_OK …), or -1 with errno
/// (EPERM where seccomp denies @clock, as systemd's ProtectClock= does).
int CSystemShims_readClockDiscipline(long *maximumErrorMicroseconds, int *status);
