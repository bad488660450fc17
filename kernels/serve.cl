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
#define SERVE_MAX_BLOCK 128     /* tokens a block at most (the engine's bound on --block-tokens) */
/* Both kernels' parameters (the host's arguments, serve_engine.c). q's
 * rows are qkv_proj's [q | k | v]. write_kv: the CPU kernel writes each
 * row's key and value into the pool first (serve_kv_write's work); the
 * GPU kernel is given 0 and never writes the pool. */
#define SERVE_ATTENTION_PARAMS                                                                                    \
    GM_GLOBAL const gm_t *GM_RESTRICT q, gm_u64 q_off, gm_u64 q_row, gm_u64 o_off, GM_GLOBAL gm_t *GM_RESTRICT o,  \
        GM_GLOBAL gm_kv_t *GM_RESTRICT pool, GM_GLOBAL const int *GM_RESTRICT table,                              \
        GM_GLOBAL const gm_u32 *GM_RESTRICT meta, unsigned int rows, unsigned int heads, unsigned int kv_heads,     \
        unsigned int dim, unsigned int block, unsigned int max_blocks, unsigned int layer, unsigned int layers,      \
        float scale, unsigned int write_kv

#if defined(GM_CHUNKED)
/* CPUs (OpenCL: the chunked variants are built for CPU devices alone, the
 * host fixing the head size and the group at build time with -DSERVE_DIM
 * and -DSERVE_GROUP): one work item per (row, KV head), every query head
 * of the group at once, so that each key and value is read once, in
 * 8-wide vectors along the head. A tile of SERVE_NT blocks at a time (the
 * online softmax needs no order among a tile's tokens): its keys scored
 * first, a token of each block in turn (SERVE_NT runs of memory in flight:
 * blocks are scattered, and a hardware prefetcher stops at each one's
 * end), one maximum and one rescale of the output a tile, the
 * exponentials 8 at a time, then its values weighted in, again a token of
 * each block in turn, SERVE_VX vectors of the output at a time: a whole
 * head of 128 (16 registers of AVX2), so that the tile's values are
 * walked once (in runs of 8 vectors they were walked twice, half of each
 * row at a time); the first line of each 4KiB page of the keys and values
 * is touched SERVE_AHEAD tiles ahead. (Decode attention of tiny-serve, 30
 * sequences of 1100 tokens, one layer, launched in turn with the kernel
 * before and a plain read of the same bytes on a loaded 2-core CPU: 0.71
 * to 0.85 of the read's rate against 0.64 to 0.81 for the kernel before,
 * higher in 11 of 12 runs; that kernel walked a token at a time in two
 * parts with their own softmax states and was bound by its arithmetic;
 * docs/serve.md. Tiles of 3 to 8 blocks measured alike, of 1 or 2 blocks
 * 10 to 40% slower. A whole head at once against runs of 8 vectors, the
 * four layers' attention of a decode step over the pool read beside it,
 * in turn: 0.75 to 0.88 against 0.65 to 0.78 in fp32 at 30 sequences of
 * 1024 tokens and 14 of 2048, 0.69 to 0.74 against 0.60 to 0.62 in bf16;
 * with vLLM's CPU blocks of 128 tokens, 0.90 to 0.97 in fp32.) With
 * write_kv, the item first writes its row's key and value
 * of its KV head into the pool (serve_kv_write's work, fused: the host
 * asks for it only when every row is a decode row of a sequence of its
 * own, so that no item reads a key another item writes). */
#if defined(GM_BF16)
#define SERVE_LOAD8(p, i) as_float8(convert_uint8(vload8(0, (p) + (i))) << 16)
#elif defined(GM_FP16)
#define SERVE_LOAD8(p, i) vload_half8(0, (GM_GLOBAL const half *)((p) + (i)))
#else
#define SERVE_LOAD8(p, i) vload8(0, (p) + (i))
#endif
#define SERVE_D8 (SERVE_DIM / 8)
#define SERVE_G SERVE_GROUP
#define SERVE_NT 4                      /* blocks a tile */
#define SERVE_PAGE_ELEMS (4096 / sizeof(gm_kv_t)) /* elements of a 4KiB page */
#define SERVE_AHEAD 8                   /* tiles between a tile's page touches and its loads */
#define SERVE_VX 16                     /* output vectors accumulated at once: a head of 128 */
#define SERVE_TILE (SERVE_NT * SERVE_MAX_BLOCK) /* a query head's scores, a block's after another's */
GM_INLINE float serve_sum8(float8 v)
{
    const float4 a = v.lo + v.hi;
    const float2 b = a.lo + a.hi;
    return b.x + b.y;
}

/* Scores token t of each of the first nb blocks of the tile (key rows
 * kp[i], SERVE_DIM apart) against every query head (qv, scaled by
 * 1/sqrt(dim)) into s[j * SERVE_TILE + i * SERVE_MAX_BLOCK + t]: nb x
 * SERVE_G dot products side by side. Inlined, so that its loops unroll
 * for the constant nb. */
GM_INLINE __attribute__((always_inline)) void serve_score(float *s, const float8 *qv,
                                                          GM_GLOBAL const gm_kv_t *const *kp, unsigned int t,
                                                          const unsigned int nb)
{
    float8 a[SERVE_NT * SERVE_G];
#pragma unroll
    for (unsigned int u = 0; u < nb * SERVE_G; u++)
        a[u] = (float8)(0.0f);
#pragma unroll
    for (unsigned int x = 0; x < SERVE_D8; x++)
#pragma unroll
        for (unsigned int i = 0; i < nb; i++) {
            const float8 k = SERVE_LOAD8(kp[i], (size_t)t * SERVE_DIM + 8 * x);
#pragma unroll
            for (unsigned int j = 0; j < SERVE_G; j++)
                a[i * SERVE_G + j] = fma(qv[j * SERVE_D8 + x], k, a[i * SERVE_G + j]);
        }
#pragma unroll
    for (unsigned int i = 0; i < nb; i++)
#pragma unroll
        for (unsigned int j = 0; j < SERVE_G; j++)
            s[j * SERVE_TILE + i * SERVE_MAX_BLOCK + t] = serve_sum8(a[i * SERVE_G + j]);
}

/* Weighs tokens t0..t1-1 of each of the first nb blocks of the tile (value
 * rows vp[i]; their weights p[i * SERVE_MAX_BLOCK + u]) into a, output
 * vectors x0.. of a query head. Inlined as serve_score. */
GM_INLINE __attribute__((always_inline)) void serve_weigh(float8 *a, const float *p,
                                                          GM_GLOBAL const gm_kv_t *const *vp, unsigned int t0,
                                                          unsigned int t1, const unsigned int x0, const unsigned int nb)
{
    for (unsigned int u = t0; u < t1; u++)
#pragma unroll
        for (unsigned int i = 0; i < nb; i++) {
            const float8 w = (float8)(p[i * SERVE_MAX_BLOCK + u]);
#pragma unroll
            for (unsigned int x = 0; x < SERVE_VX; x++)
                if (x0 + x < SERVE_D8)
                    a[x] = fma(w, SERVE_LOAD8(vp[i], (size_t)u * SERVE_DIM + 8 * (x0 + x)), a[x]);
        }
}

/* A tile of nb blocks (SERVE_NT at most), all full but the last, which
 * holds `last` tokens: tokens [0, last) of every block side by side, then
 * the full blocks' rest; scored, then weighed in. Inlined for each nb (the
 * caller's branches: a sequence's last tile is as fast as the others). */
#if SERVE_NT != 4
#error "serve_attention's branches take tiles of 1 to 4 blocks"
#endif
GM_INLINE __attribute__((always_inline)) void serve_tile_score(float *s, const float8 *qv,
                                                               GM_GLOBAL const gm_kv_t *const *kp, unsigned int last,
                                                               unsigned int block, const unsigned int nb)
{
    unsigned int t = 0;
    for (; t < last; t++)
        serve_score(s, qv, kp, t, nb);
    if (nb > 1)
        for (; t < block; t++)
            serve_score(s, qv, kp, t, nb - 1);
}

GM_INLINE __attribute__((always_inline)) void serve_tile_weigh(float8 *a, const float *p,
                                                               GM_GLOBAL const gm_kv_t *const *vp, unsigned int last,
                                                               unsigned int block, const unsigned int x0,
                                                               const unsigned int nb)
{
    serve_weigh(a, p, vp, 0, last, x0, nb);
    if (nb > 1)
        serve_weigh(a, p, vp, last, block, x0, nb - 1);
}

/* Touches the first line of each 4KiB page of the keys and values (KV
 * head at `head`) of the tile from token t0 (those of its blocks before
 * token n), so that the pages' translations are walked and the hardware
 * prefetcher has its runs before the tile's loads arrive. */
GM_INLINE void serve_touch(GM_GLOBAL const gm_kv_t *pool, GM_GLOBAL const int *GM_RESTRICT table, unsigned int slot,
                           unsigned int t0, unsigned int n, unsigned int block, unsigned int max_blocks,
                           unsigned int layer, unsigned int layers, size_t page, size_t head)
{
    for (unsigned int i = 0; i < SERVE_NT && t0 + i * block < n; i++) {
        GM_GLOBAL const gm_kv_t *p =
            pool + serve_page(table, slot, t0 + i * block, block, max_blocks, layer, layers, page) + head;
        for (unsigned int e = 0; e < block * SERVE_DIM; e += SERVE_PAGE_ELEMS) {
            gm_prefetch(p + e);
            gm_prefetch(p + page + e);
        }
    }
}

GM_KERNEL serve_attention(SERVE_ATTENTION_PARAMS)
{
    const size_t page = (size_t)kv_heads * SERVE_DIM * block;
    const float inv_sqrt = 1.0f / sqrt((float)SERVE_DIM);
    GM_FOR_EACH(item, (size_t)rows * kv_heads) {
        const size_t r = item / kv_heads, g = item % kv_heads, head = g * block * SERVE_DIM;
        const unsigned int slot = meta[4 * r], pos = meta[4 * r + 1], n = pos + 1;
        const size_t q_at = q_off + r * q_row + g * SERVE_G * SERVE_DIM;
        if (write_kv) {
            const size_t from = q_off + r * q_row + (size_t)heads * SERVE_DIM + g * SERVE_DIM;
            const size_t to = serve_page(table, slot, pos, block, max_blocks, layer, layers, page) + head
                              + (size_t)(pos % block) * SERVE_DIM;
            for (unsigned int d = 0; d < SERVE_DIM; d++) {
                GM_KVSTORE(pool, to + d, GM_LOAD(q, from + d, scale), scale);
                GM_KVSTORE(pool, to + page + d, GM_LOAD(q, from + (size_t)kv_heads * SERVE_DIM + d, scale), scale);
            }
        }
        float8 qv[SERVE_G * SERVE_D8], acc[SERVE_G * SERVE_D8];
        float m[SERVE_G], l[SERVE_G], s[SERVE_G * SERVE_TILE];
        for (unsigned int i = 0; i < SERVE_G * SERVE_D8; i++) {
            qv[i] = SERVE_LOAD8(q, q_at + 8 * (size_t)i) * inv_sqrt;
            acc[i] = (float8)(0.0f);
        }
        for (unsigned int j = 0; j < SERVE_G; j++) {
            m[j] = -INFINITY;
            l[j] = 0.0f;
        }
        for (unsigned int t0 = 0; t0 < SERVE_AHEAD * SERVE_NT * block; t0 += SERVE_NT * block)
            serve_touch(pool, table, slot, t0, n, block, max_blocks, layer, layers, page, head);
        for (unsigned int t0 = 0; t0 < n; t0 += SERVE_NT * block) {
            /* The tile: nt blocks from token t0, all full but the last,
             * which holds last tokens. */
            const unsigned int left = n - t0, nt = left < SERVE_NT * block ? (left + block - 1) / block : SERVE_NT;
            const unsigned int last = left - (nt - 1) * block < block ? left - (nt - 1) * block : block;
            GM_GLOBAL const gm_kv_t *kp[SERVE_NT], *vp[SERVE_NT];
            for (unsigned int i = 0; i < SERVE_NT; i++) {
                kp[i] = pool + serve_page(table, slot, t0 + (i < nt ? i : 0) * block, block, max_blocks, layer, layers,
                                          page) + head;
                vp[i] = kp[i] + page;
            }
            serve_touch(pool, table, slot, t0 + SERVE_AHEAD * SERVE_NT * block, n, block, max_blocks, layer, layers,
                        page, head);
            /* Tokens [0, last) of every block of the tile side by side, then
             * the full blocks' rest. */
            if (nt == 4)
                serve_tile_score(s, qv, kp, last, block, 4);
            else if (nt == 3)
                serve_tile_score(s, qv, kp, last, block, 3);
            else if (nt == 2)
                serve_tile_score(s, qv, kp, last, block, 2);
            else
                serve_tile_score(s, qv, kp, last, block, 1);
            float c[SERVE_G];
            for (unsigned int j = 0; j < SERVE_G; j++) {
                float *sj = s + j * SERVE_TILE, mx = m[j];
                for (unsigned int i = 0; i < nt; i++)
                    for (unsigned int u = 0; u < (i + 1 < nt ? block : last); u++)
                        mx = fmax(mx, sj[i * SERVE_MAX_BLOCK + u]);
                float8 sum = (float8)(0.0f);
                for (unsigned int i = 0; i < nt; i++) {
                    const unsigned int cnt = i + 1 < nt ? block : last;
                    float *si = sj + i * SERVE_MAX_BLOCK;
                    for (unsigned int u = cnt; u < ((cnt + 7) & ~7u); u++)
                        si[u] = -INFINITY;
                    for (unsigned int u = 0; u < cnt; u += 8) {
                        const float8 p = exp(vload8(0, si + u) - mx);
                        vstore8(p, 0, si + u);
                        sum += p;
                    }
                }
                c[j] = exp(m[j] - mx);
                l[j] = l[j] * c[j] + serve_sum8(sum);
                m[j] = mx;
            }
#pragma unroll
            for (unsigned int j = 0; j < SERVE_G; j++) {
                const float *pj = s + j * SERVE_TILE;
#pragma unroll
                for (unsigned int x0 = 0; x0 < SERVE_D8; x0 += SERVE_VX) {
                    float8 a[SERVE_VX];
#pragma unroll
                    for (unsigned int x = 0; x < SERVE_VX; x++)
                        if (x0 + x < SERVE_D8)
                            a[x] = acc[j * SERVE_D8 + x0 + x] * c[j];
                    if (nt == 4)
                        serve_tile_weigh(a, pj, vp, last, block, x0, 4);
                    else if (nt == 3)
                        serve_tile_weigh(a, pj, vp, last, block, x0, 3);
                    else if (nt == 2)
                        serve_tile_weigh(a, pj, vp, last, block, x0, 2);
                    else
                        serve_tile_weigh(a, pj, vp, last, block, x0, 1);
#pragma unroll
                    for (unsigned int x = 0; x < SERVE_VX; x++)
                        if (x0 + x < SERVE_D8)
                            acc[j * SERVE_D8 + x0 + x] = a[x];
                }
            }
        }
        const size_t o_at = o_off + r * heads * SERVE_DIM + g * SERVE_G * SERVE_DIM;
        for (unsigned int j = 0; j < SERVE_G; j++) {
            const float inv = 1.0f / l[j];
            for (unsigned int x = 0; x < SERVE_D8; x++) {
                const float8 v = acc[j * SERVE_D8 + x] * inv;
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
