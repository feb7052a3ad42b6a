/* rotating_id: see rotating_id.h and docs/rotating-beacon.md. */
#include "rotating_id.h"

#include <string.h>

/* ---- SHA-256 (FIPS 180-4) ---- */

typedef struct {
    uint32_t state[8];
    uint8_t block[64];
    size_t used;     /* bytes waiting in block */
    uint64_t length; /* bytes hashed so far */
} sha256_context;

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotate_right(uint32_t value, unsigned bits) { return (value >> bits) | (value << (32 - bits)); }

static void sha256_compress(uint32_t state[8], const uint8_t block[64]) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++) {
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 | (uint32_t)block[4 * i + 2] << 8 |
               (uint32_t)block[4 * i + 3];
    }
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotate_right(w[i - 15], 7) ^ rotate_right(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotate_right(w[i - 2], 17) ^ rotate_right(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; i++) {
        uint32_t sum1 = rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25);
        uint32_t choose = (e & f) ^ (~e & g);
        uint32_t t1 = h + sum1 + choose + sha256_k[i] + w[i];
        uint32_t sum0 = rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22);
        uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = sum0 + majority;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
}

static void sha256_begin(sha256_context *context) {
    static const uint32_t initial[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    };
    memcpy(context->state, initial, sizeof initial);
    context->used = 0;
    context->length = 0;
}

static void sha256_add(sha256_context *context, const uint8_t *data, size_t length) {
    context->length += length;
    while (length > 0) {
        size_t take = 64 - context->used;
        if (take > length) take = length;
        memcpy(context->block + context->used, data, take);
        context->used += take;
        data += take;
        length -= take;
        if (context->used == 64) {
            sha256_compress(context->state, context->block);
            context->used = 0;
        }
    }
}

static void sha256_end(sha256_context *context, uint8_t digest[32]) {
    uint64_t bits = context->length * 8;
    uint8_t padding[72] = {0x80};
    /* One 0x80, zeros up to 56 mod 64, then the length in bits as 8 bytes big-endian. */
    size_t zeros = (context->used < 56 ? 56 : 120) - context->used;
    for (int i = 0; i < 8; i++) padding[zeros + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_add(context, padding, zeros + 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(context->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(context->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(context->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)context->state[i];
    }
}

void rotating_id_sha256(const uint8_t *data, size_t length, uint8_t digest[32]) {
    sha256_context context;
    sha256_begin(&context);
    sha256_add(&context, data, length);
    sha256_end(&context, digest);
}

/* ---- HMAC (RFC 2104) ---- */

void rotating_id_hmac_sha256(
    const uint8_t *key, size_t key_length, const uint8_t *message, size_t length, uint8_t mac[32]) {
    uint8_t block_key[64] = {0};
    if (key_length > 64) {
        rotating_id_sha256(key, key_length, block_key);
    } else if (key_length > 0) {
        memcpy(block_key, key, key_length);
    }
    uint8_t pad[64];
    uint8_t inner[32];
    sha256_context context;

    for (int i = 0; i < 64; i++) pad[i] = block_key[i] ^ 0x36;
    sha256_begin(&context);
    sha256_add(&context, pad, 64);
    sha256_add(&context, message, length);
    sha256_end(&context, inner);

    for (int i = 0; i < 64; i++) pad[i] = block_key[i] ^ 0x5c;
    sha256_begin(&context);
    sha256_add(&context, pad, 64);
    sha256_add(&context, inner, 32);
    sha256_end(&context, mac);
}

/* ---- The scheme ---- */

uint64_t rotating_id_epoch(uint64_t unix_time, uint32_t period) { return unix_time / (period ? period : 1); }

uint32_t rotating_id_seconds_to_next(uint64_t unix_time, uint32_t period) {
    if (period == 0) period = 1;
    return period - (uint32_t)(unix_time % period);
}

void rotating_id_for_epoch(const uint8_t key[ROTATING_ID_KEY_BYTES], uint64_t epoch, rotating_id_identity *out) {
    uint8_t message[16] = {'F', 'M', 'B', '-', 'R', 'O', 'T', '1'};
    for (int i = 0; i < 8; i++) message[8 + i] = (uint8_t)(epoch >> (56 - 8 * i));
    uint8_t mac[32];
    rotating_id_hmac_sha256(key, ROTATING_ID_KEY_BYTES, message, sizeof message, mac);

    out->epoch = epoch;
    out->major = (uint16_t)(mac[0] << 8 | mac[1]);
    out->minor = (uint16_t)(mac[2] << 8 | mac[3]);
    memcpy(out->address, mac + 4, ROTATING_ID_ADDRESS_BYTES);
    /* A non-resolvable private address: the top two bits 0b00, and the other 46 neither all 0 nor all 1
       (Core spec Vol 6, Part B, 1.3.2.2). One address in 2^45 is changed in its lowest bit for that. */
    out->address[0] &= 0x3f;
    int zeros = out->address[0] == 0, ones = out->address[0] == 0x3f;
    for (int i = 1; i < ROTATING_ID_ADDRESS_BYTES; i++) {
        zeros = zeros && out->address[i] == 0;
        ones = ones && out->address[i] == 0xff;
    }
    if (zeros || ones) out->address[ROTATING_ID_ADDRESS_BYTES - 1] ^= 1;
}

void rotating_id_at(
    const uint8_t key[ROTATING_ID_KEY_BYTES], uint32_t period, uint64_t unix_time, rotating_id_identity *out) {
    rotating_id_for_epoch(key, rotating_id_epoch(unix_time, period), out);
}

size_t rotating_id_payload(
    const uint8_t key[ROTATING_ID_KEY_BYTES], const uint8_t uuid[ROTATING_ID_UUID_BYTES], uint32_t period,
    uint64_t unix_time, int8_t measured_power, uint8_t payload[ROTATING_ID_PAYLOAD_BYTES],
    rotating_id_identity *identity) {
    rotating_id_identity current;
    rotating_id_at(key, period, unix_time, &current);
    static const uint8_t header[9] = {
        0x02, 0x01, 0x06,             /* Flags: LE General Discoverable, BR/EDR not supported */
        0x1a, 0xff, 0x4c, 0x00,       /* 26 bytes of manufacturer data, Apple's company id (little-endian) */
        0x02, 0x15,                   /* iBeacon: type 2, 21 bytes follow */
    };
    memcpy(payload, header, sizeof header);
    memcpy(payload + 9, uuid, ROTATING_ID_UUID_BYTES);
    payload[25] = (uint8_t)(current.major >> 8);
    payload[26] = (uint8_t)current.major;
    payload[27] = (uint8_t)(current.minor >> 8);
    payload[28] = (uint8_t)current.minor;
    payload[29] = (uint8_t)measured_power;
    if (identity) *identity = current;
    return ROTATING_ID_PAYLOAD_BYTES;
}
