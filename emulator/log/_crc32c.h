/* CRC-32C (Castagnoli) for the log core: SSE4.2 with three interleaved streams on
 * x86-64 (chosen at run time), slice-by-8 tables elsewhere.
 *
 * The interleaving and the zero-shift operators follow Mark Adler's public-domain
 * crc32c.c: the crc32 instruction has a latency of three cycles and a throughput of
 * one, so three independent streams over adjacent blocks keep the unit busy, and the
 * partial CRCs are combined by shifting them over the length of the following
 * blocks with precomputed GF(2) matrix tables.
 */
#ifndef EMULATOR_CRC32C_H
#define EMULATOR_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EMU_CRC32C_POLY 0x82f63b78u

static uint32_t emu_crc32c_table[8][256];
static int emu_crc32c_hw_ok = 0;

static void emu_crc32c_init_sw(void) {
    uint32_t n, crc, k;
    for (n = 0; n < 256; n++) {
        crc = n;
        for (k = 0; k < 8; k++)
            crc = (crc & 1) ? (crc >> 1) ^ EMU_CRC32C_POLY : crc >> 1;
        emu_crc32c_table[0][n] = crc;
    }
    for (n = 0; n < 256; n++) {
        crc = emu_crc32c_table[0][n];
        for (k = 1; k < 8; k++) {
            crc = emu_crc32c_table[0][crc & 0xff] ^ (crc >> 8);
            emu_crc32c_table[k][n] = crc;
        }
    }
}

static uint32_t emu_crc32c_sw(uint32_t crc, const unsigned char *next, size_t len) {
    uint64_t crc0 = crc ^ 0xffffffffu;
    while (len && ((uintptr_t)next & 7) != 0) {
        crc0 = emu_crc32c_table[0][(crc0 ^ *next++) & 0xff] ^ (crc0 >> 8);
        len--;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (len >= 8) {
        uint64_t word;
        memcpy(&word, next, 8);
        crc0 ^= word;
        crc0 = emu_crc32c_table[7][crc0 & 0xff] ^
               emu_crc32c_table[6][(crc0 >> 8) & 0xff] ^
               emu_crc32c_table[5][(crc0 >> 16) & 0xff] ^
               emu_crc32c_table[4][(crc0 >> 24) & 0xff] ^
               emu_crc32c_table[3][(crc0 >> 32) & 0xff] ^
               emu_crc32c_table[2][(crc0 >> 40) & 0xff] ^
               emu_crc32c_table[1][(crc0 >> 48) & 0xff] ^
               emu_crc32c_table[0][crc0 >> 56];
        next += 8;
        len -= 8;
    }
#endif
    while (len) {
        crc0 = emu_crc32c_table[0][(crc0 ^ *next++) & 0xff] ^ (crc0 >> 8);
        len--;
    }
    return (uint32_t)crc0 ^ 0xffffffffu;
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <nmmintrin.h>

#define EMU_LONG 8192
#define EMU_SHORT 256

static uint32_t emu_crc32c_long[4][256];
static uint32_t emu_crc32c_short[4][256];

static uint32_t emu_gf2_matrix_times(const uint32_t *mat, uint32_t vec) {
    uint32_t sum = 0;
    while (vec) {
        if (vec & 1) sum ^= *mat;
        vec >>= 1;
        mat++;
    }
    return sum;
}

static void emu_gf2_matrix_square(uint32_t *square, const uint32_t *mat) {
    int n;
    for (n = 0; n < 32; n++) square[n] = emu_gf2_matrix_times(mat, mat[n]);
}

/* The operator that appends len zero bytes to a CRC; len a power of two. */
static void emu_crc32c_zeros_op(uint32_t *even, size_t len) {
    int n;
    uint32_t row = 1, odd[32];
    odd[0] = EMU_CRC32C_POLY;
    for (n = 1; n < 32; n++) {
        odd[n] = row;
        row <<= 1;
    }
    emu_gf2_matrix_square(even, odd);
    emu_gf2_matrix_square(odd, even);
    do {
        emu_gf2_matrix_square(even, odd);
        len >>= 1;
        if (len == 0) return;
        emu_gf2_matrix_square(odd, even);
        len >>= 1;
    } while (len);
    for (n = 0; n < 32; n++) even[n] = odd[n];
}

static void emu_crc32c_zeros(uint32_t zeros[][256], size_t len) {
    uint32_t n, op[32];
    emu_crc32c_zeros_op(op, len);
    for (n = 0; n < 256; n++) {
        zeros[0][n] = emu_gf2_matrix_times(op, n);
        zeros[1][n] = emu_gf2_matrix_times(op, n << 8);
        zeros[2][n] = emu_gf2_matrix_times(op, n << 16);
        zeros[3][n] = emu_gf2_matrix_times(op, n << 24);
    }
}

static inline uint64_t emu_crc32c_shift(uint32_t zeros[][256], uint64_t crc) {
    return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^
           zeros[2][(crc >> 16) & 0xff] ^ zeros[3][(crc >> 24) & 0xff];
}

__attribute__((target("sse4.2")))
static uint32_t emu_crc32c_hw(uint32_t crc, const unsigned char *next, size_t len) {
    const unsigned char *end;
    uint64_t crc0 = crc ^ 0xffffffffu, crc1, crc2, w0, w1, w2;

    while (len && ((uintptr_t)next & 7) != 0) {
        crc0 = _mm_crc32_u8((uint32_t)crc0, *next++);
        len--;
    }
    while (len >= EMU_LONG * 3) {
        crc1 = 0;
        crc2 = 0;
        end = next + EMU_LONG;
        do {
            memcpy(&w0, next, 8);
            memcpy(&w1, next + EMU_LONG, 8);
            memcpy(&w2, next + 2 * EMU_LONG, 8);
            crc0 = _mm_crc32_u64(crc0, w0);
            crc1 = _mm_crc32_u64(crc1, w1);
            crc2 = _mm_crc32_u64(crc2, w2);
            next += 8;
        } while (next < end);
        crc0 = emu_crc32c_shift(emu_crc32c_long, crc0) ^ crc1;
        crc0 = emu_crc32c_shift(emu_crc32c_long, crc0) ^ crc2;
        next += EMU_LONG * 2;
        len -= EMU_LONG * 3;
    }
    while (len >= EMU_SHORT * 3) {
        crc1 = 0;
        crc2 = 0;
        end = next + EMU_SHORT;
        do {
            memcpy(&w0, next, 8);
            memcpy(&w1, next + EMU_SHORT, 8);
            memcpy(&w2, next + 2 * EMU_SHORT, 8);
            crc0 = _mm_crc32_u64(crc0, w0);
            crc1 = _mm_crc32_u64(crc1, w1);
            crc2 = _mm_crc32_u64(crc2, w2);
            next += 8;
        } while (next < end);
        crc0 = emu_crc32c_shift(emu_crc32c_short, crc0) ^ crc1;
        crc0 = emu_crc32c_shift(emu_crc32c_short, crc0) ^ crc2;
        next += EMU_SHORT * 2;
        len -= EMU_SHORT * 3;
    }
    end = next + (len - (len & 7));
    while (next < end) {
        memcpy(&w0, next, 8);
        crc0 = _mm_crc32_u64(crc0, w0);
        next += 8;
    }
    len &= 7;
    while (len) {
        crc0 = _mm_crc32_u8((uint32_t)crc0, *next++);
        len--;
    }
    return (uint32_t)crc0 ^ 0xffffffffu;
}

static void emu_crc32c_init(void) {
    emu_crc32c_init_sw();
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
        emu_crc32c_zeros(emu_crc32c_long, EMU_LONG);
        emu_crc32c_zeros(emu_crc32c_short, EMU_SHORT);
        emu_crc32c_hw_ok = 1;
    }
}

static uint32_t emu_crc32c(uint32_t crc, const unsigned char *buf, size_t len) {
    if (emu_crc32c_hw_ok) return emu_crc32c_hw(crc, buf, len);
    return emu_crc32c_sw(crc, buf, len);
}

#else

static void emu_crc32c_init(void) { emu_crc32c_init_sw(); }

static uint32_t emu_crc32c(uint32_t crc, const unsigned char *buf, size_t len) {
    return emu_crc32c_sw(crc, buf, len);
}

#endif

/* Force the portable path (tests compare both against the reference). */
static uint32_t emu_crc32c_portable(uint32_t crc, const unsigned char *buf, size_t len) {
    return emu_crc32c_sw(crc, buf, len);
}

static int emu_crc32c_hardware(void) { return emu_crc32c_hw_ok; }

#endif
