/*
 * linear: Y[M, N] = X[M, K] * W[K, N] (row-major), M = batch * seq,
 * K = hidden, N = output features. Storage in gm_t (gm_portable.h),
 * products accumulated in fp32; int8 uses per-tensor scales sx, sw for the
 * inputs and sy for the output. W is stored as gm_w_t (a weight role token
 * in the variant, e.g. "bf16-wint4-chunked"; else gm_t): int4 weights are
 * dequantised on load with the fp16 scales `wscale`, one per `wgroup` rows of
 * a column (w_off must then be 0; wscale and wgroup are ignored otherwise).
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
 * Register-blocked: each work item computes a GM_RB x GM_CB block of Y
 * with no local memory and no barriers, streaming rows of W (contiguous
 * along N, so the GM_CB columns vectorise). For CPU devices. Launch:
 * ceil(m / GM_RB) * ceil(n / GM_CB) work items, numbered row-major over
 * the blocks.
 */
#define GM_RB 4
#define GM_CB 16

GM_KERNEL linear_blocked(GM_GLOBAL const gm_t *GM_RESTRICT x, GM_GLOBAL const gm_w_t *GM_RESTRICT w,
                         GM_GLOBAL gm_t *GM_RESTRICT y, GM_LINEAR_PARAMS)
{
    GM_LINEAR_APPLY_OFFSETS();
    const unsigned int blocks_n = (n + GM_CB - 1) / GM_CB;
    const unsigned int row0 = (unsigned int)(gm_global_id() / blocks_n) * GM_RB;
    const unsigned int col0 = (unsigned int)(gm_global_id() % blocks_n) * GM_CB;
    if (row0 >= m)
        return;
    float acc[GM_RB][GM_CB];
    for (int i = 0; i < GM_RB; i++)
        for (int c = 0; c < GM_CB; c++)
            acc[i][c] = 0.0f;
    /* Rows past m repeat the last row; columns past n are never stored. */
    unsigned int rows[GM_RB];
    for (int i = 0; i < GM_RB; i++)
        rows[i] = row0 + (unsigned int)i < m ? row0 + (unsigned int)i : m - 1;
    if (col0 + GM_CB <= n) {
        for (unsigned int kk = 0; kk < k; kk++) {
            float wv[GM_CB];
            for (int c = 0; c < GM_CB; c++)
                wv[c] = GM_WLOAD(w, (size_t)kk * n + col0 + (unsigned int)c, kk, col0 + (unsigned int)c, sw);
            for (int i = 0; i < GM_RB; i++) {
                float xv = GM_LOAD(x, (size_t)rows[i] * k + kk, sx);
                for (int c = 0; c < GM_CB; c++)
                    acc[i][c] += xv * wv[c];
            }
        }
    } else {
        for (unsigned int kk = 0; kk < k; kk++)
            for (int i = 0; i < GM_RB; i++) {
                float xv = GM_LOAD(x, (size_t)rows[i] * k + kk, sx);
                for (unsigned int c = 0; c < GM_CB && col0 + c < n; c++)
                    acc[i][c] += xv * GM_WLOAD(w, (size_t)kk * n + col0 + c, kk, col0 + c, sw);
            }
    }
    for (int i = 0; i < GM_RB && row0 + (unsigned int)i < m; i++)
        for (unsigned int c = 0; c < GM_CB && col0 + c < n; c++)
            GM_STORE(y, (size_t)(row0 + (unsigned int)i) * n + col0 + c,
                     GM_EPILOGUE(acc[i][c], (size_t)(row0 + (unsigned int)i) * n + col0 + c), sy);
}
