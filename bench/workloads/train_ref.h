/*
 * Double-precision references of the training step's kernels
 * (kernels/train.cl, train_kernels.h): each forward, and each backward as
 * the kernel computes it, on the same inputs (the values the device holds,
 * read back as doubles). Layouts as the kernels': tokens are rows, token t
 * = b * seq + i; q, o [tokens, heads * dim], k, v [tokens, kv_heads *
 * dim]; row statistics [batch, heads, seq]. The backward references are
 * checked against finite differences of the forward ones
 * (tests/unit/test_train_ref.c), the kernels against the references
 * (tests/unit/test_train_kernels.c).
 */
#ifndef GM_TRAIN_REF_H
#define GM_TRAIN_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rotary embedding with the fp32 tables of gm_train_rope_table: y from x
 * (direction +1), or dx from dy (-1). */
void gm_ref_rope(const double *x, double *y, const float *cos_t, const float *sin_t, size_t tokens, unsigned heads,
                 unsigned dim, size_t seq, size_t pos0, double direction);

/* RMSNorm: y = x r w, r = 1 / sqrt(mean(x^2) + eps), row by row. */
void gm_ref_rmsnorm(const double *x, const double *w, double *y, size_t rows, unsigned width, double eps);
/* Its backward: dx and dw (each may be NULL) from dy. */
void gm_ref_rmsnorm_bwd(const double *x, const double *w, const double *dy, double *dx, double *dw, size_t rows,
                        unsigned width, double eps);

/* SwiGLU: p = silu(g) u; backward dg, du from dp. */
void gm_ref_swiglu(const double *g, const double *u, double *p, size_t n);
void gm_ref_swiglu_bwd(const double *g, const double *u, const double *dp, double *dg, double *du, size_t n);

typedef struct {
    size_t batch, seq;
    unsigned heads, kv_heads, dim;
    bool causal;
    double scale;           /* 0: 1 / sqrt(dim) */
} gm_ref_attn_shape;

/* Softmax attention: o and lse (log-sum-exp of the scaled scores, a row
 * and head; may be NULL). */
void gm_ref_attn(const gm_ref_attn_shape *s, const double *q, const double *k, const double *v, double *o, double *lse);
/* Its backward as FlashAttention-2 computes it: P from lse, D = rowsum(dO
 * o); dq, dk, dv from dO. */
void gm_ref_attn_bwd(const gm_ref_attn_shape *s, const double *q, const double *k, const double *v, const double *o,
                     const double *d_o, const double *lse, double *dq, double *dk, double *dv);

/* Cross-entropy of rows of logits against targets (GM_TRAIN_IGNORE: not
 * counted): loss per row and, where dlogits is not NULL, (softmax -
 * onehot) * scale. Returns the mean of the counted rows' losses. */
double gm_ref_xent(const double *logits, const uint32_t *targets, size_t rows, unsigned vocab, double scale,
                   double *loss, double *dlogits);

/* Embedding: x[t] = e[tokens[t]]; backward de (vocab x hidden, zeroed
 * first) from dx. */
void gm_ref_embed(const double *e, const uint32_t *tokens, double *x, size_t n, unsigned hidden);
void gm_ref_embed_bwd(const double *dx, const uint32_t *tokens, double *de, size_t n, unsigned hidden, size_t vocab);

/* NF4 in bitsandbytes' layout (train.cl train_nf4_dequant): quantises n
 * weights (n a multiple of 64) to codes (n / 2 bytes), absmax codes (n /
 * 64) against the second map code2 [256] (ascending), scale2 (one a 256
 * blocks) and *offset (the mean absmax); dequantises them back. */
void gm_ref_nf4_quantize(const double *w, size_t n, const float *code2, uint8_t *codes, uint8_t *absmax_q,
                         float *scale2, float *offset);
void gm_ref_nf4_dequant(const uint8_t *codes, const uint8_t *absmax_q, const float *code2, const float *scale2,
                        float offset, double *out, size_t n);

/* One AdamW step t (torch.optim.AdamW): x is master where not NULL, else
 * w; w takes the result. m, v are updated. */
void gm_ref_adamw(double *w, const double *g, double *master, double *m, double *v, size_t n, unsigned step,
                  double lr, double beta1, double beta2, double eps, double weight_decay);

/* How far n device values lie from the reference: an element is off when
 * |got - want| > rel * |want| + abs * rms(want). */
typedef struct {
    size_t off, worst_at;
    double worst, rms;
} gm_ref_diff;
void gm_ref_compare(const float *got, const double *want, size_t n, double rel, double abs, gm_ref_diff *d);

#endif
