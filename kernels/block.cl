/*
 * The transformer block's own kernels (bench/workloads/block.c), also built by the
 * whole model (bench/workloads/model_*.c) for its KV cache and int4 weights; the
 * matrix products are linear.cl's kernels and attention is attention.cl's
 * attention_tiled, built as programs of their own.
 *
 * block_init: t[i] = gm_hashed_value(base + i, seed, range) for i < n,
 *   stored with scale (weights and the block's input, reproducible on the
 *   host).
 * block_kv_store: `tokens` rows of `width` values from src (row t at
 *   src_off + t * src_row) into the KV cache at dst_off (row t at
 *   dst_off + t * width), converted from the activations' gm_t to the
 *   cache's gm_kv_t (a bit copy when they are one type: int8 shares one
 *   scale).
 * block_int4_scales, block_int4_pack: the int4 weights of one [k, n] matrix
 *   whose weight kk, j is gm_hashed_value(base + kk * n + j, seed, range),
 *   in the layout of gm_portable.h (GM_WLOAD) and src/lib/precision.c's
 *   gm_int4_quantize, bit for bit: first the fp16 scale of each group of
 *   `group` rows of a column (absmax / 7, 1 for an all-zero group) at
 *   scales[s_off + g * n + j], then the codes, two a byte, at packed[p_off..];
 *   k * n is even.
 */
GM_KERNEL block_init(GM_GLOBAL gm_t *GM_RESTRICT t, gm_u64 n, gm_u64 base, unsigned int seed, float range,
                     float scale)
{
    GM_FOR_EACH(i, (size_t)n)
        GM_STORE(t, i, gm_hashed_value(base + i, seed, range), scale);
}

GM_KERNEL block_kv_store(GM_GLOBAL const gm_t *GM_RESTRICT src, GM_GLOBAL gm_kv_t *GM_RESTRICT cache, gm_u64 tokens,
                         unsigned int width, gm_u64 src_row, gm_u64 src_off, gm_u64 dst_off, float scale)
{
    GM_FOR_EACH(idx, (size_t)tokens * width) {
        const size_t t = idx / width, d = idx % width;
        GM_KVSTORE(cache, dst_off + idx, GM_LOAD(src, src_off + t * src_row + d, scale), scale);
    }
}

GM_KERNEL block_int4_scales(GM_GLOBAL gm_u16 *GM_RESTRICT scales, gm_u64 s_off, unsigned int k, unsigned int n,
                            unsigned int group, gm_u64 base, unsigned int seed, float range)
{
    const size_t groups = (k + group - 1) / group;
    GM_FOR_EACH(idx, groups * n) {
        const size_t g = idx / n, j = idx % n, end = (g + 1) * group < k ? (g + 1) * group : k;
        float amax = 0.0f;
        for (size_t kk = g * group; kk < end; kk++)
            amax = fmax(amax, fabs(gm_hashed_value(base + kk * n + j, seed, range)));
        gm_half_store(scales, s_off + idx, gm_int4_scale_of(amax));
    }
}

GM_KERNEL block_int4_pack(GM_GLOBAL gm_u8 *GM_RESTRICT packed, gm_u64 p_off, GM_GLOBAL const gm_u16 *GM_RESTRICT scales,
                          gm_u64 s_off, unsigned int k, unsigned int n, unsigned int group, gm_u64 base,
                          unsigned int seed, float range)
{
    GM_FOR_EACH(b, (size_t)k * n / 2) {
        gm_u32 byte = 0;
        for (gm_u32 nib = 0; nib < 2; nib++) {
            const size_t i = 2 * b + nib, kk = i / n, j = i % n;
            const float sc = gm_half_load(scales, s_off + (kk / group) * n + j);
            byte |= ((gm_u32)gm_int4_code(gm_hashed_value(base + i, seed, range), sc) & 0xfu) << (4u * nib);
        }
        packed[p_off + b] = (gm_u8)byte;
    }
}
