/*
 * The serving engine's own kernels (bench/workloads/serve_engine.c): a
 * step's rows gathered from the sequences it runs, their keys and values
 * written into a paged KV pool through a block table, paged attention
 * over each row's sequence, and greedy sampling. The layers' matrix
 * products are linear.cl's, the norms and SwiGLU model.cl's.
 *
 * A step's rows: `meta` holds 4 words a row: the sequence's slot, the
 * row's position in its sequence, its prompt token and flags
 * (SERVE_DECODE: the token is the one sampled for the slot at the step
 * before, next_token[slot]).
 *
 * The pool: `blocks` blocks of `block` tokens, block-major: block b holds,
 * for each layer l and K then V, [kv_heads][block][dim] elements at
 * ((b * layers + l) * 2 + kv) * kv_heads * block * dim, so that one block of
 * a sequence is contiguous across every layer (a swap moves it in one
 * copy). The block table: max_blocks entries a slot, the physical block of
 * the slot's tokens [i * block, (i + 1) * block).
 */
#define SERVE_DECODE 1u

GM_INLINE size_t serve_page(GM_GLOBAL const int *table, unsigned int slot, unsigned int t, unsigned int block,
                            unsigned int max_blocks, unsigned int layer, unsigned int layers, gm_u64 page)
{
    const size_t phys = (size_t)table[(size_t)slot * max_blocks + t / block];
    return (phys * layers + layer) * 2 * page;
}

/* x[r][c] = emb[token of row r][c]. */
GM_KERNEL serve_embed(GM_GLOBAL const gm_t *GM_RESTRICT emb, GM_GLOBAL gm_t *GM_RESTRICT x,
                      GM_GLOBAL const gm_u32 *GM_RESTRICT meta, GM_GLOBAL const gm_u32 *GM_RESTRICT next_token,
                      unsigned int rows, unsigned int hidden, float sw, float sx)
{
    GM_FOR_EACH(idx, (size_t)rows * hidden) {
        const size_t r = idx / hidden, c = idx % hidden;
        const gm_u32 token = (meta[4 * r + 3] & SERVE_DECODE) ? next_token[meta[4 * r]] : meta[4 * r + 2];
        GM_STORE(x, idx, GM_LOAD(emb, (size_t)token * hidden + c, sw), sx);
    }
}

/* The keys (src[k_off + r * src_row ...], kv_heads * dim of them) and
 * values (at v_off) of every row into the pool at the row's position,
 * layer `layer`. */
GM_KERNEL serve_kv_write(GM_GLOBAL const gm_t *GM_RESTRICT src, gm_u64 k_off, gm_u64 v_off, gm_u64 src_row,
                         GM_GLOBAL gm_kv_t *GM_RESTRICT pool, GM_GLOBAL const int *GM_RESTRICT table,
                         GM_GLOBAL const gm_u32 *GM_RESTRICT meta, unsigned int rows, unsigned int kv_heads,
                         unsigned int dim, unsigned int block, unsigned int max_blocks, unsigned int layer,
                         unsigned int layers, float scale)
{
    const size_t width = (size_t)kv_heads * dim, page = width * block;
    GM_FOR_EACH(item, (size_t)rows * kv_heads) {
        const size_t r = item / kv_heads, g = item % kv_heads, from = r * src_row + g * dim;
        const unsigned int slot = meta[4 * r], pos = meta[4 * r + 1];
        const size_t at = serve_page(table, slot, pos, block, max_blocks, layer, layers, page)
                          + (g * block + pos % block) * dim;
        for (unsigned int d = 0; d < dim; d++) {
            GM_KVSTORE(pool, at + d, GM_LOAD(src, k_off + from + d, scale), scale);
            GM_KVSTORE(pool, at + page + d, GM_LOAD(src, v_off + from + d, scale), scale);
        }
    }
}

/*
 * Paged attention: row r (slot s, position p) and each of its query heads
 * j attend over the tokens 0..p of sequence s, read block by block through
 * the table: o = softmax(q k^T / sqrt(dim)) v, fp32, with the running
 * maximum and sum of an online softmax (Milakov & Gimelshein 2018). Query
 * head j reads KV head j / (heads / kv_heads) (grouped-query attention).
 * q rows are q_row apart from q_off, o is [rows][heads * dim] at o_off.
 */
#define SERVE_MAX_GROUP 8       /* query heads of one KV head */
#define SERVE_MAX_DIM 256
#define SERVE_MAX_BLOCK 64      /* tokens a block at most (the engine's bound on --block-tokens) */
/* Both kernels' parameters (the host's arguments, serve_engine.c). */
#define SERVE_ATTENTION_PARAMS                                                                                    \
    GM_GLOBAL const gm_t *GM_RESTRICT q, gm_u64 q_off, gm_u64 q_row, gm_u64 o_off, GM_GLOBAL gm_t *GM_RESTRICT o,  \
        GM_GLOBAL const gm_kv_t *GM_RESTRICT pool, GM_GLOBAL const int *GM_RESTRICT table,                        \
        GM_GLOBAL const gm_u32 *GM_RESTRICT meta, unsigned int rows, unsigned int heads, unsigned int kv_heads,     \
        unsigned int dim, unsigned int block, unsigned int max_blocks, unsigned int layer, unsigned int layers,      \
        float scale

#if defined(GM_CHUNKED)
/* CPUs (OpenCL: the chunked variants are built for CPU devices alone, the
 * host fixing the head size and the group at build time with -DSERVE_DIM
 * and -DSERVE_GROUP): one work item per (row, KV head), every query head
 * of the group at once, so that each key and value is read once, in
 * 8-wide vectors along the head. Token by token, its key row then its
 * value row (the online softmax taken a token at a time, the output
 * rescaled only when the maximum grows), so that keys and values stream
 * side by side. The sequence's blocks are split in SERVE_PARTS parts (a
 * split-K as flash-decoding's, here inside the work item) walked in step,
 * a token of each in turn, each with its own softmax state, merged at the
 * end: with two parts, four runs of memory in flight on a core and two
 * independent chains of arithmetic where one keeps two and one (decode
 * steps of tiny-serve, 30 sequences of 1100 tokens, interleaved runs on a
 * loaded 2-core CPU: medians 8 to 50% below one part's; four parts
 * gained nothing over two). Each part's next block is prefetched a token
 * at a time: blocks are scattered, and a hardware prefetcher stops at
 * each one's end. */
#if defined(GM_BF16)
#define SERVE_LOAD8(p, i) as_float8(convert_uint8(vload8(0, (p) + (i))) << 16)
#elif defined(GM_FP16)
#define SERVE_LOAD8(p, i) vload_half8(0, (GM_GLOBAL const half *)((p) + (i)))
#else
#define SERVE_LOAD8(p, i) vload8(0, (p) + (i))
#endif
#define SERVE_D8 (SERVE_DIM / 8)
#define SERVE_G SERVE_GROUP
#define SERVE_LINE (64 / sizeof(gm_kv_t))   /* elements of a cache line */
#define SERVE_PARTS 2                       /* parts of a sequence's blocks walked in step */
GM_INLINE float serve_sum8(float8 v)
{
    const float4 a = v.lo + v.hi;
    const float2 b = a.lo + a.hi;
    return b.x + b.y;
}
/* The softmax state of one part: the running maximum and sum of each
 * query head, and its output rows so far (not yet divided by the sum). */
typedef struct {
    float8 acc[SERVE_G * SERVE_D8];
    float m[SERVE_G], l[SERVE_G];
} serve_part;

GM_INLINE void serve_part_init(serve_part *h)
{
    for (unsigned int i = 0; i < SERVE_G * SERVE_D8; i++)
        h->acc[i] = (float8)(0.0f);
    for (unsigned int j = 0; j < SERVE_G; j++) {
        h->m[j] = -INFINITY;
        h->l[j] = 0.0f;
    }
}

/* One token into a part's state: its key row kr scored against every
 * query head (qv, already scaled by 1/sqrt(dim)), then its value row vr
 * weighted in; nk, where not null, is the same token's key row of the
 * part's next block (it and its value row are prefetched). */
GM_INLINE void serve_token(serve_part *h, const float8 *qv, GM_GLOBAL const gm_kv_t *GM_RESTRICT kr,
                           GM_GLOBAL const gm_kv_t *GM_RESTRICT vr, GM_GLOBAL const gm_kv_t *nk, size_t page)
{
    for (unsigned int i = 0; nk && i < SERVE_DIM; i += SERVE_LINE) {
        gm_prefetch(nk + i);
        gm_prefetch(nk + page + i);
    }
    float8 s0[SERVE_G], s1[SERVE_G];
#pragma unroll
    for (unsigned int j = 0; j < SERVE_G; j++)
        s0[j] = s1[j] = (float8)(0.0f);
    /* Two sums a head, each over every other 8 columns: half the chain. */
    for (unsigned int x = 0; x + 1 < SERVE_D8; x += 2) {
        const float8 k0 = SERVE_LOAD8(kr, 8 * x), k1 = SERVE_LOAD8(kr, 8 * x + 8);
#pragma unroll
        for (unsigned int j = 0; j < SERVE_G; j++) {
            s0[j] = fma(qv[j * SERVE_D8 + x], k0, s0[j]);
            s1[j] = fma(qv[j * SERVE_D8 + x + 1], k1, s1[j]);
        }
    }
#if (SERVE_DIM / 8) % 2
    {
        const float8 k0 = SERVE_LOAD8(kr, SERVE_DIM - 8);
#pragma unroll
        for (unsigned int j = 0; j < SERVE_G; j++)
            s0[j] = fma(qv[j * SERVE_D8 + SERVE_D8 - 1], k0, s0[j]);
    }
#endif
    float p[SERVE_G];
#pragma unroll
    for (unsigned int j = 0; j < SERVE_G; j++) {
        const float sc = serve_sum8(s0[j] + s1[j]);
        if (sc > h->m[j]) {
            const float corr = exp(h->m[j] - sc);
            h->l[j] *= corr;
            for (unsigned int x = 0; x < SERVE_D8; x++)
                h->acc[j * SERVE_D8 + x] *= corr;
            h->m[j] = sc;
        }
        p[j] = exp(sc - h->m[j]);
        h->l[j] += p[j];
    }
    for (unsigned int x = 0; x < SERVE_D8; x++) {
        const float8 v = SERVE_LOAD8(vr, 8 * x);
#pragma unroll
        for (unsigned int j = 0; j < SERVE_G; j++)
            h->acc[j * SERVE_D8 + x] = fma((float8)(p[j]), v, h->acc[j * SERVE_D8 + x]);
    }
}

GM_KERNEL serve_attention(SERVE_ATTENTION_PARAMS)
{
    const size_t page = (size_t)kv_heads * SERVE_DIM * block;
    const float inv_sqrt = 1.0f / sqrt((float)SERVE_DIM);
    GM_FOR_EACH(item, (size_t)rows * kv_heads) {
        const size_t r = item / kv_heads, g = item % kv_heads, head = g * block * SERVE_DIM;
        const unsigned int slot = meta[4 * r], n = meta[4 * r + 1] + 1;
        /* Part p: blocks [p * per, (p + 1) * per), the last ones short or empty. */
        const unsigned int nblocks = (n + block - 1) / block, per = (nblocks + SERVE_PARTS - 1) / SERVE_PARTS;
        float8 qv[SERVE_G * SERVE_D8];
        serve_part st[SERVE_PARTS];
        const size_t q_at = q_off + r * q_row + g * SERVE_G * SERVE_DIM;
        for (unsigned int i = 0; i < SERVE_G * SERVE_D8; i++)
            qv[i] = SERVE_LOAD8(q, q_at + 8 * (size_t)i) * inv_sqrt;
        for (unsigned int p = 0; p < SERVE_PARTS; p++)
            serve_part_init(&st[p]);
        for (unsigned int i = 0; i < per; i++) {
            GM_GLOBAL const gm_kv_t *kp[SERVE_PARTS], *nkp[SERVE_PARTS];
            unsigned int cnt[SERVE_PARTS];
            for (unsigned int p = 0; p < SERVE_PARTS; p++) {
                const unsigned int bi = p * per + i, t0 = bi * block;
                cnt[p] = bi < nblocks ? (n - t0 < block ? n - t0 : block) : 0;
                kp[p] = cnt[p] ? pool + serve_page(table, slot, t0, block, max_blocks, layer, layers, page) + head : pool;
                nkp[p] = i + 1 < per && bi + 1 < nblocks
                             ? pool + serve_page(table, slot, t0 + block, block, max_blocks, layer, layers, page) + head
                             : 0;
            }
            for (unsigned int t = 0; t < cnt[0]; t++) {
                const size_t at = (size_t)t * SERVE_DIM;
#pragma unroll
                for (unsigned int p = 0; p < SERVE_PARTS; p++)
                    if (t < cnt[p])
                        serve_token(&st[p], qv, kp[p] + at, kp[p] + at + page, nkp[p] ? nkp[p] + at : 0, page);
            }
        }
        /* The parts merged: each rescaled to the largest maximum (a part
         * that holds no token weighs 0). */
        const size_t o_at = o_off + r * heads * SERVE_DIM + g * SERVE_G * SERVE_DIM;
        for (unsigned int j = 0; j < SERVE_G; j++) {
            float mx = st[0].m[j], c[SERVE_PARTS], sum = 0.0f;
            for (unsigned int p = 1; p < SERVE_PARTS; p++)
                mx = fmax(mx, st[p].m[j]);
            for (unsigned int p = 0; p < SERVE_PARTS; p++) {
                c[p] = exp(st[p].m[j] - mx);
                sum += st[p].l[j] * c[p];
            }
            const float inv = 1.0f / sum;
            for (unsigned int x = 0; x < SERVE_D8; x++) {
                float8 v = st[0].acc[j * SERVE_D8 + x] * c[0];
                for (unsigned int p = 1; p < SERVE_PARTS; p++)
                    v += st[p].acc[j * SERVE_D8 + x] * c[p];
                v *= inv;
                const float e[8] = {v.s0, v.s1, v.s2, v.s3, v.s4, v.s5, v.s6, v.s7};
                for (unsigned int k = 0; k < 8; k++)
                    GM_STORE(o, o_at + j * SERVE_DIM + 8 * x + k, e[k], scale);
            }
        }
    }
}
#else
/* GPUs: one work group of SERVE_WG items per (row, KV head), the host
 * launching groups of exactly that size. Tiles of SERVE_WG tokens: item i
 * scores token i of the tile against every query head of the group
 * (the query in local memory), one item a head takes the tile's maximum
 * and sum, then the items share the group's heads x dim outputs, each
 * summing the tile's values of its column (reads of v coalesce). */
#define SERVE_WG 128
#define SERVE_PER_ITEM (SERVE_MAX_GROUP * SERVE_MAX_DIM / SERVE_WG)
GM_KERNEL serve_attention(SERVE_ATTENTION_PARAMS)
{
    GM_LOCAL_DECL float qs[SERVE_MAX_GROUP * SERVE_MAX_DIM];
    GM_LOCAL_DECL float ps[SERVE_MAX_GROUP * SERVE_WG];
    GM_LOCAL_DECL float tile_max[SERVE_MAX_GROUP], tile_sum[SERVE_MAX_GROUP];
    GM_LOCAL_DECL size_t tile_page[SERVE_WG];
    const unsigned int lid = (unsigned int)gm_local_id(), group = heads / kv_heads, width = group * dim;
    const size_t page = (size_t)kv_heads * dim * block;
    const float inv_sqrt = 1.0f / sqrt((float)dim);
    for (size_t item = gm_group_id(); item < (size_t)rows * kv_heads; item += gm_num_groups()) {
        const size_t r = item / kv_heads, g = item % kv_heads;
        const unsigned int slot = meta[4 * r], n = meta[4 * r + 1] + 1;
        const size_t q_at = q_off + r * q_row + g * group * dim;
        for (unsigned int i = lid; i < width; i += SERVE_WG)
            qs[i] = GM_LOAD(q, q_at + i, scale) * inv_sqrt;
        float acc[SERVE_PER_ITEM], m[SERVE_MAX_GROUP], l[SERVE_MAX_GROUP];
        for (unsigned int k = 0; k < SERVE_PER_ITEM; k++)
            acc[k] = 0.0f;
        for (unsigned int j = 0; j < group; j++) {
            m[j] = -INFINITY;
            l[j] = 0.0f;
        }
        gm_barrier();
        for (unsigned int t0 = 0; t0 < n; t0 += SERVE_WG) {
            const unsigned int tile = n - t0 < SERVE_WG ? n - t0 : SERVE_WG, t = t0 + lid;
            if (lid < tile) {
                const size_t at = serve_page(table, slot, t, block, max_blocks, layer, layers, page)
                                  + (g * block + t % block) * dim;
                tile_page[lid] = at;
                for (unsigned int j = 0; j < group; j++) {
                    float s = 0.0f;
                    for (unsigned int d = 0; d < dim; d++)
                        s += qs[j * dim + d] * GM_KVLOAD(pool, at + d, scale);
                    ps[j * SERVE_WG + lid] = s;
                }
            }
            gm_barrier();
            if (lid < group) {
                float mx = -INFINITY;
                for (unsigned int i = 0; i < tile; i++)
                    mx = fmax(mx, ps[lid * SERVE_WG + i]);
                tile_max[lid] = mx;
            }
            gm_barrier();
            if (lid < tile)
                for (unsigned int j = 0; j < group; j++)
                    ps[j * SERVE_WG + lid] = exp(ps[j * SERVE_WG + lid] - fmax(m[j], tile_max[j]));
            gm_barrier();
            if (lid < group) {
                float sum = 0.0f;
                for (unsigned int i = 0; i < tile; i++)
                    sum += ps[lid * SERVE_WG + i];
                tile_sum[lid] = sum;
            }
            gm_barrier();
            for (unsigned int k = 0; k < SERVE_PER_ITEM; k++) {
                const unsigned int e = lid + k * SERVE_WG;
                if (e >= width)
                    break;
                const unsigned int j = e / dim, d = e % dim;
                float a = acc[k] * exp(m[j] - fmax(m[j], tile_max[j]));
                for (unsigned int i = 0; i < tile; i++)
                    a += ps[j * SERVE_WG + i] * GM_KVLOAD(pool, tile_page[i] + page + d, scale);
                acc[k] = a;
            }
            for (unsigned int j = 0; j < group; j++) {
                const float mb = fmax(m[j], tile_max[j]);
                l[j] = l[j] * exp(m[j] - mb) + tile_sum[j];
                m[j] = mb;
            }
            gm_barrier();     /* ps, tile_page and the tile figures are rewritten next */
        }
        const size_t o_at = o_off + r * heads * dim + g * group * dim;
        for (unsigned int k = 0; k < SERVE_PER_ITEM; k++) {
            const unsigned int e = lid + k * SERVE_WG;
            if (e < width)
                GM_STORE(o, o_at + e, acc[k] / l[e / dim], scale);
        }
        gm_barrier();         /* qs is rewritten by the group's next item */
    }
}
#endif

/* SwiGLU of gate_up_proj's rows [gate | up] (`width` each, at gu_off):
 * act[r][j] = silu(gate) * up, silu(v) = v / (1 + e^-v), into the rows of
 * `width` at act_off (Shazeer 2020; vLLM's SiluAndMul). CPUs: a work item
 * a run of whole rows, so that no index is divided per element. */
#if defined(GM_CHUNKED)
GM_KERNEL serve_swiglu(GM_GLOBAL gm_t *GM_RESTRICT gu, gm_u64 gu_off, gm_u64 act_off, unsigned int rows,
                       unsigned int width, float scale)
{
    GM_FOR_EACH(r, (size_t)rows) {
        const size_t at = gu_off + r * 2 * width, out = act_off + r * width;
        for (unsigned int j = 0; j < width; j++) {
            const float g = GM_LOAD(gu, at + j, scale), u = GM_LOAD(gu, at + width + j, scale);
            GM_STORE(gu, out + j, g / (1.0f + exp(-g)) * u, scale);
        }
    }
}
#else
GM_KERNEL serve_swiglu(GM_GLOBAL gm_t *GM_RESTRICT gu, gm_u64 gu_off, gm_u64 act_off, unsigned int rows,
                       unsigned int width, float scale)
{
    GM_FOR_EACH(idx, (size_t)rows * width) {
        const size_t r = idx / width, j = idx % width, at = gu_off + r * 2 * width + j;
        const float g = GM_LOAD(gu, at, scale), u = GM_LOAD(gu, at + width, scale);
        GM_STORE(gu, act_off + idx, g / (1.0f + exp(-g)) * u, scale);
    }
}
#endif

/*
 * Greedy sampling: row r of the step's logits (in the activations'
 * precision, as the LM head wrote them) converted to fp32 into f32, and
 * its first largest entry's index written to sampled[s_off + slots[l_off + r]].
 */
#define SERVE_SAMPLE_PARAMS                                                                                    \
    GM_GLOBAL const gm_t *GM_RESTRICT logits, GM_GLOBAL float *GM_RESTRICT f32,                                 \
        GM_GLOBAL const gm_u32 *GM_RESTRICT slots, gm_u64 l_off, GM_GLOBAL gm_u32 *GM_RESTRICT sampled,          \
        gm_u64 s_off, unsigned int rows, unsigned int vocab, float scale
#if defined(GM_CHUNKED)
GM_KERNEL serve_sample(SERVE_SAMPLE_PARAMS)
{
    GM_FOR_EACH(r, (size_t)rows) {
        float best = -INFINITY;
        gm_u32 arg = 0;
        for (unsigned int j = 0; j < vocab; j++) {
            const float v = GM_LOAD(logits, r * vocab + j, scale);
            f32[r * vocab + j] = v;
            if (v > best) {
                best = v;
                arg = j;
            }
        }
        sampled[s_off + slots[l_off + r]] = arg;
    }
}
#else
#define SERVE_SAMPLE_WG 256
GM_KERNEL serve_sample(SERVE_SAMPLE_PARAMS)
{
    GM_LOCAL_DECL float best_v[SERVE_SAMPLE_WG];
    GM_LOCAL_DECL gm_u32 best_i[SERVE_SAMPLE_WG];
    const unsigned int lid = (unsigned int)gm_local_id();
    for (size_t r = gm_group_id(); r < rows; r += gm_num_groups()) {
        float best = -INFINITY;
        gm_u32 arg = 0xffffffffu;
        for (unsigned int j = lid; j < vocab; j += SERVE_SAMPLE_WG) {
            const float v = GM_LOAD(logits, r * vocab + j, scale);
            f32[r * vocab + j] = v;
            if (v > best || arg == 0xffffffffu) {
                best = v;
                arg = j;
            }
        }
        best_v[lid] = best;
        best_i[lid] = arg;
        gm_barrier();
        for (unsigned int stride = SERVE_SAMPLE_WG / 2; stride > 0; stride >>= 1) {
            if (lid < stride) {
                const float a = best_v[lid], b = best_v[lid + stride];
                const gm_u32 ia = best_i[lid], ib = best_i[lid + stride];
                if (ib != 0xffffffffu && (ia == 0xffffffffu || b > a || (b == a && ib < ia))) {
                    best_v[lid] = b;
                    best_i[lid] = ib;
                }
            }
            gm_barrier();
        }
        if (lid == 0)
            sampled[s_off + slots[l_off + r]] = best_i[0];
        gm_barrier();
    }
}
#endif
