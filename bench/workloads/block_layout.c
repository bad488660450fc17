/*
 * The single block's layout (bench/workloads/block_private.h): the widths
 * and bytes of its weights and activations, the reproducible weight and
 * input values (gm_hashed_value, bit for bit kernels/gm_portable.h's) and
 * the check of an int4 matrix against the host's quantisation. The lowest
 * of the block files: the others use it, it uses none of them.
 */
#include "bench/workloads/block_private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define INT4_CHECK_ALL ((uint64_t)1 << 22)   /* int4 matrices up to this many weights: every one checked */
#define INT4_SAMPLE 4096

float gm_hashed_value(uint64_t i, uint32_t seed, float range)
{
    uint32_t h = (uint32_t)i * 0x9e3779b1u ^ (uint32_t)(i >> 32) * 0x85ebca77u ^ seed * 0xc2b2ae3du;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    return (float)((int)(h >> 24) - 128) * (1.0f / 128.0f) * range;
}

/* Weight w of a block of width h and MLP width ffn is [in, out]. */
uint64_t block_weight_in_of(uint64_t h, uint64_t ffn, int w) { return w == W_DOWN ? ffn : h; }
uint64_t block_weight_out_of(uint64_t h, uint64_t ffn, int w) { return w == W_QKV ? 3 * h : w == W_UP ? ffn : h; }

const char *block_weight_name(int w)
{
    static const char *const names[N_WEIGHTS] = {"w_qkv", "w_o", "w_up", "w_down"};
    return names[w];
}

uint64_t block_weight_in(const block_state *st, int w) { return block_weight_in_of(st->h, st->ffn, w); }
uint64_t block_weight_out(const block_state *st, int w) { return block_weight_out_of(st->h, st->ffn, w); }

uint64_t block_act_width(const block_state *st, int a)
{
    return a == A_QKV ? 3 * st->h : a == A_MLP ? st->ffn : st->h;
}

uint64_t block_layer_bytes(const block_state *st, int w)
{
    uint64_t k = block_weight_in(st, w), n = block_weight_out(st, w);
    return st->wp == GM_INT4 ? gm_int4_packed_bytes(k, n) : k * n * gm_precision_size(st->wp);
}

uint64_t block_layer_scale_bytes(const block_state *st, int w)
{
    return st->wp == GM_INT4 ? gm_int4_scale_bytes(block_weight_in(st, w), block_weight_out(st, w), st->group) : 0;
}

bool block_int4_matches(const uint8_t *codes, const uint16_t *scales, uint64_t k, uint64_t n, uint64_t group,
                        uint64_t base, unsigned seed, float range, uint64_t rng, const char *what, char *note,
                        size_t len)
{
    /* One element: its group's scale from the hashes (absmax / 7 in fp16)
     * and its code (gm_int4_scale, gm_int4_code: gm_int4_quantize's). */
    bool all = k * n <= INT4_CHECK_ALL;
    uint64_t count = all ? k * n : INT4_SAMPLE;
    for (uint64_t s = 0; s < count; s++) {
        uint64_t i = all ? s : s == 0 ? 0 : s == 1 ? k * n - 1 : gm_xorshift(&rng) % (k * n);
        uint64_t kk = i / n, j = i % n, g = kk / group, end = (g + 1) * group < k ? (g + 1) * group : k;
        uint16_t sc = scales[g * n + j];
        if (!all || kk % group == 0) {
            float amax = 0.0f;
            for (uint64_t r = g * group; r < end; r++)
                amax = fmaxf(amax, fabsf(gm_hashed_value(base + r * n + j, seed, range)));
            if (gm_int4_scale(amax) != sc) {
                snprintf(note, len, "%s scale[%llu][%llu]: expected 0x%04x, got 0x%04x", what, (unsigned long long)g,
                         (unsigned long long)j, gm_int4_scale(amax), sc);
                return false;
            }
        }
        int want = gm_int4_code(gm_hashed_value(base + i, seed, range), gm_half_to_float(sc));
        int got = (codes[i / 2] >> (4 * (i & 1))) & 0xf;
        if ((want & 0xf) != got) {
            snprintf(note, len, "%s int4 code[%llu][%llu]: expected %d, got %d", what, (unsigned long long)kk,
                     (unsigned long long)j, want, got >= 8 ? got - 16 : got);
            return false;
        }
    }
    return true;
}
