/*
 * The whole-model kernels of the block workload run with --model PRESET
 * (bench/workloads/model_*.c): embedding, RMSNorm, SwiGLU, the LM head, the
 * attention's log-sum-exp kept for backward, and the AdamW step. Matrix
 * products are linear.cl's and attention is attention.cl's attention_tiled.
 * Every offset is in elements (int4 codes: bytes); int8 tensors carry a
 * per-tensor scale.
 */

/* The token id of row t: a fixed hash of t modulo the vocabulary. The host
 * copy is model_token in bench/workloads/model_*.c. */
GM_INLINE unsigned int model_token(gm_u64 t, unsigned int vocab)
{
    gm_u32 h = (gm_u32)t * 0x9e3779b1u;
    h ^= h >> 13;
    h *= 0x85ebca77u;
    h ^= h >> 16;
    return h % vocab;
}

/* t[off + i] = add + gm_hashed_value(base + i, seed, range), i < n. */
GM_KERNEL model_init(GM_GLOBAL gm_t *GM_RESTRICT t, gm_u64 off, gm_u64 n, gm_u64 base, unsigned int seed,
                     float range, float add, float scale)
{
    GM_FOR_EACH(i, (size_t)n)
        GM_STORE(t, off + i, add + gm_hashed_value(base + i, seed, range), scale);
}

/* f[off + i] = value (fp32 optimizer state), i < n. */
GM_KERNEL model_fill_f32(GM_GLOBAL float *GM_RESTRICT f, gm_u64 off, gm_u64 n, float value)
{
    GM_FOR_EACH(i, (size_t)n)
        f[off + i] = value;
}

/* master[off + i] = w[i]: fp32 master weights from the 16-bit weights. */
GM_KERNEL model_master_init(GM_GLOBAL const gm_t *GM_RESTRICT w, GM_GLOBAL float *GM_RESTRICT master, gm_u64 off,
                            gm_u64 n)
{
    GM_FOR_EACH(i, (size_t)n)
        master[off + i] = GM_LOAD(w, i, 1.0f);
}

/* x[x_off + t * hidden + c] = emb[model_token(t) * hidden + c]. */
GM_KERNEL model_embed(GM_GLOBAL const gm_t *GM_RESTRICT emb, GM_GLOBAL gm_t *GM_RESTRICT x, gm_u64 tokens,
                      unsigned int hidden, unsigned int vocab, gm_u64 x_off, float sw, float sx)
{
    GM_FOR_EACH(idx, (size_t)tokens * hidden) {
        const size_t t = idx / hidden, c = idx % hidden;
        GM_STORE(x, x_off + idx, GM_LOAD(emb, (size_t)model_token(t, vocab) * hidden + c, sw), sx);
    }
}

/*
 * RMSNorm (Zhang & Sennrich 2019, as Llama's modelling code computes it):
 * y = x / sqrt(mean(x^2) + eps) * w, in fp32. Row r reads input row
 * x_first + r * x_step (the final norm of inference takes each sequence's
 * last token: x_first = seq - 1, x_step = seq) and writes output row r.
 */
GM_KERNEL model_rmsnorm(GM_GLOBAL const gm_t *GM_RESTRICT x, GM_GLOBAL gm_t *GM_RESTRICT y,
                        GM_GLOBAL const gm_t *GM_RESTRICT w, gm_u64 rows, unsigned int width, gm_u64 x_off,
                        gm_u64 x_first, gm_u64 x_step, gm_u64 y_off, gm_u64 w_off, float eps, float sx, float sy,
                        float sw)
{
    GM_FOR_EACH(r, (size_t)rows) {
        const size_t in = x_off + (x_first + r * x_step) * width, out = y_off + r * width;
        float ss = 0.0f;
        for (unsigned int c = 0; c < width; c++) {
            const float v = GM_LOAD(x, in + c, sx);
            ss += v * v;
        }
        const float inv = 1.0f / sqrt(ss / (float)width + eps);
        for (unsigned int c = 0; c < width; c++)
            GM_STORE(y, out + c, GM_LOAD(x, in + c, sx) * inv * GM_LOAD(w, w_off + c, sw), sy);
    }
}

/* SwiGLU (Shazeer 2020): out[i] = silu(g[i]) * u[i], silu(v) = v / (1 + e^-v).
 * out may be g (inference computes it in place: one item reads and writes
 * the same element). */
GM_KERNEL model_swiglu(GM_GLOBAL const gm_t *g, GM_GLOBAL const gm_t *u, GM_GLOBAL gm_t *out, gm_u64 n, gm_u64 g_off,
                       gm_u64 u_off, gm_u64 o_off, float s)
{
    GM_FOR_EACH(i, (size_t)n) {
        const float gv = GM_LOAD(g, g_off + i, s), uv = GM_LOAD(u, u_off + i, s);
        GM_STORE(out, o_off + i, gv / (1.0f + exp(-gv)) * uv, s);
    }
}

/* The log-sum-exp m + log(l) of each query row from attention_tiled's
 * (max, sum) pairs, the one fp32 per row that tiled attention keeps for
 * its backward. The pairs come from one launch over every head: rows
 * (b, head j, token i) in that order, seq tokens a sequence. The row's
 * figure goes to lse[off + j * head_stride + b * seq_stride + i]: head-major
 * over the layer's tokens, sequence b's tokens seq_stride apart. */
GM_KERNEL model_lse(GM_GLOBAL const float *GM_RESTRICT stats, GM_GLOBAL float *GM_RESTRICT lse, gm_u64 rows,
                    gm_u64 off, unsigned int heads, gm_u64 seq, gm_u64 seq_stride, gm_u64 head_stride)
{
    GM_FOR_EACH(r, (size_t)rows) {
        const size_t i = r % seq, j = r / seq % heads, b = r / seq / heads;
        lse[off + j * head_stride + b * seq_stride + i] = stats[2 * r] + log(stats[2 * r + 1]);
    }
}

/* GM_LM_HEAD_LOGITS(weight): logits[r * vocab + j] = sum over k < hidden
 * of x[x_off + r * hidden + k] * weight, fp32, for every row r < rows and
 * column j < vocab; `weight` is the head's element (k, j), an expression
 * in k and j. Reads the kernel's x, sx, x_off, rows, hidden, vocab and
 * logits by name. */
#define GM_LM_HEAD_LOGITS(weight)                                             \
    GM_FOR_EACH(idx, (size_t)rows * vocab) {                                  \
        const size_t r = idx / vocab, j = idx % vocab;                        \
        float acc = 0.0f;                                                     \
        for (unsigned int k = 0; k < hidden; k++)                             \
            acc += GM_LOAD(x, x_off + r * hidden + k, sx) * (weight);         \
        logits[idx] = acc;                                                    \
    }

/* logits[r][j] = sum_k x[x_off + r * hidden + k] * W, fp32, where W is the
 * [hidden, vocab] head at w_off, or with `tied` the [vocab, hidden]
 * embedding read transposed. */
GM_KERNEL model_lm_head(GM_GLOBAL const gm_t *GM_RESTRICT x, GM_GLOBAL const gm_t *GM_RESTRICT w,
                        GM_GLOBAL float *GM_RESTRICT logits, gm_u64 rows, unsigned int hidden, unsigned int vocab,
                        gm_u64 x_off, gm_u64 w_off, unsigned int tied, float sx, float sw)
{
    GM_LM_HEAD_LOGITS(GM_LOAD(w, w_off + (tied ? j * hidden + k : (size_t)k * vocab + j), sw))
}

/* model_lm_head with an int4 head (--int4-lm-head): the [hidden, vocab]
 * head's codes, two a byte, at byte w_off of w4, and its fp16 scales, one
 * per `group` rows of a column, from element 2 * w_off / group of ws (the
 * layers' int4 matrices before it, gm_portable.h), dequantised on load. */
GM_KERNEL model_lm_head_int4(GM_GLOBAL const gm_t *GM_RESTRICT x, GM_GLOBAL const gm_u8 *GM_RESTRICT w4,
                             GM_GLOBAL const gm_u16 *GM_RESTRICT ws, GM_GLOBAL float *GM_RESTRICT logits,
                             gm_u64 rows, unsigned int hidden, unsigned int vocab, gm_u64 x_off, gm_u64 w_off,
                             unsigned int group, float sx)
{
    GM_GLOBAL const gm_u8 *w = w4 + w_off;
    const size_t s_off = (size_t)(2u * w_off / group);
    GM_LM_HEAD_LOGITS(gm_int4_load(w, ws, (size_t)k * vocab + j, s_off + (size_t)(k / group) * vocab + j))
}

/*
 * One AdamW step (Loshchilov & Hutter 2019, as torch.optim.AdamW) over n
 * parameters whose weights are w[0..n) and whose gradients, fp32 master
 * weights and moments sit at p_off + i of their tensors (m at [p], v at
 * [total + p] of `mv`):
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   x = x - lr wd x - lr (m / bc1) / (sqrt(v / bc2) + eps),  bc = 1 - b^t
 * x is the master weight (has_master) or the weight itself (fp32); the
 * weight is stored from x.
 */
GM_KERNEL model_adamw(GM_GLOBAL gm_t *GM_RESTRICT w, GM_GLOBAL const gm_t *GM_RESTRICT g,
                      GM_GLOBAL float *GM_RESTRICT master, GM_GLOBAL float *GM_RESTRICT mv, gm_u64 n, gm_u64 p_off,
                      gm_u64 total, unsigned int has_master, float lr, float b1, float b2, float eps, float wd,
                      float bc1, float bc2)
{
    GM_FOR_EACH(i, (size_t)n) {
        const size_t p = p_off + i;
        const float grad = GM_LOAD(g, p, 1.0f);
        const float m = b1 * mv[p] + (1.0f - b1) * grad;
        const float v = b2 * mv[total + p] + (1.0f - b2) * grad * grad;
        mv[p] = m;
        mv[total + p] = v;
        float x = has_master ? master[p] : GM_LOAD(w, i, 1.0f);
        x = x - lr * wd * x - lr * (m / bc1) / (sqrt(v / bc2) + eps);
        if (has_master)
            master[p] = x;
        GM_STORE(w, i, x, 1.0f);
    }
}

/* model_rmsnorm as one work group a row, for GPUs: the group's items
 * stride the row together (coalesced), their sums of squares reduced in
 * local memory. Same arguments and result as model_rmsnorm; any
 * power-of-two local size up to GM_NORM_LOCAL. */
#define GM_NORM_LOCAL 256

GM_KERNEL model_rmsnorm_rows(GM_GLOBAL const gm_t *GM_RESTRICT x, GM_GLOBAL gm_t *GM_RESTRICT y,
                             GM_GLOBAL const gm_t *GM_RESTRICT w, gm_u64 rows, unsigned int width, gm_u64 x_off,
                             gm_u64 x_first, gm_u64 x_step, gm_u64 y_off, gm_u64 w_off, float eps, float sx, float sy,
                             float sw)
{
    GM_LOCAL_DECL float red[GM_NORM_LOCAL];
    const unsigned int lid = (unsigned int)gm_local_id(), lsz = (unsigned int)gm_local_size();
    for (size_t r = gm_group_id(); r < rows; r += gm_num_groups()) {
        const size_t in = x_off + (x_first + r * x_step) * width, out = y_off + r * width;
        float ss = 0.0f;
        for (unsigned int c = lid; c < width; c += lsz) {
            const float v = GM_LOAD(x, in + c, sx);
            ss += v * v;
        }
        red[lid] = ss;
        gm_barrier();
        for (unsigned int h = lsz / 2; h > 0; h /= 2) {
            if (lid < h)
                red[lid] += red[lid + h];
            gm_barrier();
        }
        const float inv = 1.0f / sqrt(red[0] / (float)width + eps);
        gm_barrier();
        for (unsigned int c = lid; c < width; c += lsz)
            GM_STORE(y, out + c, GM_LOAD(x, in + c, sx) * inv * GM_LOAD(w, w_off + c, sw), sy);
    }
}
