/*
 * rotating_id: a rotating beacon's identity (docs/rotating-beacon.md), for beacon firmware.
 *
 * Portable C99, no dependencies and no allocation: SHA-256 and HMAC are written here, so the file builds
 * unchanged under the nRF Connect SDK, ESP-IDF or a desktop compiler. The caller owns every buffer and the
 * clock; nothing here reads time or keeps state between calls.
 *
 * In epoch e = floor(unix_time / period) the beacon's major and minor are the first four bytes of
 * HMAC-SHA256(K, "FMB-ROT1" || e as 8 bytes big-endian), big-endian; its non-resolvable private address is the
 * next six bytes with the top two bits cleared. Both change at the same moment, so the address never links two
 * identities.
 */
#ifndef ROTATING_ID_H
#define ROTATING_ID_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROTATING_ID_KEY_BYTES 16
#define ROTATING_ID_UUID_BYTES 16
#define ROTATING_ID_ADDRESS_BYTES 6
/* Flags (3 bytes) and the iBeacon manufacturer-specific structure (27 bytes). */
#define ROTATING_ID_PAYLOAD_BYTES 30

typedef struct {
    uint64_t epoch;
    uint16_t major;
    uint16_t minor;
    /* Most significant byte first, as written "3D:26:6C:8D:3E:20"; HCI wants it reversed. */
    uint8_t address[ROTATING_ID_ADDRESS_BYTES];
} rotating_id_identity;

/* The epoch holding unix_time. period is in seconds and must not be 0 (0 is treated as 1). */
uint64_t rotating_id_epoch(uint64_t unix_time, uint32_t period);

/* Seconds from unix_time until the next epoch begins (1 to period): when to change identity and address. */
uint32_t rotating_id_seconds_to_next(uint64_t unix_time, uint32_t period);

/* The identity and address of one epoch. */
void rotating_id_for_epoch(const uint8_t key[ROTATING_ID_KEY_BYTES], uint64_t epoch, rotating_id_identity *out);

/* The identity and address at unix_time. */
void rotating_id_at(
    const uint8_t key[ROTATING_ID_KEY_BYTES], uint32_t period, uint64_t unix_time, rotating_id_identity *out);

/*
 * The advertising data at unix_time: Flags (LE General Discoverable, BR/EDR not supported) and an iBeacon frame
 * with the region's UUID, the epoch's major and minor and the measured power at 1 m. Writes
 * ROTATING_ID_PAYLOAD_BYTES bytes to payload and returns that count; identity, when not NULL, receives the
 * identity and the address to advertise it from.
 */
size_t rotating_id_payload(
    const uint8_t key[ROTATING_ID_KEY_BYTES], const uint8_t uuid[ROTATING_ID_UUID_BYTES], uint32_t period,
    uint64_t unix_time, int8_t measured_power, uint8_t payload[ROTATING_ID_PAYLOAD_BYTES],
    rotating_id_identity *identity);

/* SHA-256 and HMAC-SHA256, exposed for the firmware's own tests and for check-vectors. */
void rotating_id_sha256(const uint8_t *data, size_t length, uint8_t digest[32]);
void rotating_id_hmac_sha256(
    const uint8_t *key, size_t key_length, const uint8_t *message, size_t length, uint8_t mac[32]);

#ifdef __cplusplus
}
#endif

#endif
