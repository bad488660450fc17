/*
 * The training step's kernels other than matrix products (those are the
 * vendor GEMM's, and the AdamW step is model.cl's model_adamw): rotary
 * embedding forward and backward, RMSNorm's backward, SwiGLU's backward,
 * attention's backward (FlashAttention-2's recomputation of P from the
 * saved log-sum-exp, GQA, causal), the cross-entropy over the LM head's
 * logits fused with its gradient, the embedding's backward, QLoRA's NF4
 * dequantisation and LoRA's scale of x A. Host launches: bench/workloads/train_kernels.h; double
 * precision references: bench/workloads/train_ref.h.
 *
 * Activations and gradients are gm_t (the variant's precision), computed
 * in fp32; every offset and index is in elements. Tokens are rows: token
 * t = b * seq + i of sequence b at position i. q, o and their gradients
 * are [tokens, heads * dim], k, v and theirs [tokens, kv_heads * dim]
 * (heads side by side in a row); the attention's row statistics are fp32
 * [batch, heads, seq].
 *
 * GM_TRAIN_FAULT (a test-only define) plants an error in SwiGLU's backward:
 * the check of the kernels must catch it (tests/unit/test_train_kernels.c).
 */
#ifndef GM_TRAIN_FAULT
#define GM_TRAIN_FAULT 0
#endif

/* The attention kernels sum a head's row GM_TRAIN_COLS columns at a time
 * in private memory (CUDA's default stack is 1 KiB a thread), recomputing
 * P for each such slice: any head width, P's cost times ceil(dim / 64). */
#define GM_TRAIN_COLS 64

/*
 * Rotary position embedding (Su et al. 2021) as Hugging Face's Llama
 * applies it (rotate_half): for each head's pair (c, c + dim/2), c <
 * dim/2, at position p = pos0 + t % seq:
 *   y_c = x_c cos - x_{c+dim/2} sin,  y_{c+dim/2} = x_{c+dim/2} cos + x_c sin
 * with cos, sin of p * rope_theta^(-2c/dim) from the fp32 tables
 * cos_t[p * dim/2 + c], sin_t[...] (gm_train_rope_table). direction +1 is
 * the forward; -1 applies the transpose (the inverse rotation): the
 * backward, dx from dy. In place on x[x_off + t * heads * dim ...]; the
 * tables start at cos_t[cos_off] and sin_t[sin_off].
 */
GM_KERNEL train_rope(GM_GLOBAL gm_t *x, GM_GLOBAL const float *cos_t, GM_GLOBAL const float *sin_t, gm_u64 tokens,
                     unsigned int heads, unsigned int dim, gm_u64 seq, gm_u64 pos0, gm_u64 x_off, float direction,
                     gm_u64 cos_off, gm_u64 sin_off)
{
    const size_t pairs = dim / 2;
    cos_t += cos_off;
    sin_t += sin_off;
    GM_FOR_EACH(idx, (size_t)tokens * heads * pairs) {
        const size_t c = idx % pairs, row = idx / pairs, t = row / heads;
        const size_t p = (size_t)(pos0 + t % seq);
        const size_t a = x_off + row * dim + c, b = a + pairs;
        const float cs = cos_t[p * pairs + c], sn = direction * sin_t[p * pairs + c];
        const float x1 = GM_LOAD(x, a, 1.0f), x2 = GM_LOAD(x, b, 1.0f);
        GM_STORE(x, a, x1 * cs - x2 * sn, 1.0f);
        GM_STORE(x, b, x2 * cs + x1 * sn, 1.0f);
    }
}

/*
 * RMSNorm's backward for the input. Forward (model.cl model_rmsnorm):
 * y = x r w with r = 1 / sqrt(mean(x^2) + eps). With g = w dy:
 *   dx = r g - x r^3 mean(x g)
 * Row by row; r is recomputed from x and written to rstd[row] (fp32) for
 * train_rmsnorm_dw. With `accumulate` dx adds to what dx holds (the
 * residual stream's gradient).
 */
GM_KERNEL train_rmsnorm_dx(GM_GLOBAL const gm_t *GM_RESTRICT x, GM_GLOBAL const gm_t *GM_RESTRICT w,
                           GM_GLOBAL const gm_t *GM_RESTRICT dy, GM_GLOBAL gm_t *GM_RESTRICT dx,
                           GM_GLOBAL float *GM_RESTRICT rstd, gm_u64 rows, unsigned int width, float eps,
                           unsigned int accumulate, gm_u64 x_off, gm_u64 w_off, gm_u64 dy_off, gm_u64 dx_off)
{
    GM_FOR_EACH(r, (size_t)rows) {
        const size_t base = r * width;
        float ss = 0.0f, xg = 0.0f;
        for (unsigned int c = 0; c < width; c++) {
            const float xv = GM_LOAD(x, x_off + base + c, 1.0f);
            ss += xv * xv;
            xg += xv * GM_LOAD(w, w_off + c, 1.0f) * GM_LOAD(dy, dy_off + base + c, 1.0f);
        }
        const float inv = 1.0f / sqrt(ss / (float)width + eps);
        const float k = inv * inv * inv * xg / (float)width;
        rstd[r] = inv;
        for (unsigned int c = 0; c < width; c++) {
            const float g = GM_LOAD(w, w_off + c, 1.0f) * GM_LOAD(dy, dy_off + base + c, 1.0f);
            float v = inv * g - GM_LOAD(x, x_off + base + c, 1.0f) * k;
            if (accumulate)
                v += GM_LOAD(dx, dx_off + base + c, 1.0f);
            GM_STORE(dx, dx_off + base + c, v, 1.0f);
        }
    }
}

/* RMSNorm's weight gradient: dw_c = sum over rows of dy x r (rstd from
 * train_rmsnorm_dx), column by column in row order (deterministic);
 * added to dw's with `accumulate`. */
GM_KERNEL train_rmsnorm_dw(GM_GLOBAL const gm_t *GM_RESTRICT x, GM_GLOBAL const gm_t *GM_RESTRICT dy,
                           GM_GLOBAL const float *GM_RESTRICT rstd, GM_GLOBAL gm_t *GM_RESTRICT dw, gm_u64 rows,
                           unsigned int width, unsigned int accumulate, gm_u64 x_off, gm_u64 dy_off, gm_u64 dw_off)
{
    GM_FOR_EACH(c, (size_t)width) {
        float acc = accumulate ? GM_LOAD(dw, dw_off + c, 1.0f) : 0.0f;
        for (size_t r = 0; r < (size_t)rows; r++)
            acc += GM_LOAD(dy, dy_off + r * width + c, 1.0f) * GM_LOAD(x, x_off + r * width + c, 1.0f) * rstd[r];
        GM_STORE(dw, dw_off + c, acc, 1.0f);
    }
}

/*
 * SwiGLU's backward: p = silu(g) u with silu(v) = v s(v), s the logistic
 * function; from dp:
 *   du = dp silu(g),  dg = dp u s(g) (1 + g (1 - s(g)))
 * dg may be g and du may be u (written in place over the kept gate and
 * up: one item reads and writes the same elements).
 */
GM_KERNEL train_swiglu_bwd(GM_GLOBAL const gm_t *g, GM_GLOBAL const gm_t *u, GM_GLOBAL const gm_t *dp,
                           GM_GLOBAL gm_t *dg, GM_GLOBAL gm_t *du, gm_u64 n, gm_u64 g_off, gm_u64 u_off, gm_u64 dp_off,
                           gm_u64 dg_off, gm_u64 du_off)
{
    GM_FOR_EACH(i, (size_t)n) {
        const float gv = GM_LOAD(g, g_off + i, 1.0f), uv = GM_LOAD(u, u_off + i, 1.0f);
        const float d = GM_LOAD(dp, dp_off + i, 1.0f), sg = 1.0f / (1.0f + exp(-gv));
        float dgv = d * uv * sg * (1.0f + gv * (1.0f - sg));
#if GM_TRAIN_FAULT
        dgv = d * uv * sg;          /* the planted error: silu's derivative without its second term */
#endif
        GM_STORE(du, du_off + i, d * gv * sg, 1.0f);
        GM_STORE(dg, dg_off + i, dgv, 1.0f);
    }
}

/* FlashAttention-2's D = rowsum(dO * O) of each query row and head:
 * delta[delta_off + (b * heads + h) * seq + i], fp32. */
GM_KERNEL train_attn_delta(GM_GLOBAL const gm_t *GM_RESTRICT o, GM_GLOBAL const gm_t *GM_RESTRICT d_o,
                           GM_GLOBAL float *GM_RESTRICT delta, gm_u64 batch, gm_u64 seq, unsigned int heads,
                           unsigned int dim, gm_u64 o_off, gm_u64 do_off, gm_u64 delta_off)
{
    GM_FOR_EACH(r, (size_t)(batch * seq) * heads) {
        const size_t t = r / heads, h = r % heads, b = t / seq, i = t % seq;
        const size_t base = t * heads * dim + h * dim;
        float acc = 0.0f;
        for (unsigned int c = 0; c < dim; c++)
            acc += GM_LOAD(o, o_off + base + c, 1.0f) * GM_LOAD(d_o, do_off + base + c, 1.0f);
        delta[delta_off + (b * heads + h) * seq + i] = acc;
    }
}

/* The probability P_ij of query row (b, h, i) on key j, recomputed from
 * the saved log-sum-exp: exp(scale q_i . k_j - lse). */
#define GM_ATTN_P(qrow, krow)                                                                  \
    do {                                                                                       \
        float s_ = 0.0f;                                                                       \
        for (unsigned int c = 0; c < dim; c++)                                                 \
            s_ += GM_LOAD(q, q_off + (qrow) + c, 1.0f) * GM_LOAD(k, k_off + (krow) + c, 1.0f); \
        p = exp(s_ * scale - lse[stat]);                                                       \
    } while (0)

/*
 * Attention's backward for the queries (FlashAttention-2, Dao 2023,
 * algorithm 2, one query row a work item, keys in order): with
 * P_ij = exp(scale q_i.k_j - lse_i), dP_ij = dO_i . v_j and
 * dS_ij = P_ij (dP_ij - D_i):  dq_i = scale sum_j dS_ij k_j.
 * Query head h reads K/V head h / (heads / kv_heads) (GQA); `causal`
 * keeps keys j <= i. Every tensor starts at its own offset (elements);
 * the log-sum-exp of row (b, h, i) is lse[lse_off + h * lse_head + b *
 * lse_seq + i] (the whole model keeps it head-major over a layer's
 * tokens), D is delta[delta_off + (b * heads + h) * seq + i].
 */
GM_KERNEL train_attn_dq(GM_GLOBAL const gm_t *GM_RESTRICT q, GM_GLOBAL const gm_t *GM_RESTRICT k,
                        GM_GLOBAL const gm_t *GM_RESTRICT v, GM_GLOBAL const gm_t *GM_RESTRICT d_o,
                        GM_GLOBAL const float *GM_RESTRICT lse, GM_GLOBAL const float *GM_RESTRICT delta,
                        GM_GLOBAL gm_t *GM_RESTRICT dq, gm_u64 batch, gm_u64 seq, unsigned int heads,
                        unsigned int kv_heads, unsigned int dim, unsigned int causal, float scale, gm_u64 q_off,
                        gm_u64 k_off, gm_u64 v_off, gm_u64 do_off, gm_u64 delta_off, gm_u64 lse_off,
                        gm_u64 lse_head, gm_u64 lse_seq, gm_u64 dq_off)
{
    GM_FOR_EACH(r, (size_t)(batch * seq) * heads) {
        const size_t t = r / heads, h = r % heads, b = t / seq, i = t % seq, kh = h / (heads / kv_heads);
        const size_t qrow = t * heads * dim + h * dim, stat = lse_off + h * lse_head + b * lse_seq + i,
                     dstat = delta_off + (b * heads + h) * seq + i;
        const size_t last = causal ? i : (size_t)seq - 1;
        for (unsigned int c0 = 0; c0 < dim; c0 += GM_TRAIN_COLS) {
            const unsigned int cols = dim - c0 < GM_TRAIN_COLS ? dim - c0 : GM_TRAIN_COLS;
            float acc[GM_TRAIN_COLS];
            for (unsigned int c = 0; c < cols; c++)
                acc[c] = 0.0f;
            for (size_t j = 0; j <= last; j++) {
                const size_t krow = (b * seq + j) * kv_heads * dim + kh * dim;
                float p, dp = 0.0f;
                GM_ATTN_P(qrow, krow);
                for (unsigned int c = 0; c < dim; c++)
                    dp += GM_LOAD(d_o, do_off + qrow + c, 1.0f) * GM_LOAD(v, v_off + krow + c, 1.0f);
                const float ds = p * (dp - delta[dstat]) * scale;
                for (unsigned int c = 0; c < cols; c++)
                    acc[c] += ds * GM_LOAD(k, k_off + krow + c0 + c, 1.0f);
            }
            for (unsigned int c = 0; c < cols; c++)
                GM_STORE(dq, dq_off + qrow + c0 + c, acc[c], 1.0f);
        }
    }
}

/*
 * Attention's backward for the keys and values, one key row of one K/V
 * head a work item, summing over its query heads and the query rows that
 * see it (i >= j when causal), in order (deterministic, no atomics):
 *   dv_j = sum P_ij dO_i,  dk_j = scale sum dS_ij q_i
 */
GM_KERNEL train_attn_dkv(GM_GLOBAL const gm_t *GM_RESTRICT q, GM_GLOBAL const gm_t *GM_RESTRICT k,
                         GM_GLOBAL const gm_t *GM_RESTRICT v, GM_GLOBAL const gm_t *GM_RESTRICT d_o,
                         GM_GLOBAL const float *GM_RESTRICT lse, GM_GLOBAL const float *GM_RESTRICT delta,
                         GM_GLOBAL gm_t *GM_RESTRICT dk, GM_GLOBAL gm_t *GM_RESTRICT dv, gm_u64 batch, gm_u64 seq,
                         unsigned int heads, unsigned int kv_heads, unsigned int dim, unsigned int causal, float scale,
                         gm_u64 q_off, gm_u64 k_off, gm_u64 v_off, gm_u64 do_off, gm_u64 delta_off, gm_u64 lse_off,
                         gm_u64 lse_head, gm_u64 lse_seq, gm_u64 dk_off, gm_u64 dv_off)
{
    const size_t group = heads / kv_heads;
    GM_FOR_EACH(r, (size_t)(batch * seq) * kv_heads) {
        const size_t t = r / kv_heads, kh = r % kv_heads, b = t / seq, j = t % seq;
        const size_t krow = t * kv_heads * dim + kh * dim;
        for (unsigned int c0 = 0; c0 < dim; c0 += GM_TRAIN_COLS) {
            const unsigned int cols = dim - c0 < GM_TRAIN_COLS ? dim - c0 : GM_TRAIN_COLS;
            float ak[GM_TRAIN_COLS], av[GM_TRAIN_COLS];
            for (unsigned int c = 0; c < cols; c++)
                ak[c] = av[c] = 0.0f;
            for (size_t h = kh * group; h < (kh + 1) * group; h++) {
                for (size_t i = causal ? j : 0; i < (size_t)seq; i++) {
                    const size_t qrow = (b * seq + i) * heads * dim + h * dim;
                    const size_t stat = lse_off + h * lse_head + b * lse_seq + i;
                    const size_t dstat = delta_off + (b * heads + h) * seq + i;
                    float p, dp = 0.0f;
                    GM_ATTN_P(qrow, krow);
                    for (unsigned int c = 0; c < dim; c++)
                        dp += GM_LOAD(d_o, do_off + qrow + c, 1.0f) * GM_LOAD(v, v_off + krow + c, 1.0f);
                    const float ds = p * (dp - delta[dstat]) * scale;
                    for (unsigned int c = 0; c < cols; c++) {
                        av[c] += p * GM_LOAD(d_o, do_off + qrow + c0 + c, 1.0f);
                        ak[c] += ds * GM_LOAD(q, q_off + qrow + c0 + c, 1.0f);
                    }
                }
            }
            for (unsigned int c = 0; c < cols; c++) {
                GM_STORE(dk, dk_off + krow + c0 + c, ak[c], 1.0f);
                GM_STORE(dv, dv_off + krow + c0 + c, av[c], 1.0f);
            }
        }
    }
}

/*
 * The cross-entropy of each row's fp32 logits against its target token,
 * fused with its gradient (one row a work item):
 *   loss_r = lse_r - z_{r,target},  dz_r = (softmax(z_r) - onehot) * scale
 * scale is 1 / (the batch's counted tokens), the mean's. A target of
 * GM_TRAIN_IGNORE (padding) gives loss 0 and a zero gradient. dlogits
 * may be the logits themselves (the fp32 variant writes in place).
 */
#define GM_TRAIN_IGNORE 0xffffffffu
GM_KERNEL train_xent(GM_GLOBAL const float *logits, GM_GLOBAL const gm_u32 *GM_RESTRICT targets,
                     GM_GLOBAL gm_t *dlogits, GM_GLOBAL float *GM_RESTRICT loss, gm_u64 rows, unsigned int vocab,
                     float scale, gm_u64 z_off, gm_u64 dz_off)
{
    GM_FOR_EACH(r, (size_t)rows) {
        const size_t base = z_off + r * vocab, out = dz_off + r * vocab;
        const gm_u32 target = targets[r];
        float m = logits[base];
        for (unsigned int j = 1; j < vocab; j++)
            m = fmax(m, logits[base + j]);
        float sum = 0.0f;
        for (unsigned int j = 0; j < vocab; j++)
            sum += exp(logits[base + j] - m);
        const float lse = m + log(sum), counted = target == GM_TRAIN_IGNORE ? 0.0f : scale;
        loss[r] = target == GM_TRAIN_IGNORE ? 0.0f : lse - logits[base + target];
        for (unsigned int j = 0; j < vocab; j++) {
            const float pj = exp(logits[base + j] - lse);
            GM_STORE(dlogits, out + j, (pj - (j == target ? 1.0f : 0.0f)) * counted, 1.0f);
        }
    }
}

/*
 * The embedding's backward: row v of dE gains the sum of the gradients of
 * every token t with token id v. Deterministic without atomics: the host
 * sorts the positions by token id, stably (gm_train_embed_segments);
 * segment s covers order[seg_start[s] .. seg_start[s + 1]) of token
 * seg_token[s], summed in position order, one (segment, column) a work
 * item. With `accumulate` dE adds to what it holds. dx's rows start at
 * element dx_off.
 */
GM_KERNEL train_embed_bwd(GM_GLOBAL const gm_t *GM_RESTRICT dx, GM_GLOBAL const gm_u32 *GM_RESTRICT order,
                          GM_GLOBAL const gm_u32 *GM_RESTRICT seg_start, GM_GLOBAL const gm_u32 *GM_RESTRICT seg_token,
                          GM_GLOBAL gm_t *GM_RESTRICT de, gm_u64 segments, unsigned int hidden, unsigned int accumulate,
                          gm_u64 dx_off)
{
    GM_FOR_EACH(idx, (size_t)segments * hidden) {
        const size_t s = idx / hidden, c = idx % hidden, dst = (size_t)seg_token[s] * hidden + c;
        float acc = accumulate ? GM_LOAD(de, dst, 1.0f) : 0.0f;
        for (gm_u32 k = seg_start[s]; k < seg_start[s + 1]; k++)
            acc += GM_LOAD(dx, dx_off + (size_t)order[k] * hidden + c, 1.0f);
        GM_STORE(de, dst, acc, 1.0f);
    }
}

/*
 * NF4 (Dettmers et al. 2023, section 3), bitsandbytes' layout: weight i
 * is code nibble i of codes (two a byte, the even weight in the high
 * nibble) times the absmax of its block of 64; that absmax is double
 * quantised: code2[absmax_q[i / 64]] * scale2[i / 64 / 256] + offset,
 * code2 the 256 values of the second quantisation's map. Written to
 * out[out_off + i] in the variant's precision. One matrix of many in the
 * same buffers starts at codes[codes_off], absmax_q[absmax_off] and
 * scale2[scale_off] (bytes, bytes, floats).
 */
GM_KERNEL train_nf4_dequant(GM_GLOBAL const gm_u8 *GM_RESTRICT codes, GM_GLOBAL const gm_u8 *GM_RESTRICT absmax_q,
                            GM_GLOBAL const float *GM_RESTRICT code2, GM_GLOBAL const float *GM_RESTRICT scale2,
                            float offset, GM_GLOBAL gm_t *GM_RESTRICT out, gm_u64 n, gm_u64 out_off, gm_u64 codes_off,
                            gm_u64 absmax_off, gm_u64 scale_off)
{
    codes += codes_off;
    absmax_q += absmax_off;
    scale2 += scale_off;
    /* The 16 NF4 levels: quantiles of N(0, 1) normalised to [-1, 1], with
     * an exact 0 (the QLoRA paper's appendix; bitsandbytes' table). */
    const float nf4[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                           -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                           0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f,
                           0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
                           0.7229568362236023f, 1.0f};
    GM_FOR_EACH(i, (size_t)n) {
        const gm_u32 byte = codes[i / 2], nib = (i & 1) ? (byte & 15u) : (byte >> 4);
        const size_t block = i / 64;
        const float am = code2[absmax_q[block]] * scale2[block / 256] + offset;
        GM_STORE(out, out_off + i, nf4[nib] * am, 1.0f);
    }
}

/*
 * LoRA's scale (alpha / r) on x A in the forward and on d(x A) in the
 * backward: x[x_off + i] *= scale, i < n, in place.
 */
GM_KERNEL train_scale(GM_GLOBAL gm_t *x, gm_u64 n, gm_u64 x_off, float scale)
{
    GM_FOR_EACH(i, (size_t)n) {
        GM_STORE(x, x_off + i, GM_LOAD(x, x_off + i, 1.0f) * scale, 1.0f);
    }
}
