/*
 * The CUDA stream kernels' fp8 conversions, checked on the host against
 * src/lib/precision.c, bit for bit, over every input:
 *   - gm_fp8x4_decode / gm_fp8x4_encode (kernels/gm_portable.h), the
 *     hardware path of sm_89 and later (GM_FP8_CVT). On the host they run
 *     cuda_fp8.h's own software for its conversions, which stands in for
 *     the cvt instructions (the card itself is not exercised here: gpumem
 *     verifies every stream output on it);
 *   - gm_fp8_half_decode / gm_fp8_half_encode, the software path (sm_75,
 *     sm_80), in half units: e4m3's value is y * 2^8.
 * All 256 codes of each format decoded (any NaN for a NaN code, else the
 * same float), and all 2^32 floats encoded, in every byte of the word.
 *
 * gm_portable.h is compiled as CUDA code by the host compiler: the few
 * CUDA names it needs outside cuda_fp16.h / cuda_fp8.h (host functions in
 * both) are given here. Output: TAP. Argument: a stride over the 2^32
 * float patterns (default 1: every one).
 */
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

/* The CUDA names gm_portable.h uses beyond the two headers above. */
static inline float __uint_as_float(unsigned u) { return u2f(u); }
static inline unsigned __float_as_uint(float f) { return f2u(f); }
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

/* Every code in every byte of a word: word k holds codes 4k .. 4k+3,
 * rotated by k so that each code visits every position. */
static void check_decode(bool e4m3)
{
    const char *fmt = e4m3 ? "e4m3" : "e5m2";
    int hw_bad = 0, half_bad = 0;
    for (unsigned k = 0; k < 64; k++) {
        unsigned code[4];
        uint32_t w = 0;
        for (unsigned b = 0; b < 4; b++) {
            code[b] = 4 * k + ((b + k) & 3u);
            w |= code[b] << (8 * b);
        }
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

/* Patterns base .. base + 3 (those a stride leaves), one word: lane b
 * gets pattern base + ((b + rot) & 3). */
static void check_encode(bool e4m3, uint64_t stride, unsigned threads)
{
    const char *fmt = e4m3 ? "e4m3" : "e5m2";
    const unsigned M = e4m3 ? 3u : 2u, top = e4m3 ? 0x7eu : 0x7cu;
    misses hw, half;
    uint64_t visited = 0;
    std::mutex mu;
    auto work = [&](unsigned t) {
        misses my_hw, my_half;
        uint64_t my_visited = 0;
        for (uint64_t g = t; 4 * g * stride <= 0xffffffffull; g += threads) {
            float in[4];
            uint32_t pat[4];
            for (unsigned b = 0; b < 4; b++) {
                uint64_t p = 4 * g * stride + ((b + g) & 3u) * stride;
                pat[b] = (uint32_t)p;   /* past 2^32 (strides > 1): wraps, still a pattern */
                in[b] = u2f(pat[b]);
            }
            uint32_t w = port::gm_fp8x4_encode(in, e4m3);
            for (unsigned b = 0; b < 4; b++) {
                float x = in[b];
                if (((w >> (8 * b)) & 0xffu) != ref_encode(x, e4m3))
                    my_hw.add(pat[b]);
                /* half units: y is x; its value y * 2^8 (e4m3) is exact,
                 * or infinite where e4m3 saturates anyway */
                float value = e4m3 ? ldexpf(x, 8) : x;
                if (port::gm_fp8_half_encode(x, M, top) != ref_encode(value, e4m3))
                    my_half.add(pat[b]);
            }
            my_visited += 4;
        }
        std::lock_guard<std::mutex> lock(mu);
        hw.merge(my_hw);
        half.merge(my_half);
        visited += my_visited;
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; t++)
        pool.emplace_back(work, t);
    for (auto &th : pool)
        th.join();
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

int main(int argc, char **argv)
{
    uint64_t stride = argc > 1 ? strtoull(argv[1], nullptr, 0) : 1;
    if (stride < 1 || stride > 0xffffffffull) {
        fprintf(stderr, "fp8_cvt_agree: the stride must be 1 .. 2^32 - 1\n");
        return 2;
    }
    unsigned threads = std::thread::hardware_concurrency();
    threads = threads < 1 ? 1 : threads > 16 ? 16 : threads;
    printf("1..8\n");
    check_decode(true);
    check_decode(false);
    check_encode(true, stride, threads);
    check_encode(false, stride, threads);
    return test_failed ? 1 : 0;
}
