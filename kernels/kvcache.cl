/*
 * Decoding with a KV cache: at step t every sequence appends the key and
 * value of token t to its cache and writes its queries (`query`, [n_seq *
 * group, dim]), then each query attends over tokens 0..t. Grouped-query
 * attention: `group` query heads share one KV head (query row q reads
 * cache sequence q / group); 1 for multi-head attention.
 * Caches hold, for each layer, [batch*heads] sequences of `dim`-wide rows
 * (a layer's region is n_seq * capacity * dim elements):
 *   contiguous: row (s, t) at (s * capacity + t) * dim
 *   paged:      blocks of `block` tokens in a pool; the block table (shared
 *               by the layers) maps (batch, t / block) to a physical block,
 *               each block holding [heads, block, dim]
 * The appended keys, values and the queries stand in for a projection's
 * output: a deterministic function of (sequence, token, d) (kv_value), so
 * the host can rebuild them. The caches are stored as gm_kv_t (a KV role
 * token in the variant, e.g. "bf16-kvfp8e4m3-grid"; else gm_t).
 */
GM_INLINE float kv_value(unsigned int seq_index, unsigned int token, unsigned int d, unsigned int which)
{
    unsigned int x = seq_index * 0x9e3779b9u ^ token * 0x85ebca6bu ^ d * 0xc2b2ae35u ^ which * 0x27d4eb2fu;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return (float)((int)(x & 511u) - 256) / 256.0f;
}

/* The element offset of (layer, sequence s = b * heads + h, token t, 0). */
GM_INLINE size_t kv_row(GM_GLOBAL const int *table, unsigned int paged, unsigned int layer, unsigned int n_seq,
                        unsigned int s, unsigned int t, unsigned int heads, unsigned int capacity,
                        unsigned int block, unsigned int dim)
{
    const size_t base = (size_t)layer * n_seq * capacity * dim;
    if (!paged)
        return base + ((size_t)s * capacity + t) * dim;
    const unsigned int b = s / heads, h = s % heads, blocks_per_seq = capacity / block;
    const size_t phys = (size_t)table[(size_t)b * blocks_per_seq + t / block];
    return base + ((phys * heads + h) * block + t % block) * dim;
}

/* kv_verify's per-item accumulator: head_dim up to this (kvcache.c refuses more). */
#define KV_VERIFY_MAX_DIM 256

GM_KERNEL kv_append(GM_GLOBAL gm_kv_t *GM_RESTRICT k_cache, GM_GLOBAL gm_kv_t *GM_RESTRICT v_cache,
                    GM_GLOBAL gm_t *GM_RESTRICT query, GM_GLOBAL const int *GM_RESTRICT table, unsigned int paged, unsigned int n_seq,
                    unsigned int heads, unsigned int capacity, unsigned int block, unsigned int dim,
                    unsigned int t, unsigned int layer, float scale, unsigned int group)
{
    GM_FOR_EACH(idx, (size_t)n_seq * dim) {
        const unsigned int s = (unsigned int)(idx / dim), d = (unsigned int)(idx % dim);
        const size_t at = kv_row(table, paged, layer, n_seq, s, t, heads, capacity, block, dim) + d;
        const unsigned int seq_index = layer * n_seq + s;
        GM_KVSTORE(k_cache, at, kv_value(seq_index, t, d, 1), scale);
        GM_KVSTORE(v_cache, at, kv_value(seq_index, t, d, 2), scale);
        for (unsigned int g = 0; g < group; g++)     /* the queries that share this KV head */
            GM_STORE(query, ((size_t)s * group + g) * dim + d, kv_value(seq_index * group + g, t, d, 0), scale);
    }
}

#if defined(GM_CHUNKED)
/* CPUs: one work item per sequence: scores for tokens 0..t into `scores`
 * [n_seq, capacity] (fp32), softmax, then the weighted sum of values. */
GM_KERNEL kv_attend(GM_GLOBAL const gm_kv_t *GM_RESTRICT k_cache, GM_GLOBAL const gm_kv_t *GM_RESTRICT v_cache,
                    GM_GLOBAL const gm_t *GM_RESTRICT query, GM_GLOBAL const int *GM_RESTRICT table, GM_GLOBAL float *GM_RESTRICT scores,
                    GM_GLOBAL gm_t *GM_RESTRICT out, unsigned int paged, unsigned int n_seq,
                    unsigned int heads, unsigned int capacity, unsigned int block, unsigned int dim,
                    unsigned int t, unsigned int layer, float scale, unsigned int group)
{
    const float inv_sqrt = 1.0f / sqrt((float)dim);
    GM_FOR_EACH(s, (size_t)n_seq * group) {
        const unsigned int si = (unsigned int)(s / group);      /* the KV head query row s reads */
        GM_GLOBAL float *row = scores + s * capacity;
        float m = -INFINITY;
        for (unsigned int j = 0; j <= t; j++) {
            const size_t kj = kv_row(table, paged, layer, n_seq, si, j, heads, capacity, block, dim);
            float acc = 0.0f;
            for (unsigned int d = 0; d < dim; d++)
                acc += GM_LOAD(query, s * dim + d, scale) * GM_KVLOAD(k_cache, kj + d, scale);
            row[j] = acc * inv_sqrt;
            m = fmax(m, row[j]);
        }
        float l = 0.0f;
        for (unsigned int j = 0; j <= t; j++) {
            row[j] = exp(row[j] - m);
            l += row[j];
        }
        for (unsigned int d = 0; d < dim; d++) {
            float acc = 0.0f;
            for (unsigned int j = 0; j <= t; j++)
                acc += row[j] * GM_KVLOAD(v_cache, kv_row(table, paged, layer, n_seq, si, j, heads, capacity, block, dim) + d,
                                              scale);
            GM_STORE(out, s * dim + d, acc / l, scale);
        }
    }
}
#else
/* GPUs: one work group of KV_GROUP items per sequence (the host launches
 * groups of exactly that size): the items share the tokens for the scores,
 * reduce the maximum and the sum in local memory, then share the output's
 * dim elements, each summing over the tokens (reads of v coalesce). */
#define KV_GROUP 128
GM_INLINE float kv_group_reduce(GM_LOCAL float *red, float v, int is_max)
{
    const unsigned int lid = (unsigned int)gm_local_id();
    red[lid] = v;
    gm_barrier();
    for (unsigned int stride = KV_GROUP / 2; stride > 0; stride >>= 1) {
        if (lid < stride)
            red[lid] = is_max ? fmax(red[lid], red[lid + stride]) : red[lid] + red[lid + stride];
        gm_barrier();
    }
    const float r = red[0];
    gm_barrier();                 /* red is reused by the next reduction */
    return r;
}

GM_KERNEL kv_attend(GM_GLOBAL const gm_kv_t *GM_RESTRICT k_cache, GM_GLOBAL const gm_kv_t *GM_RESTRICT v_cache,
                    GM_GLOBAL const gm_t *GM_RESTRICT query, GM_GLOBAL const int *GM_RESTRICT table, GM_GLOBAL float *GM_RESTRICT scores,
                    GM_GLOBAL gm_t *GM_RESTRICT out, unsigned int paged, unsigned int n_seq,
                    unsigned int heads, unsigned int capacity, unsigned int block, unsigned int dim,
                    unsigned int t, unsigned int layer, float scale, unsigned int group)
{
    GM_LOCAL_DECL float red[KV_GROUP];
    const unsigned int lid = (unsigned int)gm_local_id();
    const float inv_sqrt = 1.0f / sqrt((float)dim);
    for (size_t s = gm_group_id(); s < (size_t)n_seq * group; s += gm_num_groups()) {
        const unsigned int si = (unsigned int)(s / group);      /* the KV head query row s reads */
        GM_GLOBAL float *row = scores + s * capacity;
        float m = -INFINITY;
        for (unsigned int j = lid; j <= t; j += KV_GROUP) {
            const size_t kj = kv_row(table, paged, layer, n_seq, si, j, heads, capacity, block, dim);
            float acc = 0.0f;
            for (unsigned int d = 0; d < dim; d++)
                acc += GM_LOAD(query, s * dim + d, scale) * GM_KVLOAD(k_cache, kj + d, scale);
            row[j] = acc * inv_sqrt;
            m = fmax(m, row[j]);
        }
        m = kv_group_reduce(red, m, 1);
        float l = 0.0f;
        for (unsigned int j = lid; j <= t; j += KV_GROUP) {
            row[j] = exp(row[j] - m);
            l += row[j];
        }
        l = kv_group_reduce(red, l, 0);
        gm_barrier_global();      /* every item's row[j] is written */
        for (unsigned int d = lid; d < dim; d += KV_GROUP) {
            float acc = 0.0f;
            for (unsigned int j = 0; j <= t; j++)
                acc += row[j] * GM_KVLOAD(v_cache, kv_row(table, paged, layer, n_seq, si, j, heads, capacity, block, dim) + d,
                                        scale);
            GM_STORE(out, s * dim + d, acc / l, scale);
        }
        gm_barrier_global();      /* row is read before the group moves on */
    }
}
#endif

/*
 * kv_verify: every element of the last step's output (query rows
 * [n_seq * group, dim], step t of layer `layer`) recomputed on the
 * device, outside the timed region and apart from kv_attend: per query
 * row a plain two-pass softmax in fp32 over the cached keys and values
 * 0..t (the largest score first; then each key's exponential, their sum
 * and the exponential-weighted sum of the values), compared with the
 * stored element within the tolerance of attention_verify
 * (kernels/attention.cl): out_rel |want| + out_abs + 2^-23 vmax
 * ((4 dim + 12) A + 4 (t + 1) + 34). Writes the verdict
 * (gm_verdict_write): per work group the elements found wrong and the
 * least index (row * dim + d) of one, n_seq * group * dim where none. The
 * cache itself is compared with what was appended by the host.
 */
GM_KERNEL kv_verify(GM_GLOBAL const gm_kv_t *GM_RESTRICT k_cache, GM_GLOBAL const gm_kv_t *GM_RESTRICT v_cache,
                    GM_GLOBAL const gm_t *GM_RESTRICT query, GM_GLOBAL const int *GM_RESTRICT table,
                    GM_GLOBAL const gm_t *GM_RESTRICT out, GM_GLOBAL gm_u64 *GM_RESTRICT result, unsigned int paged,
                    unsigned int n_seq, unsigned int heads, unsigned int capacity, unsigned int block,
                    unsigned int dim, unsigned int t, unsigned int layer, float scale, unsigned int group,
                    float out_rel, float out_abs)
{
    GM_LOCAL_DECL gm_u64 count_of[GM_VERDICT_WG_MAX];
    GM_LOCAL_DECL gm_u64 first_of[GM_VERDICT_WG_MAX];
    const float inv_sqrt = 1.0f / sqrt((float)dim);
    const gm_u64 n = (gm_u64)n_seq * group * dim;
    gm_u64 wrong = 0, first = n;
    GM_FOR_EACH(s, (size_t)n_seq * group) {
        const unsigned int si = (unsigned int)(s / group);      /* the KV head query row s reads */
        const size_t qi = s * dim;
        float m = -INFINITY, a = 0.0f, vmax = 0.0f, l = 0.0f;
        for (unsigned int j = 0; j <= t; j++) {
            const size_t kj = kv_row(table, paged, layer, n_seq, si, j, heads, capacity, block, dim);
            float sc = 0.0f, sa = 0.0f;
            for (unsigned int d = 0; d < dim; d++) {
                const float p = GM_LOAD(query, qi + d, scale) * GM_KVLOAD(k_cache, kj + d, scale);
                sc += p;
                sa += fabs(p);
            }
            m = fmax(m, sc * inv_sqrt);
            a = fmax(a, sa * inv_sqrt);
        }
        float acc[KV_VERIFY_MAX_DIM];
        for (unsigned int d = 0; d < dim; d++)
            acc[d] = 0.0f;
        for (unsigned int j = 0; j <= t; j++) {
            const size_t kj = kv_row(table, paged, layer, n_seq, si, j, heads, capacity, block, dim);
            float sc = 0.0f;
            for (unsigned int d = 0; d < dim; d++)
                sc += GM_LOAD(query, qi + d, scale) * GM_KVLOAD(k_cache, kj + d, scale);
            const float e = exp(sc * inv_sqrt - m);
            l += e;
            for (unsigned int d = 0; d < dim; d++) {
                const float x = GM_KVLOAD(v_cache, kj + d, scale);
                acc[d] += e * x;
                vmax = fmax(vmax, fabs(x));
            }
        }
#define KV_STORED(d) GM_LOAD(out, qi + (d), scale)
        GM_ATTN_VERIFY_ROW(acc, l, dim, t + 1, a, vmax, KV_STORED, out_rel, out_abs, qi, wrong, first);
#undef KV_STORED
    }
    gm_verdict_write(count_of, first_of, wrong, first, result);
}
