// Six functions that Debian's Swift runtime for arm64 (swiftlang, built against unstable's glibc 2.42) calls and
// bookworm's glibc 2.36 does not have. Linked into the arm64 binary by scripts/build-arm64, so that with the runtime
// linked in (--static-swift-stdlib) beacond needs nothing newer than the Pi's Debian 12. Each forwards to what
// bookworm has, or is the few lines it takes.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// glibc 2.38 gave the strto* and scanf families C23 names (__isoc23_…) when a program is compiled for C23: the
// difference is that C23 reads a "0b" prefix as binary. The runtime's callers (CoreFoundation reading locale and
// number text) never hand them such text, so the C11 functions answer the same.
long __isoc23_strtol(const char *text, char **end, int base) { return strtol(text, end, base); }
long long __isoc23_strtoll(const char *text, char **end, int base) { return strtoll(text, end, base); }
unsigned long __isoc23_strtoul(const char *text, char **end, int base) { return strtoul(text, end, base); }

int __isoc23_sscanf(const char *text, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int count = vsscanf(text, format, arguments);
    va_end(arguments);
    return count;
}

// BSD's bounded copies, in glibc from 2.38: copy or append at most size - 1 bytes, always terminated when size is not
// 0, and return the length the whole result would have had (so a caller can tell it was cut).
size_t strlcpy(char *destination, const char *source, size_t size) {
    size_t length = strlen(source);
    if (size > 0) {
        size_t copied = length < size - 1 ? length : size - 1;
        memcpy(destination, source, copied);
        destination[copied] = '\0';
    }
    return length;
}

size_t strlcat(char *destination, const char *source, size_t size) {
    size_t used = strnlen(destination, size);
    if (used == size) return size + strlen(source);
    return used + strlcpy(destination + used, source, size - used);
}
