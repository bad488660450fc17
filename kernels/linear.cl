/*
 * linear: Y[M, N] = X[M, K] * W[K, N] (row-major), M = batch * seq,
 * K = hidden, N = output features. Storage in gm_t (gm_portable.h),
 * products accumulated in fp32; int8 uses per-tensor scales sx, sw for the
 * inputs and sy for the output. W is stored as gm_w_t (a weight role token
 * in the variant, e.g. "bf16-wint4-chunked"; else gm_t): int4 weights are
 * dequantised on load with the fp16 scales `wscale`, one per `wgroup` rows of
 * a column (w_off is then in bytes and the matrix's scales start at element
 * 2 * w_off / wgroup of wscale, gm_portable.h's GM_WLOAD; wscale and wgroup
 * are ignored otherwise).
 *
 * Both kernels take element offsets into x, w, y and r (a layer's slice of
 * a stacked tensor) and an epilogue applied to each fp32 result before it
 * is stored: GM_EPI_RESIDUAL adds r[i] (same layout as y, scale sr),
 * GM_EPI_GELU applies GELU (tanh form). 0 stores X * W as it is.
 *
 * Tiled: each work group computes a GM_TILE x GM_TILE block of Y, each
 * work item GM_WPT x 1 outputs of it (a column strip), staging tiles of X
 * and W through local memory. Launch: one group of
 * GM_TILE * GM_TILE / GM_WPT items per output tile, groups numbered
 * row-major over the tile grid.
 */
#define GM_EPI_RESIDUAL 1u
#define GM_EPI_GELU 2u

GM_INLINE float gm_gelu(float v)
{
    return 0.5f * v * (1.0f + gm_tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
}

#define GM_EPILOGUE(acc, i)                                                          \
    ((epilogue & GM_EPI_GELU) ? gm_gelu(acc)                                          \
                              : (epilogue & GM_EPI_RESIDUAL) ? (acc) + GM_LOAD(r, (i), sr) : (acc))

/* The common parameters after x, w, y; the body's first step applies the offsets. */
#define GM_LINEAR_PARAMS                                                              \
    GM_GLOBAL const gm_t *GM_RESTRICT r, unsigned int m, unsigned int n, unsigned int k, \
        float sx, float sw, float sy, float sr, gm_u64 x_off, gm_u64 w_off, gm_u64 y_off, \
        gm_u64 r_off, unsigned int epilogue, GM_GLOBAL const gm_u16 *GM_RESTRICT wscale, unsigned int wgroup
#define GM_LINEAR_APPLY_OFFSETS()                                                     \
    do {                                                                              \
        x += x_off;                                                                   \
        w += w_off;                                                                   \
        y += y_off;                                                                   \
        r += r_off;                                                                   \
    } while (0)

#define GM_TILE 32
#define GM_WPT 8
#define GM_RTS (GM_TILE / GM_WPT)     /* rows of work items in a group */

GM_KERNEL linear_tiled(GM_GLOBAL const gm_t *GM_RESTRICT x, GM_GLOBAL const gm_w_t *GM_RESTRICT w,
                       GM_GLOBAL gm_t *GM_RESTRICT y, GM_LINEAR_PARAMS)
{
    GM_LINEAR_APPLY_OFFSETS();
    GM_LOCAL_DECL float xs[GM_TILE][GM_TILE];
    GM_LOCAL_DECL float ws[GM_TILE][GM_TILE + 1];
    const unsigned int tiles_n = (n + GM_TILE - 1) / GM_TILE;
    const unsigned int row0 = (unsigned int)(gm_group_id() / tiles_n) * GM_TILE;
    const unsigned int col0 = (unsigned int)(gm_group_id() % tiles_n) * GM_TILE;
    const unsigned int lid = (unsigned int)gm_local_id();
    const unsigned int tc = lid % GM_TILE;          /* column within the tile */
    const unsigned int tr = lid / GM_TILE;          /* first row (of GM_WPT, GM_RTS apart) */
    float acc[GM_WPT];
    for (int i = 0; i < GM_WPT; i++)
        acc[i] = 0.0f;
    for (unsigned int k0 = 0; k0 < k; k0 += GM_TILE) {
        for (int i = 0; i < GM_WPT; i++) {
            unsigned int lr = tr + (unsigned int)i * GM_RTS;
            unsigned int gr = row0 + lr, gk = k0 + tc;
            xs[lr][tc] = (gr < m && gk < k) ? GM_LOAD(x, (size_t)gr * k + gk, sx) : 0.0f;
            unsigned int wk = k0 + lr, wc = col0 + tc;
            ws[lr][tc] = (wk < k && wc < n) ? GM_WLOAD(w, (size_t)wk * n + wc, wk, wc, sw) : 0.0f;
        }
        gm_barrier();
        for (int kk = 0; kk < GM_TILE; kk++) {
            float wv = ws[kk][tc];
            for (int i = 0; i < GM_WPT; i++)
                acc[i] += xs[tr + (unsigned int)i * GM_RTS][kk] * wv;
        }
        gm_barrier();
    }
    for (int i = 0; i < GM_WPT; i++) {
        unsigned int gr = row0 + tr + (unsigned int)i * GM_RTS, gc = col0 + tc;
        if (gr < m && gc < n)
            GM_STORE(y, (size_t)gr * n + gc, GM_EPILOGUE(acc[i], (size_t)gr * n + gc), sy);
    }
}

/*
 * Register-blocked over packed panels, for CPU devices: no barriers, so
 * that PoCL's CPU device keeps a work item's GM_RB x GM_CB accumulators
 * in vector registers (the loops over a block are unrolled).
 *
 * Each work item computes GM_NS strips of GM_CB columns (a span) of a row
 * group of Y: up to GM_NB blocks of GM_RB rows. For every chunk of GM_KC
 * rows of W it copies the span's slice of W, converted to float, into the
 * panel `wp`, and for every row block the block's slice of X into `xp`
 * (fp32 X is read in place: nothing to convert), then runs the block
 * against each strip of the panel, carrying the partial sums in `part`
 * from chunk to chunk; after the last chunk each row's strip goes to y in
 * one unrolled run (the epilogue's branch taken once a strip, whole
 * strips of a plain or residual product stored as vectors). The inner
 * loop thus streams contiguous floats of W from L1 whatever the
 * precision: a strip read in place has its rows n elements apart (at a
 * power-of-two n they all fall into the same cache sets), and each
 * weight is converted once per row group, each input once per span,
 * instead of once per product. Rows past m
 * repeat row m - 1 and are not stored; the panel's columns past n are 0.
 *
 * The panels and the partial sums are the group's local arrays, a group
 * being one work item: as private arrays they would be stack on CUDA,
 * which reserves the largest kernel frame for every resident thread
 * (CUDA never runs this kernel, but it compiles it).
 *
 * Launch: groups * ceil(n / (GM_NS * GM_CB)) work items, local size 1,
 * numbered row-major over (row group, span), so that neighbours share
 * their rows of X. The host picks `groups`, at least
 * ceil(m / (GM_RB * GM_NB)) (more to give every core work when m is
 * small); the ceil(m / GM_RB) row blocks are dealt out evenly,
 * ceil(blocks / groups) to a group.
 *
 * A few rows (m <= GM_RB: a decode step's tokens) take linear_rows_body
 * below instead, with its own launch geometry.
 */
#define GM_RB 6      /* rows of a register block: 6 x 16 floats = 12 AVX registers */
#define GM_CB 16     /* columns of a strip */
#define GM_NS 2      /* strips of a span */
#define GM_NB 16     /* row blocks of a row group */
#define GM_KC 128    /* rows of W per panel (wp 16 KiB, xp 3 KiB (none in fp32), part 12 KiB) */

/*
 * linear_blocked for m <= GM_RB rows. Each weight then serves at most
 * GM_RB products, so the work is bound by reading W, and W is read the
 * way memory streams best: row after row of W, each work item a span of
 * contiguous columns (at most GM_ROWS_SPAN floats of each row), the next
 * rows ahead asked for (gm_prefetch) while these are used. The span's
 * partial sums, m rows of it, stay in local memory (`acc`) until the last
 * row of W; only the m real rows are computed.
 *
 * Launch: `spans` work items, local size 1; each takes
 * ceil(ceil(n / spans) / GM_CB) * GM_CB columns, at most GM_ROWS_SPAN (the
 * host launches enough spans for that: bench/workloads/kernel_calls.c).
 */
#define GM_ROWS_SPAN 512     /* columns of a span at most: acc is GM_RB x 512 floats (12 KiB) */
#define GM_ROWS_STEP 4       /* rows of W a pass over the span uses */
#define GM_ROWS_AHEAD 8      /* rows of W asked for ahead */

GM_INLINE void linear_rows_body(GM_GLOBAL const gm_t *GM_RESTRICT x, GM_GLOBAL const gm_w_t *GM_RESTRICT w,
                                GM_GLOBAL gm_t *GM_RESTRICT y, GM_GLOBAL const gm_t *GM_RESTRICT r, unsigned int m,
                                unsigned int n, unsigned int k, float sx, float sw, float sy, float sr,
                                gm_u64 w_off, unsigned int epilogue, GM_GLOBAL const gm_u16 *GM_RESTRICT wscale,
                                unsigned int wgroup, GM_LOCAL float *GM_RESTRICT acc)
{
    const unsigned int items = (unsigned int)gm_global_size();
    const unsigned int wide = ((n + items - 1) / items + GM_CB - 1) / GM_CB * GM_CB;
    const unsigned int col0 = (unsigned int)gm_global_id() * wide;
    if (col0 >= n)
        return;
    const unsigned int cols = n - col0 < wide ? n - col0 : wide;
    const unsigned int whole = cols / GM_CB * GM_CB;   /* columns in whole strips */
    for (unsigned int i = 0; i < m; i++)
        for (unsigned int c = 0; c < cols; c++)
            acc[i * GM_ROWS_SPAN + c] = 0.0f;
    /* GM_ROWS_STEP rows of W at a time (then one at a time), so that each
     * partial sum is loaded and stored once for all of them. */
    unsigned int kk = 0;
    for (; kk + GM_ROWS_STEP <= k; kk += GM_ROWS_STEP) {
        float xv[GM_ROWS_STEP][GM_RB];
#pragma unroll
        for (unsigned int q = 0; q < GM_ROWS_STEP; q++)
#pragma unroll
            for (unsigned int i = 0; i < GM_RB; i++)
                xv[q][i] = i < m ? GM_LOAD(x, (size_t)i * k + kk + q, sx) : 0.0f;
        const bool ahead = kk + GM_ROWS_STEP + GM_ROWS_AHEAD <= k;
        for (unsigned int c0 = 0; c0 < whole; c0 += GM_CB) {
            float wv[GM_ROWS_STEP][GM_CB];
#pragma unroll
            for (unsigned int q = 0; q < GM_ROWS_STEP; q++) {
                const size_t at = (size_t)(kk + q) * n + col0 + c0;
                if (ahead)
                    gm_prefetch(w + at + (size_t)GM_ROWS_AHEAD * n);
#pragma unroll
                for (unsigned int c = 0; c < GM_CB; c++)
                    wv[q][c] = GM_WLOAD(w, at + c, kk + q, col0 + c0 + c, sw);
            }
            for (unsigned int i = 0; i < m; i++) {
                GM_LOCAL float *GM_RESTRICT a = acc + i * GM_ROWS_SPAN + c0;
#pragma unroll
                for (unsigned int c = 0; c < GM_CB; c++) {
                    float v = a[c];
#pragma unroll
                    for (unsigned int q = 0; q < GM_ROWS_STEP; q++)
                        v += xv[q][i] * wv[q][c];
                    a[c] = v;
                }
            }
        }
        for (unsigned int c = whole; c < cols; c++)
            for (unsigned int q = 0; q < GM_ROWS_STEP; q++) {
                const float wc = GM_WLOAD(w, (size_t)(kk + q) * n + col0 + c, kk + q, col0 + c, sw);
                for (unsigned int i = 0; i < m; i++)
                    acc[i * GM_ROWS_SPAN + c] += xv[q][i] * wc;
            }
    }
    for (; kk < k; kk++) {
        const size_t row = (size_t)kk * n + col0;
        float xv[GM_RB];
        for (unsigned int i = 0; i < m; i++)
            xv[i] = GM_LOAD(x, (size_t)i * k + kk, sx);
        for (unsigned int c = 0; c < cols; c++) {
            const float wc = GM_WLOAD(w, row + c, kk, col0 + c, sw);
            for (unsigned int i = 0; i < m; i++)
                acc[i * GM_ROWS_SPAN + c] += xv[i] * wc;
        }
    }
    for (unsigned int i = 0; i < m; i++)
        for (unsigned int c = 0; c < cols; c++) {
            const size_t at = (size_t)i * n + col0 + c;
            GM_STORE(y, at, GM_EPILOGUE(acc[i * GM_ROWS_SPAN + c], at), sy);
        }
}

/* fp32 X needs no conversion: linear_blocked reads a block's rows in
 * place (xr), where other precisions convert them once into xp. */
#if defined(GM_FP32)
#define GM_LINEAR_X_IN_PLACE 1
#define GM_LINEAR_X(i, kk) GM_LOAD(xr[i], kk, sx)
#else
#define GM_LINEAR_X(i, kk) xp[(i) * GM_KC + (kk)]
#endif

GM_KERNEL linear_blocked(GM_GLOBAL const gm_t *GM_RESTRICT x, GM_GLOBAL const gm_w_t *GM_RESTRICT w,
                         GM_GLOBAL gm_t *GM_RESTRICT y, GM_LINEAR_PARAMS)
{
    GM_LINEAR_APPLY_OFFSETS();
    GM_LOCAL_DECL float acc[GM_RB * GM_ROWS_SPAN];   /* linear_rows_body's */
    if (m <= GM_RB) {
        linear_rows_body(x, w, y, r, m, n, k, sx, sw, sy, sr, w_off, epilogue, wscale, wgroup, acc);
        return;
    }
    const unsigned int wide = GM_NS * GM_CB;                  /* columns of a span */
    const unsigned int spans = (n + wide - 1) / wide;
    const unsigned int groups = (unsigned int)(gm_global_size() / spans);
    const unsigned int fair = ((m + GM_RB - 1) / GM_RB + groups - 1) / groups;
    const unsigned int per = fair < GM_NB ? fair : GM_NB;   /* row blocks of a group */
    const unsigned int col0 = (unsigned int)(gm_global_id() % spans) * wide;
    const unsigned int row0 = (unsigned int)(gm_global_id() / spans) * per * GM_RB;
    if (row0 >= m)
        return;
    const unsigned int left = (m - row0 + GM_RB - 1) / GM_RB;
    const unsigned int blocks = left < per ? left : per;
    const unsigned int rest = (n - col0 + GM_CB - 1) / GM_CB;  /* strips from col0 on */
    const unsigned int strips = rest < GM_NS ? rest : GM_NS;
    GM_LOCAL_DECL float wp[GM_NS * GM_KC * GM_CB];            /* [strip][row of W][column] */
#if !defined(GM_LINEAR_X_IN_PLACE)
    GM_LOCAL_DECL float xp[GM_RB * GM_KC];                    /* [row][column of X] */
#endif
    GM_LOCAL_DECL float part[GM_NB * GM_NS * GM_RB * GM_CB];  /* [block][strip][row][column] */
    for (unsigned int k0 = 0; k0 < k; k0 += GM_KC) {
        const unsigned int kn = k - k0 < GM_KC ? k - k0 : GM_KC;
        for (unsigned int s = 0; s < strips; s++) {
            const unsigned int c0 = col0 + s * GM_CB;
            GM_LOCAL float *GM_RESTRICT ws = wp + s * (GM_KC * GM_CB);
            if (c0 + GM_CB <= n) {
                for (unsigned int kk = 0; kk < kn; kk++)
#pragma unroll
                    for (unsigned int c = 0; c < GM_CB; c++)
                        ws[kk * GM_CB + c] = GM_WLOAD(w, (size_t)(k0 + kk) * n + c0 + c, k0 + kk, c0 + c, sw);
            } else {
                for (unsigned int kk = 0; kk < kn; kk++)
                    for (unsigned int c = 0; c < GM_CB; c++)
                        ws[kk * GM_CB + c] =
                            c0 + c < n ? GM_WLOAD(w, (size_t)(k0 + kk) * n + c0 + c, k0 + kk, c0 + c, sw) : 0.0f;
            }
        }
        for (unsigned int b = 0; b < blocks; b++) {
#if defined(GM_LINEAR_X_IN_PLACE)
            GM_GLOBAL const gm_t *xr[GM_RB];                  /* the block's rows of X from k0 */
#pragma unroll
            for (unsigned int i = 0; i < GM_RB; i++) {
                const unsigned int row = row0 + b * GM_RB + i;
                xr[i] = x + (size_t)(row < m ? row : m - 1) * k + k0;
            }
#else
#pragma unroll
            for (unsigned int i = 0; i < GM_RB; i++) {
                const unsigned int row = row0 + b * GM_RB + i;
                const size_t from = (size_t)(row < m ? row : m - 1) * k + k0;
                for (unsigned int kk = 0; kk < kn; kk++)
                    xp[i * GM_KC + kk] = GM_LOAD(x, from + kk, sx);
            }
#endif
            for (unsigned int s = 0; s < strips; s++) {
                GM_LOCAL const float *GM_RESTRICT ws = wp + s * (GM_KC * GM_CB);
                GM_LOCAL float *GM_RESTRICT pb = part + (b * GM_NS + s) * (GM_RB * GM_CB);
                float acc[GM_RB][GM_CB];
#pragma unroll
                for (unsigned int i = 0; i < GM_RB; i++)
#pragma unroll
                    for (unsigned int c = 0; c < GM_CB; c++)
                        acc[i][c] = k0 ? pb[i * GM_CB + c] : 0.0f;
                for (unsigned int kk = 0; kk < kn; kk++) {
                    float wv[GM_CB];
#pragma unroll
                    for (unsigned int c = 0; c < GM_CB; c++)
                        wv[c] = ws[kk * GM_CB + c];
#pragma unroll
                    for (unsigned int i = 0; i < GM_RB; i++) {
                        const float xv = GM_LINEAR_X(i, kk);
#pragma unroll
                        for (unsigned int c = 0; c < GM_CB; c++)
                            acc[i][c] += xv * wv[c];
                    }
                }
#pragma unroll
                for (unsigned int i = 0; i < GM_RB; i++)
#pragma unroll
                    for (unsigned int c = 0; c < GM_CB; c++)
                        pb[i * GM_CB + c] = acc[i][c];
            }
        }
    }
    /* The sums to y: a whole strip of a row in one unrolled run, the
     * epilogue's branch taken once for it (GELU's tanh stays a loop). */
    for (unsigned int q = 0; q < blocks * GM_RB && row0 + q < m; q++)
        for (unsigned int s = 0; s < strips; s++) {
            GM_LOCAL const float *GM_RESTRICT pb = part + ((q / GM_RB) * GM_NS + s) * (GM_RB * GM_CB) + (q % GM_RB) * GM_CB;
            const unsigned int c0 = col0 + s * GM_CB;
            const size_t at = (size_t)(row0 + q) * n + c0;
            if (c0 + GM_CB > n || (epilogue & GM_EPI_GELU)) {
                for (unsigned int c = 0; c < GM_CB && c0 + c < n; c++)
                    GM_STORE(y, at + c, GM_EPILOGUE(pb[c], at + c), sy);
            } else if (epilogue & GM_EPI_RESIDUAL) {
#pragma unroll
                for (unsigned int c = 0; c < GM_CB; c++)
                    GM_STORE(y, at + c, pb[c] + GM_LOAD(r, at + c, sr), sy);
            } else {
#pragma unroll
                for (unsigned int c = 0; c < GM_CB; c++)
                    GM_STORE(y, at + c, pb[c], sy);
            }
        }
}

/*
 * matmul_strided: c_z = op(a_z) op(b_z) (+ r_z) for z < batch, m x n
 * outputs each, any layout: element (i, l) of op(a_z) is
 * a[a_off + z * a_bs + i * a_rs + l * a_cs], element (l, j) of op(b_z)
 * b[b_off + z * b_bs + l * b_rs + j * b_cs] (a transpose swaps a
 * matrix's two strides), element (i, j) of c_z c[c_off + z * c_bs +
 * i * c_rs + j], and r_z laid out as c_z from r_off (r may be c: the
 * product is added to it). One work item an output, products summed in
 * fp32 in order of l. Flags: GM_MM_RESIDUAL adds r; GM_MM_C_FP32 makes c
 * (and r) fp32 whatever gm_t is; GM_MM_C_INT32 (int8 only) makes c the
 * exact int32 sum of the products of the stored codes, as the vendor's
 * int8 GEMM writes it (r is then int32 too).
 */
#define GM_MM_RESIDUAL 1u
#define GM_MM_C_FP32 2u
#define GM_MM_C_INT32 4u

GM_KERNEL matmul_strided(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_t *GM_RESTRICT b, GM_GLOBAL gm_t *c,
                         GM_GLOBAL const gm_t *r, unsigned int m, unsigned int n, unsigned int k, unsigned int batch,
                         gm_u64 a_off, gm_u64 a_rs, gm_u64 a_cs, gm_u64 a_bs, gm_u64 b_off, gm_u64 b_rs,
                         gm_u64 b_cs, gm_u64 b_bs, gm_u64 c_off, gm_u64 c_rs, gm_u64 c_bs, gm_u64 r_off,
                         unsigned int flags, float sa, float sb, float sc, float sr)
{
    GM_FOR_EACH(idx, (size_t)batch * m * n) {
        const size_t j = idx % n, i = idx / n % m, z = idx / n / m;
        const size_t ai = a_off + z * a_bs + i * a_rs, bj = b_off + z * b_bs + j * b_cs;
        const size_t at = z * c_bs + i * c_rs + j;
#if defined(GM_INT8)
        if (flags & GM_MM_C_INT32) {
            int acc = 0;
            for (unsigned int l = 0; l < k; l++)
                acc += (int)a[ai + l * a_cs] * (int)b[bj + l * b_rs];
            GM_GLOBAL int *ci = (GM_GLOBAL int *)c;
            ci[c_off + at] = acc + ((flags & GM_MM_RESIDUAL) ? ((GM_GLOBAL const int *)r)[r_off + at] : 0);
            continue;
        }
#endif
        float acc = 0.0f;
        for (unsigned int l = 0; l < k; l++)
            acc += GM_LOAD(a, ai + l * a_cs, sa) * GM_LOAD(b, bj + l * b_rs, sb);
        if (flags & GM_MM_C_FP32) {
            GM_GLOBAL float *cf = (GM_GLOBAL float *)c;
            cf[c_off + at] = acc + ((flags & GM_MM_RESIDUAL) ? ((GM_GLOBAL const float *)r)[r_off + at] : 0.0f);
        } else {
            GM_STORE(c, c_off + at, (flags & GM_MM_RESIDUAL) ? acc + GM_LOAD(r, r_off + at, sr) : acc, sc);
        }
    }
}

/*
 * matmul_strided_tiled: matmul_strided's product (same arguments, not
 * GM_MM_C_INT32) for CPU devices, one work item a tile of GM_MM_TR rows
 * by GM_MM_TC columns of one c_z: each l loads GM_MM_TR elements of a and
 * GM_MM_TC of b for GM_MM_TR x GM_MM_TC products, where matmul_strided
 * loads two for one. Sums in fp32 in order of l: the same results as
 * matmul_strided, bit for bit, but for a whole fp32 tile on an OpenCL CPU
 * device whose a and b both run along l (A B^T, a training step's dX),
 * summed in 8 lanes added at the end (within fp32 rounding of the
 * same). Whole fp32 tiles with b row-major (A^T B, every dW) and with
 * a and b along l take vector loads and multiply-adds, where the loop
 * below leaves the compiler strides it cannot see. Items: batch x
 * ceil(m / GM_MM_TR) x ceil(n / GM_MM_TC).
 */
#define GM_MM_TR 4
#define GM_MM_TC 16
GM_KERNEL matmul_strided_tiled(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_t *GM_RESTRICT b,
                               GM_GLOBAL gm_t *c, GM_GLOBAL const gm_t *r, unsigned int m, unsigned int n,
                               unsigned int k, unsigned int batch, gm_u64 a_off, gm_u64 a_rs, gm_u64 a_cs,
                               gm_u64 a_bs, gm_u64 b_off, gm_u64 b_rs, gm_u64 b_cs, gm_u64 b_bs, gm_u64 c_off,
                               gm_u64 c_rs, gm_u64 c_bs, gm_u64 r_off, unsigned int flags, float sa, float sb,
                               float sc, float sr)
{
    const size_t tiles_m = (m + GM_MM_TR - 1) / GM_MM_TR, tiles_n = (n + GM_MM_TC - 1) / GM_MM_TC;
    GM_FOR_EACH(idx, (size_t)batch * tiles_m * tiles_n) {
        const size_t j0 = idx % tiles_n * GM_MM_TC, i0 = idx / tiles_n % tiles_m * GM_MM_TR;
        const size_t z = idx / tiles_n / tiles_m;
        const unsigned int rows = m - i0 < GM_MM_TR ? (unsigned int)(m - i0) : GM_MM_TR;
        const unsigned int cols = n - j0 < GM_MM_TC ? (unsigned int)(n - j0) : GM_MM_TC;
        const size_t ai = a_off + z * a_bs + i0 * a_rs, bj = b_off + z * b_bs + j0 * b_cs;
        /* A tile past the edge reads the edge's row or column again (its
         * sums are not stored): the loops stay whole, in registers. */
        size_t ar[GM_MM_TR], bc[GM_MM_TC];
#pragma unroll
        for (unsigned int i = 0; i < GM_MM_TR; i++)
            ar[i] = ai + (i < rows ? i : rows - 1) * a_rs;
#pragma unroll
        for (unsigned int q = 0; q < GM_MM_TC; q++)
            bc[q] = bj + (q < cols ? q : cols - 1) * b_cs;
        float acc[GM_MM_TR][GM_MM_TC];
#pragma unroll
        for (unsigned int i = 0; i < GM_MM_TR; i++)
#pragma unroll
            for (unsigned int q = 0; q < GM_MM_TC; q++)
                acc[i][q] = 0.0f;
#if defined(GM_OPENCL) && defined(GM_CHUNKED) && defined(GM_FP32)
        const bool whole = rows == GM_MM_TR && cols == GM_MM_TC;
        if (whole && b_cs == 1) {
            /* b row-major (every dW = X^T dY, and the training LM head's
             * fp32 logits): each l's 16 elements of b lie side by side,
             * one vector load, and the tile's 4 x 16 products are four
             * 16-wide multiply-adds, summed in the order of l. */
            float16 c[GM_MM_TR];
            for (unsigned int i = 0; i < GM_MM_TR; i++)
                c[i] = (float16)(0.0f);
            for (unsigned int l = 0; l < k; l++) {
                const float16 bv = vload16(0, b + bj + l * b_rs);
                const size_t al = l * a_cs;
                c[0] = fma((float16)(a[ar[0] + al]), bv, c[0]);
                c[1] = fma((float16)(a[ar[1] + al]), bv, c[1]);
                c[2] = fma((float16)(a[ar[2] + al]), bv, c[2]);
                c[3] = fma((float16)(a[ar[3] + al]), bv, c[3]);
            }
            for (unsigned int i = 0; i < GM_MM_TR; i++) {
                float e[GM_MM_TC];
                vstore16(c[i], 0, e);
                for (unsigned int q = 0; q < GM_MM_TC; q++)
                    acc[i][q] = e[q];
            }
        } else if (whole && a_cs == 1 && b_rs == 1) {
            /* A B^T with both row-major (every dX = dY W^T): each row of a
             * and column of b runs along l: 8-wide dot products, a 4 x 4
             * block of outputs at a time (16 vector sums), each output's
             * 8 lanes added at the end. */
            for (unsigned int q0 = 0; q0 < GM_MM_TC; q0 += 4) {
                float8 d[GM_MM_TR][4];
                for (unsigned int i = 0; i < GM_MM_TR; i++)
                    for (unsigned int q = 0; q < 4; q++)
                        d[i][q] = (float8)(0.0f);
                unsigned int l = 0;
                for (; l + 8 <= k; l += 8) {
                    float8 bv[4];
                    for (unsigned int q = 0; q < 4; q++)
                        bv[q] = vload8(0, b + bc[q0 + q] + l);
                    for (unsigned int i = 0; i < GM_MM_TR; i++) {
                        const float8 av = vload8(0, a + ar[i] + l);
                        for (unsigned int q = 0; q < 4; q++)
                            d[i][q] = fma(av, bv[q], d[i][q]);
                    }
                }
                for (unsigned int i = 0; i < GM_MM_TR; i++)
                    for (unsigned int q = 0; q < 4; q++) {
                        const float8 v = d[i][q];
                        const float4 h = v.lo + v.hi;
                        float sum = (h.s0 + h.s1) + (h.s2 + h.s3);
                        for (unsigned int t = l; t < k; t++)
                            sum = fma(a[ar[i] + t], b[bc[q0 + q] + t], sum);
                        acc[i][q0 + q] = sum;
                    }
            }
        } else
#endif
        {
            for (unsigned int l = 0; l < k; l++) {
                float av[GM_MM_TR], bv[GM_MM_TC];
#pragma unroll
                for (unsigned int i = 0; i < GM_MM_TR; i++)
                    av[i] = GM_LOAD(a, ar[i] + l * a_cs, sa);
#pragma unroll
                for (unsigned int q = 0; q < GM_MM_TC; q++)
                    bv[q] = GM_LOAD(b, bc[q] + l * b_rs, sb);
#pragma unroll
                for (unsigned int i = 0; i < GM_MM_TR; i++)
#pragma unroll
                    for (unsigned int q = 0; q < GM_MM_TC; q++)
                        acc[i][q] += av[i] * bv[q];
            }
        }
        for (unsigned int i = 0; i < rows; i++)
            for (unsigned int q = 0; q < cols; q++) {
                const size_t at = z * c_bs + (i0 + i) * c_rs + j0 + q;
                if (flags & GM_MM_C_FP32) {
                    GM_GLOBAL float *cf = (GM_GLOBAL float *)c;
                    cf[c_off + at] = acc[i][q] + ((flags & GM_MM_RESIDUAL) ? ((GM_GLOBAL const float *)r)[r_off + at] : 0.0f);
                } else {
                    GM_STORE(c, c_off + at, (flags & GM_MM_RESIDUAL) ? acc[i][q] + GM_LOAD(r, r_off + at, sr) : acc[i][q],
                             sc);
                }
            }
    }
}

/* matmul_copy: c_z = r_z over the m x n elements of each of `batch`
 * products laid out as matmul_strided's c (rows c_rs, products c_bs
 * apart), in gm_t (int8: from scale sr to sc) or, with GM_MM_C_FP32 or
 * GM_MM_C_INT32, 4-byte elements as they are: a residual put where a
 * vendor's product is then added to it. */
GM_KERNEL matmul_copy(GM_GLOBAL const gm_t *GM_RESTRICT r, GM_GLOBAL gm_t *GM_RESTRICT c, unsigned int m,
                      unsigned int n, unsigned int batch, gm_u64 c_off, gm_u64 c_rs, gm_u64 c_bs, gm_u64 r_off,
                      unsigned int flags, float sc, float sr)
{
    /* Rows and products back to back (a residual's usual layout): one
     * flat range, without the divisions. */
    const bool flat = c_rs == n && (batch == 1 || c_bs == (gm_u64)m * n);
    GM_FOR_EACH(idx, (size_t)batch * m * n) {
        const size_t at = flat ? idx : idx / n / m * c_bs + idx / n % m * c_rs + idx % n;
        if (flags & (GM_MM_C_FP32 | GM_MM_C_INT32))
            ((GM_GLOBAL float *)c)[c_off + at] = ((GM_GLOBAL const float *)r)[r_off + at];
        else
            GM_STORE(c, c_off + at, GM_LOAD(r, r_off + at, sr), sc);
    }
}

#if defined(GM_WINT4)
/* linear_dequant: the int4 matrix [k, n] at byte w_off of w (its scales
 * from element 2 * w_off / wgroup of wscale, gm_portable.h's GM_WLOAD)
 * into out[out_off + kk * n + j] in gm_t: a layer's weights for a GEMM
 * that takes gm_t. */
GM_KERNEL linear_dequant(GM_GLOBAL const gm_w_t *GM_RESTRICT w, GM_GLOBAL const gm_u16 *GM_RESTRICT wscale,
                         GM_GLOBAL gm_t *GM_RESTRICT out, unsigned int k, unsigned int n, gm_u64 w_off,
                         unsigned int wgroup, gm_u64 out_off)
{
    GM_GLOBAL const gm_w_t *wm = w + w_off;
    GM_FOR_EACH(i, (size_t)k * n) {
        const size_t kk = i / n, j = i % n;
        GM_STORE(out, out_off + i, GM_WLOAD(wm, i, kk, j, 1.0f), 1.0f);
    }
}
#endif
