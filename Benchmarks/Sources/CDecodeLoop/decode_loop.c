// The baseline beacond's decoder is measured against: what a careful C programmer would write for the same
// job (pcap link type 201 only), with the same bounds checks, and no allocation.
#include "decode_loop.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static void decode_event(const uint8_t *p, uint32_t len, c_decode_result *r) {
    // direction (4, big-endian), H4 type, event code, parameter length, subevent, number of reports
    if (len < 4 + 3 || p[4] != 0x04 || p[5] != 0x3E) return;
    uint32_t plen = p[6];
    if (plen + 7 > len || plen < 2 || p[7] != 0x02) return;
    const uint8_t *q = p + 8, *end = p + 7 + plen;
    unsigned n = *q++;
    while (n--) {
        if (end - q < 9) return;
        uint8_t dlen = q[8];
        if (end - q < 9 + dlen + 1) return;
        const uint8_t *d = q + 9, *dend = d + dlen;
        q += 9 + dlen + 1;
        if (dlen > 31) continue;
        r->reports++;
        while (d < dend) {
            uint8_t l = d[0];
            if (l == 0 || l > dend - d - 1) break;
            if (l == 26 && d[1] == 0xFF && d[2] == 0x4C && d[3] == 0x00 && d[4] == 0x02 && d[5] == 0x15) {
                r->ibeacons++;
                r->checksum += (uint64_t)((d[22] << 8) | d[23]) + ((d[24] << 8) | d[25]) + (uint64_t)(int8_t)d[26];
                break;
            }
            d += 1 + l;
        }
    }
}

c_decode_result c_decode_pcap201(const char *path) {
    c_decode_result r = {0, 0, 0, 0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { r.error = errno; return r; }
    static uint8_t buf[1 << 16];
    size_t have = 0, at = 0;
    int header = 1, eof = 0;
    for (;;) {
        size_t need = header ? 24 : 16;
        if (!header && have - at >= 16) {
            uint32_t incl; memcpy(&incl, buf + at + 8, 4);
            if (incl > 65536 - 16) { r.error = -1; break; }
            need = 16 + incl;
        }
        if (have - at < need) {
            if (eof) break;
            memmove(buf, buf + at, have - at); have -= at; at = 0;
            ssize_t got = read(fd, buf + have, sizeof buf - have);
            if (got < 0) { if (errno == EINTR) continue; r.error = errno; break; }
            if (got == 0) eof = 1;
            have += (size_t)got;
            continue;
        }
        if (header) {
            uint32_t magic, link; memcpy(&magic, buf, 4); memcpy(&link, buf + 20, 4);
            if (magic != 0xA1B2C3D4 || link != 201) { r.error = -1; break; }
            header = 0; at += 24; continue;
        }
        decode_event(buf + at + 16, (uint32_t)(need - 16), &r);
        at += need;
    }
    close(fd);
    return r;
}
