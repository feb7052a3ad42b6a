// System calls Swift cannot reach through Glibc's module: GNU extensions that need _GNU_SOURCE, and headers the
// module leaves out.
#pragma once

#ifdef __linux__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sys/timex.h>

/// Names the calling thread (at most 15 bytes are kept), so `top -H` and /proc/PID/task/TID/comm tell beacond's
/// threads apart. 0 or an errno.
static inline int CSystemShims_setThreadName(const char *name) { return pthread_setname_np(pthread_self(), name); }

/// The kernel's clock discipline, read without changing anything (adjtimex with no modes): the maximum error it
/// estimates, in microseconds, and its status bits (STA_UNSYNC, …). The clock state (TIME_OK …), or -1 with errno
/// (EPERM where seccomp denies @clock, as systemd's ProtectClock= does).
static inline int CSystemShims_readClockDiscipline(long *maximumErrorMicroseconds, int *status) {
    struct timex state = {0};
    int result = adjtimex(&state);
    *maximumErrorMicroseconds = state.maxerror;
    *status = state.status;
    return result;
}
#else
static inline int CSystemShims_setThreadName(const char *name) { (void)name; return 0; }
static inline int CSystemShims_readClockDiscipline(long *maximumErrorMicroseconds, int *status) {
    *maximumErrorMicroseconds = 0; *status = 0; return -1;
}
#endif
