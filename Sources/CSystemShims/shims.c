// The functions include/csystem_shims.h declares.
#define _GNU_SOURCE
#include "csystem_shims.h"

#ifdef __linux__
#include <pthread.h>
#include <sys/timex.h>

int CSystemShims_setThreadName(const char *name) { return pthread_setname_np(pthread_self(), name); }

int CSystemShims_readClockDiscipline(long *maximumErrorMicroseconds, int *status) {
    struct timex state = {0};
    int result = adjtimex(&state);
    *maximumErrorMicroseconds = state.maxerror;
    *status = state.status;
    return result;
}
#else
#include <errno.h>

int CSystemShims_setThreadName(const char *name) { (void)name; return 0; }

int CSystemShims_readClockDiscipline(long *maximumErrorMicroseconds, int *status) {
    *maximumErrorMicroseconds = 0;
    *status = 0;
    errno = ENOSYS;
    return -1;
}
#endif
