/*
 * The CUDA stream kernels' word conversions (kernels/gm_portable.h),
 * checked on the host against src/lib/precision.c, bit for bit (any NaN
 * for a NaN), over every input:
 *   - gm_fp8x4_decode / gm_fp8x4_encode, the fp8 hardware path of sm_89
 *     and later (GM_FP8_CVT). On the host they run cuda_fp8.h's own
 *     software for its conversions, which stands in for the cvt
 *     instructions (the card itself is not exercised here: gpumem
 *     verifies every stream output on it);
 *   - gm_fp8_half_decode / gm_fp8_half_encode, the fp8 software path
 *     (sm_75, sm_80), in half units: e4m3's value is y * 2^8;
 *   - gm_f16x2_encode and gm_bf16x2_encode (cuda_fp16.h's and
 *     cuda_bf16.h's pair conversions, here their host software), and
 *     gm_i8x4_decode / gm_i8x4_encode (int8 in raw units, without
 *     conversion instructions); gm_byte_ramp, the write kernel's values.
 * All 256 codes of each byte format decoded in every byte of the word,
 * and all 2^32 floats encoded by each encoder, in every lane.
 *
 * gm_portable.h is compiled as CUDA code by the host compiler: the few
 * CUDA names it needs outside cuda_fp16.h, cuda_bf16.h and cuda_fp8.h
 * (host functions in all three) are given here. Output: TAP. Argument: a
 * stride over the 2^32 float patterns (default 1: every one).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

extern "C" {
#include "lib/precision.h"
}

static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* The CUDA names gm_portable.h uses beyond the three headers above.
 * __byte_perm(x, y, s): byte n of the result is byte (s >> 4n) & 7 of
 * the eight bytes y:x (x's the low four), as PTX prmt's default mode. */
static inline float __uint_as_float(unsigned u) { return u2f(u); }
static inline unsigned __float_as_uint(float f) { return f2u(f); }
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    uint64_t both = (uint64_t)y << 32 | x;
    unsigned r = 0;
    for (unsigned n = 0; n < 4; n++)
        r |= (unsigned)(both >> (8 * ((s >> (4 * n)) & 7u)) & 0xffu) << (8 * n);
    return r;
}
#undef __device__
#define __device__
namespace port {
#define GM_CUDA 1
#define GM_FP32 1
#include "kernels/gm_portable.h"
}

static int test_n, test_failed;
static void ok(bool pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(bool pass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%sok %d - ", pass ? "" : "not ", ++test_n);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    test_failed += !pass;
}

static bool same_value(float a, float b) { return f2u(a) == f2u(b) || (std::isnan(a) && std::isnan(b)); }

static float ref_decode(unsigned c, bool e4m3)
{
    return e4m3 ? gm_fp8e4m3_to_float((uint8_t)c) : gm_fp8e5m2_to_float((uint8_t)c);
}
static unsigned ref_encode(float x, bool e4m3) { return e4m3 ? gm_float_to_fp8e4m3(x) : gm_float_to_fp8e5m2(x); }

/* Word k (0 .. 63) of the byte codes: codes 4k .. 4k+3, rotated by k so
 * that over the 64 words each code visits every position; code[b] is the
 * code in byte b. */
static uint32_t code_word(unsigned k, unsigned code[4])
{
    uint32_t w = 0;
    for (unsigned b = 0; b < 4; b++) {
        code[b] = 4 * k + ((b + k) & 3u);
        w |= code[b] << (8 * b);
    }
    return w;
}

/* Every code in every byte of a word (code_word). */
static void check_decode(bool e4m3)
{
    const char *fmt = e4m3 ? "e4m3" : "e5m2";
    int hw_bad = 0, half_bad = 0;
    for (unsigned k = 0; k < 64; k++) {
        unsigned code[4];
        const uint32_t w = code_word(k, code);
        float out[4];
        port::gm_fp8x4_decode(w, e4m3, out);
        for (unsigned b = 0; b < 4; b++) {
            float want = ref_decode(code[b], e4m3);
            float half = port::gm_fp8_half_decode(code[b], e4m3) * (e4m3 ? GM_FP8_HALF_UNIT_E4M3 : 1.0f);
            if (!same_value(out[b], want) && hw_bad++ < 5)
                printf("# %s 0x%02x: gm_fp8x4_decode %a, precision.c %a\n", fmt, code[b], (double)out[b], (double)want);
            if (!same_value(half, want) && half_bad++ < 5)
                printf("# %s 0x%02x: gm_fp8_half_decode %a (in values), precision.c %a\n", fmt, code[b], (double)half, (double)want);
        }
    }
    ok(hw_bad == 0, "%s: gm_fp8x4_decode gives precision.c's value for all 256 codes (%d differ)", fmt, hw_bad);
    ok(half_bad == 0, "%s: gm_fp8_half_decode gives precision.c's value for all 256 codes (%d differ)", fmt, half_bad);
}

/* Mismatches of one encoder over the patterns a thread visits: a count
 * and the first few inputs. */
struct misses {
    uint64_t n = 0;
    uint32_t first[4] = {0, 0, 0, 0};
    void add(uint32_t u)
    {
        if (n < 4)
            first[n] = u;
        n++;
    }
    void merge(const misses &o)
    {
        for (uint64_t i = 0; i < o.n && i < 4; i++)
            if (n + i < 4)
                first[n + i] = o.first[i];
        n += o.n;
    }
};

/* Walks the float patterns a stride leaves, four to a word: word g's
 * lane b gets pattern 4 g stride + ((b + g) & 3) stride, so that each
 * pattern visits every lane; threads share the words. check(in, pat,
 * miss) records each encoder e's mismatches in miss[e]; miss collects
 * them all. Returns the patterns visited. */
template <size_t E, class Check>
static uint64_t walk_floats(uint64_t stride, unsigned threads, misses (&miss)[E], Check check)
{
    uint64_t visited = 0;
    std::mutex mu;
    auto work = [&](unsigned t) {
        misses mine[E];
        uint64_t my_visited = 0;
        for (uint64_t g = t; 4 * g * stride <= 0xffffffffull; g += threads) {
            float in[4];
            uint32_t pat[4];
            for (unsigned b = 0; b < 4; b++) {
                uint64_t p = 4 * g * stride + ((b + g) & 3u) * stride;
                pat[b] = (uint32_t)p;   /* past 2^32 (strides > 1): wraps, still a pattern */
                in[b] = u2f(pat[b]);
            }
            check(in, pat, mine);
            my_visited += 4;
        }
        std::lock_guard<std::mutex> lock(mu);
        for (size_t e = 0; e < E; e++)
            miss[e].merge(mine[e]);
        visited += my_visited;
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; t++)
        pool.emplace_back(work, t);
    for (auto &th : pool)
        th.join();
    return visited;
}

static void check_encode(bool e4m3, uint64_t stride, unsigned threads)
{
    const char *fmt = e4m3 ? "e4m3" : "e5m2";
    const unsigned M = e4m3 ? 3u : 2u, top = e4m3 ? 0x7eu : 0x7cu;
    misses miss[2];   /* gm_fp8x4_encode, gm_fp8_half_encode */
    uint64_t visited = walk_floats(stride, threads, miss, [&](const float *in, const uint32_t *pat, misses *m) {
        uint32_t w = port::gm_fp8x4_encode(in, e4m3);
        for (unsigned b = 0; b < 4; b++) {
            float x = in[b];
            if (((w >> (8 * b)) & 0xffu) != ref_encode(x, e4m3))
                m[0].add(pat[b]);
            /* half units: y is x; its value y * 2^8 (e4m3) is exact,
             * or infinite where e4m3 saturates anyway */
            float value = e4m3 ? ldexpf(x, 8) : x;
            if (port::gm_fp8_half_encode(x, M, top) != ref_encode(value, e4m3))
                m[1].add(pat[b]);
        }
    });
    const misses &hw = miss[0], &half = miss[1];
    for (uint64_t i = 0; i < hw.n && i < 4; i++) {
        float x[4] = {u2f(hw.first[i]), 0.0f, 0.0f, 0.0f};
        printf("# %s 0x%08x (%a): gm_fp8x4_encode 0x%02x, precision.c 0x%02x\n", fmt, hw.first[i], (double)x[0],
               (unsigned)(port::gm_fp8x4_encode(x, e4m3) & 0xffu), ref_encode(x[0], e4m3));
    }
    for (uint64_t i = 0; i < half.n && i < 4; i++)
        printf("# %s 0x%08x: gm_fp8_half_encode differs from precision.c\n", fmt, half.first[i]);
    ok(hw.n == 0, "%s: gm_fp8x4_encode stores precision.c's code for %llu floats (%llu differ)", fmt,
       (unsigned long long)visited, (unsigned long long)hw.n);
    ok(half.n == 0, "%s: gm_fp8_half_encode (half units) stores precision.c's code for %llu floats (%llu differ)", fmt,
       (unsigned long long)visited, (unsigned long long)half.n);
}

/* int8 in raw units (scale 1) as the verification stores it. */
static unsigned ref_i8(float x)
{
    int8_t q;
    gm_store(GM_INT8, &q, 0, x, 1.0f);
    return (uint8_t)q;
}
/* Codes equal, or both NaN codes of a 16-bit format whose exponent field
 * is all ones at `inf` (fp16 0x7c00, bf16 0x7f80). */
static bool same_code16(unsigned got, unsigned want, unsigned inf)
{
    return got == want || ((got & 0x7fffu) > inf && (want & 0x7fffu) > inf);
}

/* gm_f16x2_encode, gm_bf16x2_encode and gm_i8x4_encode over the floats. */
static void check_word_encoders(uint64_t stride, unsigned threads)
{
    misses miss[3];
    uint64_t visited = walk_floats(stride, threads, miss, [](const float *in, const uint32_t *pat, misses *m) {
        uint32_t f16[2] = {port::gm_f16x2_encode(in[0], in[1]), port::gm_f16x2_encode(in[2], in[3])};
        uint32_t bf16[2] = {port::gm_bf16x2_encode(in[0], in[1]), port::gm_bf16x2_encode(in[2], in[3])};
        uint32_t i8 = port::gm_i8x4_encode(in);
        for (unsigned b = 0; b < 4; b++) {
            unsigned h = (f16[b / 2] >> (16 * (b % 2))) & 0xffffu, bh = (bf16[b / 2] >> (16 * (b % 2))) & 0xffffu;
            if (!same_code16(h, gm_float_to_half(in[b]), 0x7c00u))
                m[0].add(pat[b]);
            if (!same_code16(bh, gm_float_to_bf16(in[b]), 0x7f80u))
                m[1].add(pat[b]);
            if (((i8 >> (8 * b)) & 0xffu) != ref_i8(in[b]))
                m[2].add(pat[b]);
        }
    });
    const char *name[3] = {"gm_f16x2_encode stores precision.c's fp16 code",
                           "gm_bf16x2_encode stores precision.c's bf16 code",
                           "gm_i8x4_encode stores precision.c's int8 (scale 1)"};
    for (int e = 0; e < 3; e++) {
        for (uint64_t i = 0; i < miss[e].n && i < 4; i++)
            printf("# 0x%08x (%a): %s: no\n", miss[e].first[i], (double)u2f(miss[e].first[i]), name[e]);
        ok(miss[e].n == 0, "%s for %llu floats (%llu differ)", name[e], (unsigned long long)visited,
           (unsigned long long)miss[e].n);
    }
}

/* gm_i8x4_decode: every byte in every position (code_word), against the
 * signed byte; gm_byte_ramp
 * against the write kernel's definition, high bits set and not. */
static void check_i8_decode_and_ramp(void)
{
    int bad = 0;
    for (unsigned k = 0; k < 64; k++) {
        unsigned code[4];
        const uint32_t w = code_word(k, code);
        float out[4];
        port::gm_i8x4_decode(w, out);
        for (unsigned b = 0; b < 4; b++) {
            const uint8_t byte = (uint8_t)code[b];
            float want = gm_load(GM_INT8, &byte, 0, 1.0f);
            if (!same_value(out[b], want) && bad++ < 5)
                printf("# int8 0x%02x: gm_i8x4_decode %a, precision.c %a\n", code[b], (double)out[b], (double)want);
        }
    }
    ok(bad == 0, "gm_i8x4_decode gives precision.c's value for all 256 bytes in every position (%d differ)", bad);
    int ramp_bad = 0;
    for (uint32_t k = 0; k < 1024; k++) {
        uint32_t arg = k < 512 ? k : k * 0x01010101u;   /* bits above the low byte ignored */
        float want = (float)((int)(arg & 255u) - 128) * (1.0f / 128.0f);
        if (!same_value(port::gm_byte_ramp(arg), want) && ramp_bad++ < 5)
            printf("# gm_byte_ramp(0x%08x) %a, want %a\n", arg, (double)port::gm_byte_ramp(arg), (double)want);
    }
    ok(ramp_bad == 0, "gm_byte_ramp gives ((k & 255) - 128) / 128 for 1024 arguments (%d differ)", ramp_bad);
}

int main(int argc, char **argv)
{
    uint64_t stride = argc > 1 ? strtoull(argv[1], nullptr, 0) : 1;
    if (stride < 1 || stride > 0xffffffffull) {
        fprintf(stderr, "stream_cvt_agree: the stride must be 1 .. 2^32 - 1\n");
        return 2;
    }
    unsigned threads = std::thread::hardware_concurrency();
    threads = threads < 1 ? 1 : threads > 16 ? 16 : threads;
    printf("1..13\n");
    check_decode(true);
    check_decode(false);
    check_encode(true, stride, threads);
    check_encode(false, stride, threads);
    check_i8_decode_and_ramp();
    check_word_encoders(stride, threads);
    return test_failed ? 1 : 0;
}
