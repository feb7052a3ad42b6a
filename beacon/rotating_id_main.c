/*
 * rotating-id: rotating_id.c on the command line, for check-vectors and scripts/rotating-beacon.
 *
 *   rotating-id identity KEY PERIOD UNIX_TIME
 *       epoch major minor address seconds-to-next
 *   rotating-id payload KEY UUID PERIOD UNIX_TIME MEASURED_POWER
 *       the advertising data as hex, then the identity line above
 *   rotating-id sha256 HEX | rotating-id hmac KEY_HEX MESSAGE_HEX
 *       the digest as hex (for checking the primitives against other implementations)
 *
 * KEY is 32 hex digits, UUID 32 hex digits with or without dashes.
 */
#include "rotating_id.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void) {
    fputs("usage: rotating-id identity KEY PERIOD UNIX_TIME\n"
          "       rotating-id payload KEY UUID PERIOD UNIX_TIME MEASURED_POWER\n"
          "       rotating-id sha256 HEX\n"
          "       rotating-id hmac KEY_HEX MESSAGE_HEX\n",
          stderr);
    return 64;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Hex digits (dashes skipped) into out; the byte count, or -1 when malformed or longer than capacity. */
static long parse_hex(const char *text, uint8_t *out, size_t capacity) {
    size_t count = 0;
    int high = -1;
    for (; *text; text++) {
        if (*text == '-') continue;
        int value = hex_value(*text);
        if (value < 0) return -1;
        if (high < 0) {
            high = value;
        } else {
            if (count == capacity) return -1;
            out[count++] = (uint8_t)(high << 4 | value);
            high = -1;
        }
    }
    return high < 0 ? (long)count : -1;
}

static int parse_unsigned(const char *text, unsigned long long maximum, unsigned long long *out) {
    char *end;
    errno = 0;
    if (*text == '-' || *text == '\0') return 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno || *end || value > maximum) return 0;
    *out = value;
    return 1;
}

static void print_hex(const uint8_t *bytes, size_t count) {
    for (size_t i = 0; i < count; i++) printf("%02x", bytes[i]);
    putchar('\n');
}

static void print_identity(const rotating_id_identity *identity, uint64_t unix_time, uint32_t period) {
    printf("%llu %u %u ", (unsigned long long)identity->epoch, identity->major, identity->minor);
    for (int i = 0; i < ROTATING_ID_ADDRESS_BYTES; i++) printf(i ? ":%02X" : "%02X", identity->address[i]);
    printf(" %u\n", rotating_id_seconds_to_next(unix_time, period));
}

static int parse_key_period_time(
    char **argv, uint8_t key[ROTATING_ID_KEY_BYTES], unsigned long long *period, unsigned long long *time) {
    if (parse_hex(argv[0], key, ROTATING_ID_KEY_BYTES) != ROTATING_ID_KEY_BYTES) {
        fprintf(stderr, "rotating-id: the key must be 32 hex digits, not '%s'\n", argv[0]);
        return 0;
    }
    if (!parse_unsigned(argv[1], 0xffffffffULL, period) || *period == 0) {
        fprintf(stderr, "rotating-id: the period must be 1 to 4294967295 seconds, not '%s'\n", argv[1]);
        return 0;
    }
    if (!parse_unsigned(argv[2], 0xffffffffffffffffULL, time)) {
        fprintf(stderr, "rotating-id: the time must be seconds since 1970, not '%s'\n", argv[2]);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage();
    const char *command = argv[1];
    uint8_t key[ROTATING_ID_KEY_BYTES];
    unsigned long long period, time;
    if (strcmp(command, "identity") == 0 && argc == 5) {
        char *fields[3] = {argv[2], argv[3], argv[4]};
        if (!parse_key_period_time(fields, key, &period, &time)) return 65;
        rotating_id_identity identity;
        rotating_id_at(key, (uint32_t)period, time, &identity);
        print_identity(&identity, time, (uint32_t)period);
        return 0;
    }
    if (strcmp(command, "payload") == 0 && argc == 7) {
        uint8_t uuid[ROTATING_ID_UUID_BYTES];
        char *fields[3] = {argv[2], argv[4], argv[5]};
        if (!parse_key_period_time(fields, key, &period, &time)) return 65;
        if (parse_hex(argv[3], uuid, sizeof uuid) != (long)sizeof uuid) {
            fprintf(stderr, "rotating-id: the UUID must be 32 hex digits, not '%s'\n", argv[3]);
            return 65;
        }
        char *end;
        long power = strtol(argv[6], &end, 10);
        if (*argv[6] == '\0' || *end || power < -128 || power > 127) {
            fprintf(stderr, "rotating-id: the measured power must be -128 to 127 dBm, not '%s'\n", argv[6]);
            return 65;
        }
        uint8_t payload[ROTATING_ID_PAYLOAD_BYTES];
        rotating_id_identity identity;
        size_t length = rotating_id_payload(key, uuid, (uint32_t)period, time, (int8_t)power, payload, &identity);
        print_hex(payload, length);
        print_identity(&identity, time, (uint32_t)period);
        return 0;
    }
    if ((strcmp(command, "sha256") == 0 && argc == 3) || (strcmp(command, "hmac") == 0 && argc == 4)) {
        static uint8_t first[4096], second[4096];
        long first_length = parse_hex(argv[2], first, sizeof first);
        long second_length = argc == 4 ? parse_hex(argv[3], second, sizeof second) : 0;
        if (first_length < 0 || second_length < 0) {
            fputs("rotating-id: hex input, at most 4096 bytes\n", stderr);
            return 65;
        }
        uint8_t digest[32];
        if (argc == 3) {
            rotating_id_sha256(first, (size_t)first_length, digest);
        } else {
            rotating_id_hmac_sha256(first, (size_t)first_length, second, (size_t)second_length, digest);
        }
        print_hex(digest, sizeof digest);
        return 0;
    }
    return usage();
}
