// The functions include/csystem_shims.h declares.
#define _GNU_SOURCE
#include "csystem_shims.h"

#ifdef __linux__
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timex.h>

enum { CSystemShims_maximumBatch = 128 };

int CSystemShims_receiveMany(int fd, void *buffers, unsigned size, unsigned count, unsigned *lengths) {
    if (count > CSystemShims_maximumBatch) count = CSystemShims_maximumBatch;
    struct mmsghdr messages[CSystemShims_maximumBatch];
    struct iovec vectors[CSystemShims_maximumBatch];
    memset(messages, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        vectors[i].iov_base = (char *)buffers + (size_t)i * size;
        vectors[i].iov_len = size;
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
    }
    int received;
    do {
        received = recvmmsg(fd, messages, count, MSG_DONTWAIT, NULL);
    } while (received < 0 && errno == EINTR);
    if (received < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    for (int i = 0; i < received; i++) lengths[i] = messages[i].msg_len;
    return received;
}

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

int CSystemShims_receiveMany(int fd, void *buffers, unsigned size, unsigned count, unsigned *lengths) {
    (void)fd; (void)buffers; (void)size; (void)count; (void)lengths;
    errno = ENOSYS;
    return -1;
}

int CSystemShims_setThreadName(const char *name) { (void)name; return 0; }

int CSystemShims_readClockDiscipline(long *maximumErrorMicroseconds, int *status) {
    *maximumErrorMicroseconds = 0;
    *status = 0;
    errno = ENOSYS;
    return -1;
}
#endif
