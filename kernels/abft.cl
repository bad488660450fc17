/*
 * abft: whole-output checksums of a matrix product C = A B (+ R) on the
 * device, in the manner of algorithm-based fault tolerance (Huang and
 * Abraham 1984): the column sums of C over blocks of g rows against the
 * same sums computed from the inputs, (e_b^T A) B. The host side, and the
 * derivation of the tolerance every kernel here takes its terms from, is
 * bench/workloads/product_device_check.h.
 *
 * Layouts: A [rows, k] row-major in gm_t from element a_off, or stored
 * transposed, [k, rows], where a_trans; B [k, n] in
 * gm_w_t from element w_off (int4: byte w_off, scales wscale, one per
 * wgroup rows of a column: gm_portable.h's GM_WLOAD), or stored
 * transposed, [n, k], where b_trans (never int4); C and R [rows, n]
 * row-major in gm_t, or in fp32 where c_fp32 (cf and rf then alias the
 * buffers c and r; a kernel reads the pair its flag names). A block b
 * covers rows first_row + b g ... first_row + b g + g - 1 (fewer in the
 * last block of the product).
 */

/* A[i][kk] and B[kk][j] as the product read them. */
#define ABFT_A(i, kk) GM_LOAD(a, a_trans ? a_off + (gm_u64)(kk) * rows + (i) : a_off + (i) * k + (kk), sa)
#define ABFT_B(kk, j) GM_WLOAD(wm, b_trans ? (size_t)(j) * k + (kk) : (size_t)(kk) * n + (j), (kk), (j), sb)

/*
 * abft_block_sums: for each block b < nb and column kk < k, the block's
 * column sum s = sum_i A[i][kk] in fp32, stored as the rows the expected
 * product multiplies: where s32 is set, s itself into sf[b k + kk] (fp32);
 * else in gm_t as `parts` rows, hi = round(s) at row parts b and, for
 * parts 2, lo = round(s - hi) at row parts b + 1 (s - hi and the rest are
 * exact in fp32: Sterbenz). Also abs_sum[b k + kk] = sum_i |A[i][kk]| and
 * split[b k + kk] = |s - hi - lo|, what the stored rows miss (|s| where hi
 * would not be finite: the rows then hold 0).
 */
GM_KERNEL abft_block_sums(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL gm_t *s, GM_GLOBAL float *sf,
                          GM_GLOBAL float *GM_RESTRICT abs_sum, GM_GLOBAL float *GM_RESTRICT split, gm_u64 a_off,
                          gm_u64 first_row, gm_u64 rows, unsigned int k, unsigned int g, unsigned int nb,
                          unsigned int parts, unsigned int s32, float sa, unsigned int a_trans)
{
    GM_FOR_EACH(e, (size_t)nb * k) {
        const size_t b = e / k, kk = e % k;
        const gm_u64 r0 = first_row + (gm_u64)b * g, r1 = r0 + g < rows ? r0 + g : rows;
        float sum = 0.0f, mag = 0.0f;
        for (gm_u64 i = r0; i < r1; i++) {
            const float x = ABFT_A(i, kk);
            sum += x;
            mag += fabs(x);
        }
        float rest = 0.0f;
        if (s32) {
            sf[e] = sum;
        } else {
            const size_t hi_at = (parts * b) * k + kk;
            GM_STORE(s, hi_at, sum, 1.0f);
            float hi = GM_LOAD(s, hi_at, 1.0f), lo = 0.0f;
            if (!isfinite(hi)) {
                GM_STORE(s, hi_at, 0.0f, 1.0f);
                hi = 0.0f;
            }
            rest = sum - hi;
            if (parts == 2) {
                GM_STORE(s, hi_at + k, rest, 1.0f);
                lo = GM_LOAD(s, hi_at + k, 1.0f);
                if (!isfinite(lo)) {
                    GM_STORE(s, hi_at + k, 0.0f, 1.0f);
                    lo = 0.0f;
                }
                rest -= lo;
            }
        }
        abs_sum[e] = mag;
        split[e] = fabs(rest);
    }
}

/* abft_block_norms: for each block b < nb, norms[2 b] = ||abs_sum[b]||_2
 * and norms[2 b + 1] = ||split[b]||_2 over its k columns (fp32). */
GM_KERNEL abft_block_norms(GM_GLOBAL const float *GM_RESTRICT abs_sum, GM_GLOBAL const float *GM_RESTRICT split,
                           GM_GLOBAL float *GM_RESTRICT norms, unsigned int k, unsigned int nb)
{
    GM_FOR_EACH(b, (size_t)nb) {
        float m = 0.0f, r = 0.0f;
        for (unsigned int kk = 0; kk < k; kk++) {
            const float x = abs_sum[b * k + kk], y = split[b * k + kk];
            m += x * x;
            r += y * y;
        }
        norms[2 * b] = sqrt(m);
        norms[2 * b + 1] = sqrt(r);
    }
}

/* abft_col_norms: cn[j] = ||B[.][j]||_2 (fp32), j < n. */
GM_KERNEL abft_col_norms(GM_GLOBAL const gm_w_t *GM_RESTRICT w, GM_GLOBAL const gm_u16 *GM_RESTRICT wscale,
                         GM_GLOBAL float *GM_RESTRICT cn, unsigned int k, unsigned int n, gm_u64 w_off,
                         unsigned int wgroup, unsigned int b_trans, float sb)
{
    GM_GLOBAL const gm_w_t *wm = w + w_off;
    GM_FOR_EACH(j, (size_t)n) {
        float q = 0.0f;
        for (unsigned int kk = 0; kk < k; kk++) {
            const float x = ABFT_B(kk, j);
            q += x * x;
        }
        cn[j] = sqrt(q);
    }
}

/* abft_expect: e[r n + j] = sum_kk sf[r k + kk] B[kk][j] in fp32, r < m:
 * the expected sums where the dispatch cannot multiply fp32 rows by B
 * (int4 weights). */
GM_KERNEL abft_expect(GM_GLOBAL const float *GM_RESTRICT sf, GM_GLOBAL const gm_w_t *GM_RESTRICT w,
                      GM_GLOBAL const gm_u16 *GM_RESTRICT wscale, GM_GLOBAL float *GM_RESTRICT e, unsigned int m,
                      unsigned int k, unsigned int n, gm_u64 w_off, unsigned int wgroup, unsigned int b_trans,
                      float sb)
{
    GM_GLOBAL const gm_w_t *wm = w + w_off;
    GM_FOR_EACH(i, (size_t)m * n) {
        const size_t r = i / n, j = i % n;
        float acc = 0.0f;
        for (unsigned int kk = 0; kk < k; kk++)
            acc += sf[r * k + kk] * ABFT_B(kk, j);
        e[i] = acc;
    }
}

/* C[i][j] and R[i][j] as stored (R 0 where has_r is 0). */
#define ABFT_C(i, j) (c_fp32 ? cf[c_off + (i) * n + (j)] : GM_LOAD(c, c_off + (i) * n + (j), sc))
#define ABFT_R(i, j) (!has_r ? 0.0f : c_fp32 ? rf[r_off + (i) * n + (j)] : GM_LOAD(r, r_off + (i) * n + (j), sc))

/*
 * abft_block_before: for each block b < nb (from the product's first row)
 * and column j < n, the block's column sum of C and of |C| as it stands,
 * pre[2 (b n + j)] and pre[2 (b n + j) + 1] (fp32): taken before a product
 * that adds itself to C in place, which abft_compare then subtracts.
 */
GM_KERNEL abft_block_before(GM_GLOBAL const gm_t *c, GM_GLOBAL const float *cf, GM_GLOBAL float *GM_RESTRICT pre,
                            gm_u64 c_off, gm_u64 rows, unsigned int n, unsigned int g, unsigned int nb,
                            unsigned int c_fp32, float sc)
{
    GM_FOR_EACH(x, (size_t)nb * n) {
        const size_t b = x / n, j = x % n;
        const gm_u64 r0 = (gm_u64)b * g, r1 = r0 + g < rows ? r0 + g : rows;
        float sum = 0.0f, mag = 0.0f;
        for (gm_u64 i = r0; i < r1; i++) {
            const float cv = ABFT_C(i, j);
            sum += cv;
            mag += fabs(cv);
        }
        pre[2 * x] = sum;
        pre[2 * x + 1] = mag;
    }
}

/*
 * abft_compare: for each block b < nb and column j < n, got = sum_i (C - R)
 * over the block's rows (where has_pre, R is C as it stood before the
 * product: got = sum_i C - pre's sum, and sum |R| is pre's; has_r is 0)
 * against want = sum_p e[(parts b + p) n + j] (the
 * expected product's rows), within
 *   tol = u_out sum |C| + rows out_abs + u_r sum |R| + u_sum (sum |C| + |R|)
 *         + (norms[2 b] coef_mag + norms[2 b + 1]) cn[j]
 *         + u_e (sum_p |e_p| + |want|) + rows row_abs
 * (coefficients from the host: product_device_check.h), all times
 * `slack` (a sum or tolerance past fp32's range fails). Writes diag[2 (b
 * n + j)] = got - want and diag[... + 1] = tol, and the verdict (gm_verdict_write): per work group the failing sums and
 * the least index (first_block + b) n + j of one, `none` where none.
 */
GM_KERNEL abft_compare(GM_GLOBAL const gm_t *c, GM_GLOBAL const float *cf, GM_GLOBAL const gm_t *r,
                       GM_GLOBAL const float *rf, GM_GLOBAL const float *GM_RESTRICT e,
                       GM_GLOBAL const float *GM_RESTRICT norms, GM_GLOBAL const float *GM_RESTRICT cn,
                       GM_GLOBAL float *GM_RESTRICT diag, GM_GLOBAL gm_u64 *GM_RESTRICT result, gm_u64 c_off,
                       gm_u64 r_off, gm_u64 first_row, gm_u64 rows, gm_u64 first_block, gm_u64 none, unsigned int n,
                       unsigned int g, unsigned int nb, unsigned int parts, unsigned int c_fp32, unsigned int has_r,
                       float sc, float u_out, float out_abs, float u_r, float u_sum, float coef_mag, float u_e,
                       float row_abs, float slack, GM_GLOBAL const float *pre, unsigned int has_pre)
{
    GM_LOCAL_DECL gm_u64 count_of[GM_VERDICT_WG_MAX];
    GM_LOCAL_DECL gm_u64 first_of[GM_VERDICT_WG_MAX];
    gm_u64 wrong = 0, first = none;
    GM_FOR_EACH(x, (size_t)nb * n) {
        const size_t b = x / n, j = x % n;
        const gm_u64 r0 = first_row + (gm_u64)b * g, r1 = r0 + g < rows ? r0 + g : rows;
        float got = 0.0f, c_abs = 0.0f, r_abs = 0.0f;
        for (gm_u64 i = r0; i < r1; i++) {
            const float cv = ABFT_C(i, j), rv = ABFT_R(i, j);
            got += cv - rv;
            c_abs += fabs(cv);
            r_abs += fabs(rv);
        }
        if (has_pre) {
            const size_t at = 2 * ((first_block + b) * n + j);
            got -= pre[at];
            r_abs = pre[at + 1];
        }
        float want = 0.0f, e_abs = 0.0f;
        for (unsigned int p = 0; p < parts; p++) {
            const float v = e[(parts * b + p) * n + j];
            want += v;
            e_abs += fabs(v);
        }
        const float cnt = (float)(r1 - r0);
        const float tol = slack * (u_out * c_abs + cnt * out_abs + u_r * r_abs + u_sum * (c_abs + r_abs)
                                   + (norms[2 * b] * coef_mag + norms[2 * b + 1]) * cn[j]
                                   + u_e * (e_abs + fabs(want)) + cnt * row_abs);
        diag[2 * x] = got - want;
        diag[2 * x + 1] = tol;
        /* A sum or bound past fp32's range fails: an element at the
         * format's edge, which no correct product here reaches. */
        if (!(fabs(got - want) <= tol && isfinite(tol)) && wrong++ == 0)
            first = (first_block + b) * n + j;
    }
    gm_verdict_write(count_of, first_of, wrong, first, result);
}

/*
 * abft_locate: the rows row0 + t, t < count, of column j recomputed, each
 * a k-term fp32 dot product A[i] . B[.][j] (+ R[i][j]; never for a
 * product added to C in place, whose R is gone), against the
 * stored C[i][j] within u_out |C| + out_abs + coef_mag sum_kk |A B| +
 * u_r |R| + row_abs: the element of a failed block sum. The verdict's
 * least index is the first wrong row (none where none).
 */
GM_KERNEL abft_locate(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_w_t *GM_RESTRICT w,
                      GM_GLOBAL const gm_u16 *GM_RESTRICT wscale, GM_GLOBAL const gm_t *c, GM_GLOBAL const float *cf,
                      GM_GLOBAL const gm_t *r, GM_GLOBAL const float *rf, GM_GLOBAL gm_u64 *GM_RESTRICT result,
                      gm_u64 a_off, gm_u64 w_off, gm_u64 c_off, gm_u64 r_off, gm_u64 row0, gm_u64 count, gm_u64 j,
                      gm_u64 none, unsigned int k, unsigned int n, unsigned int wgroup, unsigned int b_trans,
                      unsigned int c_fp32, unsigned int has_r, float sa, float sb, float sc, float u_out,
                      float out_abs, float u_r, float coef_mag, float row_abs, float slack, unsigned int a_trans,
                      gm_u64 rows)
{
    GM_LOCAL_DECL gm_u64 count_of[GM_VERDICT_WG_MAX];
    GM_LOCAL_DECL gm_u64 first_of[GM_VERDICT_WG_MAX];
    GM_GLOBAL const gm_w_t *wm = w + w_off;
    gm_u64 wrong = 0, first = none;
    GM_FOR_EACH(t, (size_t)count) {
        const gm_u64 i = row0 + t;
        float acc = 0.0f, mag = 0.0f;
        for (unsigned int kk = 0; kk < k; kk++) {
            const float p = ABFT_A(i, kk) * ABFT_B(kk, j);
            acc += p;
            mag += fabs(p);
        }
        const float rv = ABFT_R(i, j), cv = ABFT_C(i, j);
        const float tol = slack * (u_out * fabs(cv) + out_abs + coef_mag * mag + u_r * fabs(rv) + row_abs);
        if (!(fabs(cv - (acc + rv)) <= tol && isfinite(tol)) && wrong++ == 0)
            first = i;
    }
    gm_verdict_write(count_of, first_of, wrong, first, result);
}

#if defined(GM_INT8)
/*
 * int8 products (product_device_check_int8.h): C = A B (+ R) as gm_mm
 * runs it for int8, A, B and R int8 codes with per-tensor scales sa, sb,
 * sr, C int8 codes of scale sc (rint of the fp32 result over sc, clamped
 * to +-127) or fp32 where c_fp32. The block sums of A's codes are
 * integers, carried exactly as two int8 code rows; the expected product
 * of those rows is the exact int32 sum of the codes' products
 * (gm_mm's c_int32), so the expected side is exact and the tolerance
 * holds the output's rounding and the product's fp32 sums alone.
 */
#if defined(GM_OPENCL)
typedef long abft_i64;
#else
typedef long long abft_i64;
#endif

/* B's code [kk][j] as the product read it (b_trans: stored [n, k]). */
#define ABFT_I8_B(kk, j) ((int)wm[b_trans ? (size_t)(j) * k + (kk) : (size_t)(kk) * n + (j)])
#define ABFT_I8_ABS(v) ((v) < 0 ? -(v) : (v))

/*
 * abft_i8_block_sums: for each block b < nb and column kk < k, the sum of
 * the block's codes s = sum_i A[i][kk] (|s| <= 127 g) stored exactly as
 * s = 128 hi + lo, lo in [-64, 63]: hi at row 2 b of s (int8 codes, k a
 * row), lo at row 2 b + 1 (|hi| <= 127 for g <= 127). abs_sum[b k + kk]
 * = sa sum_i |A[i][kk]| in fp32 (the magnitude abft_block_norms takes),
 * split[b k + kk] = 0 (nothing of s is missed).
 */
GM_KERNEL abft_i8_block_sums(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL gm_t *GM_RESTRICT s,
                             GM_GLOBAL float *GM_RESTRICT abs_sum, GM_GLOBAL float *GM_RESTRICT split, gm_u64 a_off,
                             gm_u64 first_row, gm_u64 rows, unsigned int k, unsigned int g, unsigned int nb, float sa)
{
    GM_FOR_EACH(e, (size_t)nb * k) {
        const size_t b = e / k, kk = e % k;
        const gm_u64 r0 = first_row + (gm_u64)b * g, r1 = r0 + g < rows ? r0 + g : rows;
        int sum = 0, mag = 0;
        for (gm_u64 i = r0; i < r1; i++) {
            const int x = (int)a[a_off + i * k + kk];
            sum += x;
            mag += ABFT_I8_ABS(x);
        }
        const int lo = ((sum + 64) & 127) - 64, hi = (sum - lo) / 128;
        s[(2 * b) * k + kk] = (gm_t)hi;
        s[(2 * b + 1) * k + kk] = (gm_t)lo;
        abs_sum[e] = sa * (float)mag;
        split[e] = 0.0f;
    }
}

/*
 * abft_i8_expect: E = S B exactly in int32, e[r n + j] = sum_kk s[r k +
 * kk] B[kk][j] for r < rows_e, j < n (|s| <= 127: every partial sum
 * within 127^2 k < 2^31). A work item computes ABFT_I8_ROWS rows of one
 * column, reading its column of B once for them; items run along j, so
 * that neighbours read neighbouring elements of B and the same of S.
 */
#define ABFT_I8_ROWS 8
GM_KERNEL abft_i8_expect(GM_GLOBAL const gm_t *GM_RESTRICT s, GM_GLOBAL const gm_t *GM_RESTRICT w,
                         GM_GLOBAL int *GM_RESTRICT e, gm_u64 w_off, unsigned int rows_e, unsigned int k,
                         unsigned int n, unsigned int b_trans)
{
    GM_GLOBAL const gm_t *wm = w + w_off;
    const size_t tiles = (rows_e + ABFT_I8_ROWS - 1) / ABFT_I8_ROWS;
    GM_FOR_EACH(x, tiles * n) {
        const size_t j = x % n, r0 = x / n * ABFT_I8_ROWS;
        const unsigned int nr = rows_e - r0 < ABFT_I8_ROWS ? (unsigned int)(rows_e - r0) : ABFT_I8_ROWS;
        /* Whole loops over the tile (registers, not stack, on CUDA); rows
         * past the last read the last row again and are not stored. */
        size_t at[ABFT_I8_ROWS];
        int acc[ABFT_I8_ROWS];
#pragma unroll
        for (unsigned int q = 0; q < ABFT_I8_ROWS; q++) {
            at[q] = (r0 + (q < nr ? q : nr - 1)) * k;
            acc[q] = 0;
        }
        for (unsigned int kk = 0; kk < k; kk++) {
            const int bv = ABFT_I8_B(kk, j);
#pragma unroll
            for (unsigned int q = 0; q < ABFT_I8_ROWS; q++)
                acc[q] += (int)s[at[q] + kk] * bv;
        }
#pragma unroll
        for (unsigned int q = 0; q < ABFT_I8_ROWS; q++)
            if (q < nr)
                e[(r0 + q) * n + j] = acc[q];
    }
}

/*
 * One element's exact sum of codes' products, dot = sum_kk A[i][kk]
 * B[kk][j] (|dot| <= 127^2 k < 2^31: the host refuses k past that), and
 * mag = sum_kk |A[i][kk] B[kk][j]| (fp32).
 */
#define ABFT_I8_DOT(i, j, dot, mag)                                            \
    do {                                                                       \
        dot = 0;                                                               \
        mag = 0.0f;                                                            \
        for (unsigned int kk = 0; kk < k; kk++) {                              \
            const int p_ = (int)a[a_off + (i) * k + kk] * ABFT_I8_B(kk, j);    \
            dot += p_;                                                         \
            mag += (float)ABFT_I8_ABS(p_);                                     \
        }                                                                      \
    } while (0)

/*
 * How far a saturated code cv (+-127) lies on the wrong side of its edge:
 * its value v (the exact product plus the residual) must reach 126.5 sc
 * in cv's direction; > 0 is the shortfall.
 */
GM_INLINE float abft_i8_saturation_miss(int cv, float v, float sc)
{
    return cv > 0 ? 126.5f * sc - v : v + 126.5f * sc;
}

/*
 * abft_i8_compare: for each block b < nb and column j < n:
 *   want = 128 e[2 b n + j] + e[(2 b + 1) n + j], the block's exact sum
 *   of codes' products (int64), against the block's stored outputs:
 *   int8 C: got = sc sum_i C[i][j] - sr sum_i R[i][j] over the rows whose
 *     code is not saturated; a saturated row (+-127, bounded on one side
 *     only) is recomputed exactly (ABFT_I8_DOT), taken out of want, and
 *     its value must reach 126.5 sc in its direction within
 *     slack (coef_mag sa sb mag + u_e (|v| + 126.5 sc));
 *     tol = slack [ unsat sc / 2 + coef_mag norms[2 b] cn[j]
 *                   + u_e (sc (sum |C| + unsat) + sr sum |R| + |sa sb want|) ];
 *   fp32 C: got = sum_i C[i][j] (fp32), tol = slack [ u_sum sum |C| +
 *     coef_mag norms[2 b] cn[j] + u_e |sa sb want| ];
 * and fails where |got - sa sb want| > tol, a saturated row misses its
 * edge, or a bound is not finite. diag[2 x] and diag[2 x + 1] (x = b n +
 * j): the difference and its tolerance (a saturated row's miss and its
 * own where that failed). The verdict as abft_compare's.
 */
GM_KERNEL abft_i8_compare(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_t *GM_RESTRICT w,
                          GM_GLOBAL const gm_t *c, GM_GLOBAL const float *cf, GM_GLOBAL const gm_t *r,
                          GM_GLOBAL const int *GM_RESTRICT e, GM_GLOBAL const float *GM_RESTRICT norms,
                          GM_GLOBAL const float *GM_RESTRICT cn, GM_GLOBAL float *GM_RESTRICT diag,
                          GM_GLOBAL gm_u64 *GM_RESTRICT result, gm_u64 a_off, gm_u64 w_off, gm_u64 c_off,
                          gm_u64 r_off, gm_u64 first_row, gm_u64 rows, gm_u64 first_block, gm_u64 none,
                          unsigned int k, unsigned int n, unsigned int g, unsigned int nb, unsigned int b_trans,
                          unsigned int c_fp32, unsigned int has_r, float sa, float sb, float sc, float sr,
                          float coef_mag, float u_sum, float u_e, float slack)
{
    GM_LOCAL_DECL gm_u64 count_of[GM_VERDICT_WG_MAX];
    GM_LOCAL_DECL gm_u64 first_of[GM_VERDICT_WG_MAX];
    GM_GLOBAL const gm_t *wm = w + w_off;
    const float sab = sa * sb;
    gm_u64 wrong = 0, first = none;
    GM_FOR_EACH(x, (size_t)nb * n) {
        const size_t b = x / n, j = x % n;
        const gm_u64 r0 = first_row + (gm_u64)b * g, r1 = r0 + g < rows ? r0 + g : rows;
        abft_i64 want = 128 * (abft_i64)e[(2 * b) * n + j] + (abft_i64)e[(2 * b + 1) * n + j];
        int got = 0, rsum = 0, c_abs = 0, r_abs = 0, unsat = 0, sat_bad = 0;
        float gotf = 0.0f, cf_abs = 0.0f, sat_diff = 0.0f, sat_tol = 0.0f;
        for (gm_u64 i = r0; i < r1; i++) {
            const gm_u64 at = i * n + j;
            if (c_fp32) {
                const float v = cf[c_off + at];
                gotf += v;
                cf_abs += fabs(v);
                continue;
            }
            const int cv = (int)c[c_off + at], rv = has_r ? (int)r[r_off + at] : 0;
            if (cv == 127 || cv == -127) {
                int dot;
                float mag;
                ABFT_I8_DOT(i, j, dot, mag);
                want -= dot;
                const float v = sab * (float)dot + sr * (float)rv;
                const float miss = abft_i8_saturation_miss(cv, v, sc);
                const float tol = slack * (coef_mag * sab * mag + u_e * (fabs(v) + 126.5f * sc));
                if (!(miss <= tol && isfinite(tol)) && sat_bad++ == 0) {
                    sat_diff = miss;
                    sat_tol = tol;
                }
                continue;
            }
            got += cv;
            c_abs += ABFT_I8_ABS(cv);
            rsum += rv;
            r_abs += ABFT_I8_ABS(rv);
            unsat++;
        }
        const float wantf = sab * (float)want, mag_term = coef_mag * norms[2 * b] * cn[j];
        float d, tol;
        if (c_fp32) {
            d = gotf - wantf;
            tol = slack * (u_sum * cf_abs + mag_term + u_e * fabs(wantf));
        } else {
            d = (sc * (float)got - sr * (float)rsum) - wantf;
            tol = slack * (0.5f * sc * (float)unsat + mag_term
                           + u_e * (sc * (float)(c_abs + unsat) + sr * (float)r_abs + fabs(wantf)));
        }
        const int bad = sat_bad || !(fabs(d) <= tol && isfinite(tol));
        diag[2 * x] = sat_bad ? sat_diff : d;
        diag[2 * x + 1] = sat_bad ? sat_tol : tol;
        if (bad && wrong++ == 0)
            first = (first_block + b) * n + j;
    }
    gm_verdict_write(count_of, first_of, wrong, first, result);
}

/*
 * abft_i8_locate: the rows row0 + t, t < count, of column j recomputed
 * exactly (ABFT_I8_DOT), each against its stored element by the bounds
 * of abft_i8_compare for one element: a saturated code reaching its edge,
 * another within slack (sc / 2 + coef_mag sa sb mag + u_e (sc (|C| + 1) +
 * sr |R| + |v|)), an fp32 one within slack (coef_mag sa sb mag + u_e (|C|
 * + |v|)). The verdict's least index is the first wrong row.
 */
GM_KERNEL abft_i8_locate(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_t *GM_RESTRICT w,
                         GM_GLOBAL const gm_t *c, GM_GLOBAL const float *cf, GM_GLOBAL const gm_t *r,
                         GM_GLOBAL gm_u64 *GM_RESTRICT result, gm_u64 a_off, gm_u64 w_off, gm_u64 c_off, gm_u64 r_off,
                         gm_u64 row0, gm_u64 count, gm_u64 j, gm_u64 none, unsigned int k, unsigned int n,
                         unsigned int b_trans, unsigned int c_fp32, unsigned int has_r, float sa, float sb, float sc,
                         float sr, float coef_mag, float u_e, float slack)
{
    GM_LOCAL_DECL gm_u64 count_of[GM_VERDICT_WG_MAX];
    GM_LOCAL_DECL gm_u64 first_of[GM_VERDICT_WG_MAX];
    GM_GLOBAL const gm_t *wm = w + w_off;
    const float sab = sa * sb;
    gm_u64 wrong = 0, first = none;
    GM_FOR_EACH(t, (size_t)count) {
        const gm_u64 i = row0 + t, at = i * n + j;
        int dot;
        float mag;
        ABFT_I8_DOT(i, j, dot, mag);
        int ok;
        if (c_fp32) {
            const float v = sab * (float)dot, cv = cf[c_off + at];
            ok = fabs(cv - v) <= slack * (coef_mag * sab * mag + u_e * (fabs(cv) + fabs(v)));
        } else {
            const int cv = (int)c[c_off + at], rv = has_r ? (int)r[r_off + at] : 0;
            const float v = sab * (float)dot + sr * (float)rv;
            if (cv == 127 || cv == -127)
                ok = abft_i8_saturation_miss(cv, v, sc)
                     <= slack * (coef_mag * sab * mag + u_e * (fabs(v) + 126.5f * sc));
            else
                ok = fabs(sc * (float)cv - v)
                     <= slack * (0.5f * sc + coef_mag * sab * mag
                                 + u_e * (sc * (float)(ABFT_I8_ABS(cv) + 1) + sr * (float)ABFT_I8_ABS(rv) + fabs(v)));
        }
        if (!ok && wrong++ == 0)
            first = i;
    }
    gm_verdict_write(count_of, first_of, wrong, first, result);
}
#endif
