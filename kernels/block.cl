/*
 * The transformer block's own kernels (bench/block.c); its matrix products
 * are linear.cl's kernels and its attention is attention.cl's
 * attention_tiled, built as programs of their own.
 *
 * block_init: t[i] = gm_hashed_value(base + i, seed, range) for i < n,
 *   stored with scale (weights and the block's input, reproducible on the
 *   host).
 * block_kv_store: appends the K and V parts of `tokens` rows of
 *   qkv [tokens, 3 * width] (from element q_off) to the KV cache:
 *   cache[k_off + t * width + d] = qkv[q_off + t * 3 * width + width + d],
 *   and V at v_off from 2 * width. A bit copy: cache and qkv share one scale.
 */
GM_KERNEL block_init(GM_GLOBAL gm_t *GM_RESTRICT t, gm_u64 n, gm_u64 base, unsigned int seed, float range,
                     float scale)
{
    GM_FOR_EACH(i, (size_t)n)
        GM_STORE(t, i, gm_hashed_value(base + i, seed, range), scale);
}

GM_KERNEL block_kv_store(GM_GLOBAL const gm_t *GM_RESTRICT qkv, GM_GLOBAL gm_t *GM_RESTRICT cache, gm_u64 tokens,
                         unsigned int width, gm_u64 q_off, gm_u64 k_off, gm_u64 v_off)
{
    qkv += q_off;
    GM_FOR_EACH(idx, (size_t)tokens * width) {
        const size_t t = idx / width, d = idx % width, row = t * 3 * (size_t)width;
        cache[k_off + idx] = qkv[row + width + d];
        cache[v_off + idx] = qkv[row + 2 * (size_t)width + d];
    }
}
