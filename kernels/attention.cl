/*
 * Scaled dot-product attention over q, k, v, o of [batch*heads, seq, dim]
 * (row-major; batch and heads folded into `bh`), softmax(q k^T / sqrt(dim))
 * v, optionally causal (key j visible to query i when j <= i). Storage in
 * gm_t, arithmetic in fp32; int8 with one scale for q, k, v and one for o.
 *
 * naive: materialises the fp32 score matrix [bh, seq, seq] (memory grows
 *   with seq^2): attention_scores, attention_softmax (in place, per row),
 *   attention_pv.
 * tiled: attention_tiled streams over the keys with an online softmax
 *   (running max and sum per query row, memory grows with seq), one work
 *   item per query row; the final max and sum go to `stats` [bh*seq, 2].
 *   It reads any strided layout: row h of bh is batch b = h / heads, head
 *   hh = h % heads, and element (h, i, d) of q is at
 *   q_off + b * q_batch + hh * dim + i * q_row + d (likewise k and v with
 *   kv_batch, kv_row and k_off, v_off; o with o_batch, o_row, o_off).
 *   Head-major [bh, seq, dim]: heads = 1, batch = seq * dim, row = dim.
 *   Token-major [batch, seq, heads * dim] (the block workload): heads = H.
 *   Grouped-query attention: query head hh reads K and V head
 *   hh / kv_group (kv_group query heads share one; 1 = none shared), so
 *   one launch covers every head of a GQA model.
 *   K and V are read as gm_kv_t: a KV cache in its own precision (a KV
 *   role token in the variant, "bf16-kvfp8e4m3-grid": an fp8 cache beside
 *   16-bit q and o), else gm_t.
 *
 * Every kernel covers its index space with GM_FOR_EACH, so any launch size
 * is correct.
 */
#define GM_ATTN_MAX_DIM 256

GM_KERNEL attention_scores(GM_GLOBAL const gm_t *GM_RESTRICT q, GM_GLOBAL const gm_t *GM_RESTRICT k,
                           GM_GLOBAL float *GM_RESTRICT scores, unsigned int bh, unsigned int seq,
                           unsigned int dim, unsigned int causal, float scale_in)
{
    const float inv_sqrt = 1.0f / sqrt((float)dim);
    const size_t total = (size_t)bh * seq * seq;
    GM_FOR_EACH(idx, total) {
        const size_t j = idx % seq, i = (idx / seq) % seq, h = idx / ((size_t)seq * seq);
        float s;
        if (causal && j > i) {
            s = -INFINITY;
        } else {
            const size_t qi = (h * seq + i) * dim, kj = (h * seq + j) * dim;
            s = 0.0f;
            for (unsigned int d = 0; d < dim; d++)
                s += GM_LOAD(q, qi + d, scale_in) * GM_LOAD(k, kj + d, scale_in);
            s *= inv_sqrt;
        }
        scores[idx] = s;
    }
}

GM_KERNEL attention_softmax(GM_GLOBAL float *GM_RESTRICT scores, unsigned int rows, unsigned int seq)
{
    GM_FOR_EACH(r, (size_t)rows) {
        GM_GLOBAL float *row = scores + r * seq;
        float m = -INFINITY;
        for (unsigned int j = 0; j < seq; j++)
            m = fmax(m, row[j]);
        float l = 0.0f;
        for (unsigned int j = 0; j < seq; j++) {
            float e = exp(row[j] - m);
            row[j] = e;
            l += e;
        }
        const float inv = 1.0f / l;
        for (unsigned int j = 0; j < seq; j++)
            row[j] *= inv;
    }
}

GM_KERNEL attention_pv(GM_GLOBAL const float *GM_RESTRICT p, GM_GLOBAL const gm_t *GM_RESTRICT v,
                       GM_GLOBAL gm_t *GM_RESTRICT o, unsigned int bh, unsigned int seq, unsigned int dim,
                       float scale_in, float scale_out)
{
    const size_t total = (size_t)bh * seq * dim;
    GM_FOR_EACH(idx, total) {
        const size_t d = idx % dim, i = (idx / dim) % seq, h = idx / ((size_t)dim * seq);
        GM_GLOBAL const float *row = p + (h * seq + i) * seq;
        float acc = 0.0f;
        for (unsigned int j = 0; j < seq; j++)
            acc += row[j] * GM_LOAD(v, (h * seq + j) * dim + d, scale_in);
        GM_STORE(o, idx, acc, scale_out);
    }
}

GM_KERNEL attention_tiled(GM_GLOBAL const gm_t *GM_RESTRICT q, GM_GLOBAL const gm_kv_t *GM_RESTRICT k,
                          GM_GLOBAL const gm_kv_t *GM_RESTRICT v, GM_GLOBAL gm_t *GM_RESTRICT o,
                          GM_GLOBAL float *GM_RESTRICT stats, unsigned int bh, unsigned int seq,
                          unsigned int dim, unsigned int causal, float scale_in, float scale_out,
                          unsigned int heads, unsigned int kv_group, gm_u64 q_batch, gm_u64 q_row,
                          gm_u64 kv_batch, gm_u64 kv_row, gm_u64 o_batch, gm_u64 o_row, gm_u64 q_off, gm_u64 k_off,
                          gm_u64 v_off, gm_u64 o_off)
{
    const float inv_sqrt = 1.0f / sqrt((float)dim);
    GM_FOR_EACH(r, (size_t)bh * seq) {
        const size_t h = r / seq, i = r % seq, b = h / heads, hh = h % heads;
        const size_t q_at = q_off + b * q_batch + hh * dim + i * q_row;
        const size_t kv_at = b * kv_batch + hh / kv_group * dim, o_at = o_off + b * o_batch + hh * dim + i * o_row;
        /* The one per-item array: 4 * GM_ATTN_MAX_DIM bytes of stack, within
         * CUDA's default per-thread stack (1 KiB), so a first launch never
         * grows the context's local memory. The query row is read from
         * memory at each key (cached) rather than kept beside it. */
        float acc[GM_ATTN_MAX_DIM];
        for (unsigned int d = 0; d < dim; d++)
            acc[d] = 0.0f;
        float m = -INFINITY, l = 0.0f;
        const size_t last = causal ? i + 1 : seq;
        for (size_t j = 0; j < last; j++) {
            const size_t kj = kv_at + j * kv_row;
            float s = 0.0f;
            for (unsigned int d = 0; d < dim; d++)
                s += GM_LOAD(q, q_at + d, scale_in) * GM_KVLOAD(k, k_off + kj + d, scale_in);
            s *= inv_sqrt;
            const float m_new = fmax(m, s);
            const float correction = exp(m - m_new), e = exp(s - m_new);
            l = l * correction + e;
            for (unsigned int d = 0; d < dim; d++)
                acc[d] = acc[d] * correction + e * GM_KVLOAD(v, v_off + kj + d, scale_in);
            m = m_new;
        }
        const float inv = 1.0f / l;
        for (unsigned int d = 0; d < dim; d++)
            GM_STORE(o, o_at + d, acc[d] * inv, scale_out);
        stats[2 * r] = m;
        stats[2 * r + 1] = l;
    }
}

/*
 * attention_verify: every element of the head-major output o ([bh, seq,
 * dim], as attention_pv and the attention workload's attention_tiled
 * write it) recomputed on the device, outside the timed region and apart
 * from the timed kernels: for each query row a plain two-pass softmax in
 * fp32 (the largest score first; then each key's exponential, their sum
 * and the exponential-weighted sum of the values), divided out and
 * compared with the stored element within
 *   out_rel |want| + out_abs       the output format's rounding on either
 *                                  side (2 gm_tolerance, from the host)
 *   + 2^-23 vmax ((4 dim + 12) A + 4 last + 34)
 *                                  both computations' fp32 arithmetic
 * with `last` the row's keys, A the largest over its keys of
 * sum_d |q_d k_jd| / sqrt(dim) (a score's error is within (dim + 2) u A),
 * vmax the largest |v| it reads (docs/measurements.md derives the bound).
 * Writes the verdict (gm_verdict_write): per work group the elements
 * found wrong and the least index (row * dim + d) of one, bh * seq * dim
 * where none. The work-group size must be a power of two <=
 * GM_VERDICT_WG_MAX.
 */
GM_KERNEL attention_verify(GM_GLOBAL const gm_t *GM_RESTRICT q, GM_GLOBAL const gm_t *GM_RESTRICT k,
                           GM_GLOBAL const gm_t *GM_RESTRICT v, GM_GLOBAL const gm_t *GM_RESTRICT o,
                           GM_GLOBAL gm_u64 *GM_RESTRICT result, unsigned int bh, unsigned int seq, unsigned int dim,
                           unsigned int causal, float scale_in, float scale_out, float out_rel, float out_abs)
{
    GM_LOCAL_DECL gm_u64 count_of[GM_VERDICT_WG_MAX];
    GM_LOCAL_DECL gm_u64 first_of[GM_VERDICT_WG_MAX];
    const float inv_sqrt = 1.0f / sqrt((float)dim);
    const gm_u64 n = (gm_u64)bh * seq * dim;
    gm_u64 wrong = 0, first = n;
    GM_FOR_EACH(r, (size_t)bh * seq) {
        const size_t h = r / seq, i = r % seq, last = causal ? i + 1 : seq, qi = r * dim;
        float m = -INFINITY, a = 0.0f, vmax = 0.0f, l = 0.0f;
        for (size_t j = 0; j < last; j++) {
            const size_t kj = (h * seq + j) * dim;
            float s = 0.0f, sa = 0.0f;
            for (unsigned int d = 0; d < dim; d++) {
                const float p = GM_LOAD(q, qi + d, scale_in) * GM_LOAD(k, kj + d, scale_in);
                s += p;
                sa += fabs(p);
            }
            m = fmax(m, s * inv_sqrt);
            a = fmax(a, sa * inv_sqrt);
        }
        float acc[GM_ATTN_MAX_DIM];
        for (unsigned int d = 0; d < dim; d++)
            acc[d] = 0.0f;
        for (size_t j = 0; j < last; j++) {
            const size_t kj = (h * seq + j) * dim;
            float s = 0.0f;
            for (unsigned int d = 0; d < dim; d++)
                s += GM_LOAD(q, qi + d, scale_in) * GM_LOAD(k, kj + d, scale_in);
            const float e = exp(s * inv_sqrt - m);
            l += e;
            for (unsigned int d = 0; d < dim; d++) {
                const float x = GM_LOAD(v, kj + d, scale_in);
                acc[d] += e * x;
                vmax = fmax(vmax, fabs(x));
            }
        }
#define ATTN_STORED(d) GM_LOAD(o, qi + (d), scale_out)
        GM_ATTN_VERIFY_ROW(acc, l, dim, last, a, vmax, ATTN_STORED, out_rel, out_abs, qi, wrong, first);
#undef ATTN_STORED
    }
    gm_verdict_write(count_of, first_of, wrong, first, result);
}

/*
 * attention_softmax_rows: the softmax of one chunk of query rows of the
 * vendor path's attention (bench/workloads/model_attention.c), between its
 * QK^T and PV GEMMs. s holds the fp32 scores q k^T, row r (head
 * r / rows, query first_query + r % rows) `keys` floats from r * keys;
 * keys past the query's own position are masked (causal). Writes the
 * probabilities p = exp(scale s - max) / sum into p[p_off + r * keys + t]
 * in gm_t (0 for the masked keys), and with `has_lse` the row's
 * log-sum-exp max + log(sum) to lse[lse_off + head * lse_head + query].
 * One work group a row (any power-of-two local size up to
 * GM_SOFTMAX_LOCAL: 1 on a CPU device), rows dealt out group by group.
 */
#define GM_SOFTMAX_LOCAL 256

GM_INLINE void gm_softmax_merge(float *m, float *s, float m2, float s2)
{
    if (m2 == -INFINITY)
        return;
    if (*m == -INFINITY) {
        *m = m2;
        *s = s2;
        return;
    }
    const float big = fmax(*m, m2);
    *s = *s * exp(*m - big) + s2 * exp(m2 - big);
    *m = big;
}

GM_KERNEL attention_softmax_rows(GM_GLOBAL const float *GM_RESTRICT s, GM_GLOBAL gm_t *GM_RESTRICT p,
                                 GM_GLOBAL float *GM_RESTRICT lse, unsigned int rows, unsigned int heads,
                                 unsigned int keys, unsigned int first_query, float scale, gm_u64 p_off,
                                 gm_u64 lse_off, gm_u64 lse_head, unsigned int has_lse)
{
    GM_LOCAL_DECL float red_m[GM_SOFTMAX_LOCAL];
    GM_LOCAL_DECL float red_s[GM_SOFTMAX_LOCAL];
    const unsigned int lid = (unsigned int)gm_local_id(), lsz = (unsigned int)gm_local_size();
    const size_t total = (size_t)heads * rows;
    for (size_t r = gm_group_id(); r < total; r += gm_num_groups()) {
        const unsigned int i = (unsigned int)(r % rows), head = (unsigned int)(r / rows);
        const unsigned int query = first_query + i;
        const unsigned int valid = query + 1 < keys ? query + 1 : keys;
        GM_GLOBAL const float *row = s + r * keys;
        float m = -INFINITY, sum = 0.0f;
        for (unsigned int t = lid; t < valid; t += lsz) {
            const float x = row[t] * scale;
            if (x > m) {
                sum = sum * exp(m - x) + 1.0f;
                m = x;
            } else {
                sum += exp(x - m);
            }
        }
        red_m[lid] = m;
        red_s[lid] = sum;
        gm_barrier();
        for (unsigned int w = lsz / 2; w > 0; w /= 2) {
            if (lid < w) {
                float mm = red_m[lid], ss = red_s[lid];
                gm_softmax_merge(&mm, &ss, red_m[lid + w], red_s[lid + w]);
                red_m[lid] = mm;
                red_s[lid] = ss;
            }
            gm_barrier();
        }
        const float big = red_m[0], inv = 1.0f / red_s[0];
        if (has_lse && lid == 0)
            lse[lse_off + (size_t)head * lse_head + query] = big + log(red_s[0]);
        gm_barrier();   /* red_ is read before the next row writes it */
        for (unsigned int t = lid; t < keys; t += lsz)
            GM_STORE(p, p_off + r * keys + t, t < valid ? exp(row[t] * scale - big) * inv : 0.0f, 1.0f);
    }
}

/*
 * model_attention_verify: the whole model's attention output (S_ATTN in
 * bench/workloads/model_forward.c) recomputed on the device, every row,
 * outside the timed region. One work item a (token, query head) row of
 * the token-major layout: q and o are [T][heads * dim] (row stride ad),
 * k and v [T][kv_heads * dim] (stride kd, read as gm_kv_t: the KV cache's
 * precision); query head j reads KV head j / kv_group; sequence b's tokens
 * start at b * seq, run_b sequences of run_seq tokens are checked; causal
 * (token i of a sequence attends to keys 0..i of its own). The reference
 * is attention_verify's: a two-pass softmax in fp32, each stored o element
 * within
 *   out_rel |want| + out_abs + slack
 * where out_rel |want| + out_abs is twice the format's gm_tolerance (the
 * output's rounding on either side) and, with u = 2^-24, n the row's keys,
 * A the largest sum_d |q_d k_jd| / sqrt(dim) over them and vmax the
 * largest |v| the row reads:
 *   ours (attention_tiled): slack = 2u vmax ((4 dim + 12) A + 4 n + 34),
 *     the attention workload's bound for both computations' arithmetic;
 *   the vendor path (gemm != 0: QK^T by a GEMM summing in fp32, the
 *     softmax of attention_softmax_rows, probabilities stored in the
 *     activations' precision, PV by a GEMM summing in units of pv_u),
 *     that, plus vmax (theta + 1.2 (n + 1) pv_u (1 + theta) + n p_abs)
 *     with each stored probability within theta relatively of exact:
 *       theta = u ((2.4 dim + 12) A + 19 n + 170) + p_u
 *     (a score within (1.2 dim + 2) u A: the GEMM's fp32 sum and the
 *     scaling; its weight exp(x - max) within that, 2 u A for the
 *     argument's rounding and 16 u for the exponential; the online sum
 *     of attention_softmax_rows within the same score error plus
 *     (n + 8)(16 u + 3 u) + 4 u A, a rescaling (16 u, its argument's
 *     rounding telescoping to 2 u A) per key and per level of its
 *     reduction over at most 256 lanes, and the adds; 2 u for the
 *     division; p_u the probability's rounding to the activations'
 *     precision). p_abs is a probability's absolute rounding where it
 *     falls below the format's normals (fp16: 2^-24, also the half
 *     sums' subnormal products; else fp32's flushed 2^-126). Rounded up,
 *     the constants also cover the second-order terms.
 * In training (has_lse) the saved log-sum-exp of each row, fp32 at
 * lse[lse_off + j * lse_head + t], must be within
 *   u ((2.4 dim + 12) A + 20 n + 260 + 64 |log l| + 4 |want|)
 * of m + log(l), l the sum of the row's weights: the largest score error
 * of either computation ((1.2 dim + 2) u A, (dim + 2) u A), their sums'
 * ((n + 8) 19 u + 4 u A and 16 u + 2 u A + 1.2 n u), 16 ulp of each
 * logarithm and the final additions' rounding.
 * docs/measurements.md derives both.
 * Verdict (gm_verdict_write): the elements found wrong and the least
 * index of one: o's element t * ad + j * dim + d, then lse's at
 * lse_head * ad + j * lse_head + t (lse_head is the layout's tokens T);
 * none: lse_head * (ad + heads), past both. worst_of
 * gets each work group's largest |got - want| / tolerance; where an
 * element's index is report_at, worst_of[groups + 0, 1, 2] get its want,
 * got and tolerance (report_at past both: nothing). The work-group size
 * must be a power of two <= GM_VERDICT_WG_MAX.
 */
/* One element of model_attention_verify: got against want within tol,
 * element idx; the largest diff / tol into *worst, a wrong one counted in
 * *wrong and the least such idx in *first, and where idx is report_at its
 * want, got and tol into worst_of[groups + 0, 1, 2]. */
GM_INLINE void model_attention_judge(float want, float got, float tol, gm_u64 idx, gm_u64 report_at,
                                     GM_GLOBAL float *GM_RESTRICT worst_of, float *worst, gm_u64 *wrong,
                                     gm_u64 *first)
{
    const float diff = fabs(got - want);
    *worst = fmax(*worst, diff / tol);
    if (!(diff <= tol)) {
        (*wrong)++;
        *first = idx < *first ? idx : *first;
    }
    if (idx == report_at) {
        worst_of[gm_num_groups()] = want;
        worst_of[gm_num_groups() + 1] = got;
        worst_of[gm_num_groups() + 2] = tol;
    }
}

GM_KERNEL model_attention_verify(GM_GLOBAL const gm_t *GM_RESTRICT q, GM_GLOBAL const gm_kv_t *GM_RESTRICT k,
                                 GM_GLOBAL const gm_kv_t *GM_RESTRICT v, GM_GLOBAL const gm_t *GM_RESTRICT o,
                                 GM_GLOBAL const float *GM_RESTRICT lse, GM_GLOBAL gm_u64 *GM_RESTRICT result,
                                 GM_GLOBAL float *GM_RESTRICT worst_of, unsigned int run_b, unsigned int run_seq,
                                 unsigned int heads, unsigned int kv_group, unsigned int dim, gm_u64 seq, gm_u64 ad,
                                 gm_u64 kd, gm_u64 q_off, gm_u64 k_off, gm_u64 v_off, gm_u64 o_off, gm_u64 lse_off,
                                 gm_u64 lse_head, unsigned int has_lse, unsigned int gemm, float scale, float out_rel,
                                 float out_abs, float pv_u, float p_u, float p_abs, gm_u64 report_at)
{
    GM_LOCAL_DECL gm_u64 count_of[GM_VERDICT_WG_MAX];
    GM_LOCAL_DECL gm_u64 first_of[GM_VERDICT_WG_MAX];
    GM_LOCAL_DECL float ratio_of[GM_VERDICT_WG_MAX];
    const float u = 1.0f / 16777216.0f, inv_sqrt = 1.0f / sqrt((float)dim);
    const gm_u64 lse_at = lse_head * ad, none = lse_head * (ad + heads);
    gm_u64 wrong = 0, first = none;
    float worst = 0.0f;
    GM_FOR_EACH(r, (size_t)run_b * run_seq * heads) {
        const size_t j = r % heads, i = r / heads % run_seq, b = r / heads / run_seq;
        const size_t t = b * seq + i, n = i + 1;
        const size_t q_at = q_off + t * ad + j * dim, kv_at = b * seq * kd + j / kv_group * dim;
        float m = -INFINITY, a = 0.0f, vmax = 0.0f, l = 0.0f;
        for (size_t key = 0; key < n; key++) {
            const size_t kj = k_off + kv_at + key * kd;
            float s = 0.0f, sa = 0.0f;
            for (unsigned int d = 0; d < dim; d++) {
                const float p = GM_LOAD(q, q_at + d, scale) * GM_KVLOAD(k, kj + d, scale);
                s += p;
                sa += fabs(p);
            }
            m = fmax(m, s * inv_sqrt);
            a = fmax(a, sa * inv_sqrt);
        }
        float acc[GM_ATTN_MAX_DIM];
        for (unsigned int d = 0; d < dim; d++)
            acc[d] = 0.0f;
        for (size_t key = 0; key < n; key++) {
            const size_t kj = kv_at + key * kd;
            float s = 0.0f;
            for (unsigned int d = 0; d < dim; d++)
                s += GM_LOAD(q, q_at + d, scale) * GM_KVLOAD(k, k_off + kj + d, scale);
            const float e = exp(s * inv_sqrt - m);
            l += e;
            for (unsigned int d = 0; d < dim; d++) {
                const float x = GM_KVLOAD(v, v_off + kj + d, scale);
                acc[d] += e * x;
                vmax = fmax(vmax, fabs(x));
            }
        }
        const float nf = (float)n;
        float slack = 2.0f * u * vmax * ((4.0f * (float)dim + 12.0f) * a + 4.0f * nf + 34.0f);
        if (gemm) {
            const float theta = u * ((2.4f * (float)dim + 12.0f) * a + 19.0f * nf + 170.0f) + p_u;
            slack += vmax * (theta + 1.2f * (nf + 1.0f) * pv_u * (1.0f + theta) + nf * p_abs);
        }
        for (unsigned int d = 0; d < dim; d++) {
            const gm_u64 idx = (gm_u64)t * ad + j * dim + d;
            const float want = acc[d] / l, got = GM_LOAD(o, o_off + idx, scale);
            model_attention_judge(want, got, out_rel * fabs(want) + out_abs + slack, idx, report_at, worst_of, &worst,
                                  &wrong, &first);
        }
        if (has_lse) {
            const gm_u64 idx = lse_at + j * lse_head + t;
            const float want = m + log(l), got = lse[lse_off + j * lse_head + t];
            const float tol = u * ((2.4f * (float)dim + 12.0f) * a + 20.0f * nf + 260.0f + 64.0f * fabs(want - m)
                                   + 4.0f * fabs(want));
            model_attention_judge(want, got, tol, idx, report_at, worst_of, &worst, &wrong, &first);
        }
    }
    gm_verdict_write(count_of, first_of, wrong, first, result);
    const size_t lid = gm_local_id();
    ratio_of[lid] = worst;
    gm_barrier();
    for (size_t half_n = gm_local_size() / 2; half_n > 0; half_n /= 2) {
        if (lid < half_n)
            ratio_of[lid] = fmax(ratio_of[lid], ratio_of[lid + half_n]);
        gm_barrier();
    }
    if (lid == 0)
        worst_of[gm_group_id()] = ratio_of[0];
}
