#ifndef BEACOND_DECODE_LOOP_H
#define BEACOND_DECODE_LOOP_H
#include <stdint.h>

/// What the C baseline found in a pcap (link type 201) capture.
typedef struct {
    uint64_t reports;
    uint64_t ibeacons;
    uint64_t checksum;  // sum of minor + major + power of every iBeacon, so neither loop can skip work
    int error;          // 0, or an errno / -1 for a format the loop does not read
} c_decode_result;

/// The plain C loop: read(2) 64 KiB at a time, pcap records, H4 direction header, LE Meta event,
/// LE Advertising Reports laid out as the kernel reads them, AD structures, the iBeacon check.
c_decode_result c_decode_pcap201(const char *path);
#endif
