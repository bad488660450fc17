/*
 * Launches of the training step's kernels that are not matrix products
 * (kernels/train.cl; the AdamW step is kernels/model.cl's model_adamw),
 * and the host-side inputs they take (rotary tables, the embedding's
 * token segments). Each enqueue puts its launches on queue 0 and returns
 * at once; on failure it returns the status with dev->err set. Offsets
 * and sizes are in elements; every count must fit the kernels' 32-bit
 * widths where they take unsigned int. Contracts of the kernels
 * themselves: kernels/train.cl; double-precision references:
 * bench/workloads/train_ref.h.
 */
#ifndef GM_TRAIN_KERNELS_H
#define GM_TRAIN_KERNELS_H

#include "device/device.h"
#include "lib/precision.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A target token that counts for nothing (padding): loss 0, no gradient. */
#define GM_TRAIN_IGNORE 0xffffffffu

typedef struct {
    gm_precision prec;      /* activations and gradients: fp32, fp16 or bf16 */
    bool chunked;           /* the access pattern of CPUs */
    gm_program *train, *model;
    gm_kernel *rope, *norm_dx, *norm_dw, *swiglu, *delta, *dq, *dkv, *xent, *embed, *nf4, *adamw, *scale;
} gm_train_kernels;

/* Builds train.cl and model.cl for precision p and gets every kernel.
 * `fault` builds train.cl with its test-only planted error
 * (GM_TRAIN_FAULT: SwiGLU's backward drops a term). GM_ERR_UNSUPPORTED
 * for a precision that does not train. On failure what was built is
 * released. */
gm_status gm_train_kernels_build(gm_device *dev, gm_precision p, bool chunked, bool fault, gm_train_kernels *k);
void gm_train_kernels_release(gm_device *dev, gm_train_kernels *k);

/* The fp32 rotary tables of positions [0, positions): cos and sin of
 * p * theta^(-2c/dim), c < dim/2, at [p * dim/2 + c] (computed in double,
 * rounded once). */
void gm_train_rope_table(double theta, unsigned int dim, size_t positions, float *cos_t, float *sin_t);

/* Rotates x in place (direction +1: the forward; -1: the backward, dx
 * from dy): tokens rows of heads x dim at element x_off, token t at
 * position pos0 + t % seq of tables holding at least that many, from
 * element cos_off of cos_t and sin_off of sin_t. */
gm_status gm_train_rope(gm_device *dev, const gm_train_kernels *k, const gm_buffer *x, const gm_buffer *cos_t,
                        const gm_buffer *sin_t, uint64_t tokens, unsigned int heads, unsigned int dim, uint64_t seq,
                        uint64_t pos0, uint64_t x_off, float direction, uint64_t cos_off, uint64_t sin_off);

typedef struct {
    const gm_buffer *x, *w, *dy, *dx, *rstd, *dw;   /* dw: NULL when the weight does not learn */
    uint64_t rows;
    unsigned int width;
    float eps;
    bool accumulate_dx, accumulate_dw;
    uint64_t x_off, w_off, dy_off, dx_off, dw_off;
} gm_train_norm_call;

/* RMSNorm's backward: dx (and dw where c->dw), rstd an fp32 [rows] scratch. */
gm_status gm_train_rmsnorm_bwd(gm_device *dev, const gm_train_kernels *k, const gm_train_norm_call *c);

/* SwiGLU's backward over n elements; dg may be g and du u. */
gm_status gm_train_swiglu_bwd(gm_device *dev, const gm_train_kernels *k, const gm_buffer *g, const gm_buffer *u,
                              const gm_buffer *dp, const gm_buffer *dg, const gm_buffer *du, uint64_t n,
                              const uint64_t off[5]);

typedef struct {
    const gm_buffer *q, *k, *v, *o, *d_o, *lse, *delta, *dq, *dk, *dv;
    uint64_t batch, seq;
    unsigned int heads, kv_heads, dim;
    bool causal;
    float scale;            /* 0: 1 / sqrt(dim) */
    /* Where each tensor starts (elements; 0 for all: the start). The
     * log-sum-exp of row (b, h, i) is lse[lse_off + h * lse_head + b *
     * lse_seq + i]; lse_head 0 means seq and lse_seq 0 heads * seq (the
     * [batch, heads, seq] layout); delta is [batch, heads, seq] from
     * delta_off. */
    uint64_t q_off, k_off, v_off, o_off, do_off, dq_off, dk_off, dv_off, delta_off, lse_off, lse_head, lse_seq;
} gm_train_attn_call;

/* Attention's backward: delta (fp32 [batch, heads, seq], scratch), then
 * dq, dk and dv. heads must be a multiple of kv_heads. */
gm_status gm_train_attn_bwd(gm_device *dev, const gm_train_kernels *k, const gm_train_attn_call *c);

/* Cross-entropy with its gradient: loss (fp32 [rows]) and dlogits (rows x
 * vocab at dz_off; may be the fp32 logits in an fp32 build) from the fp32
 * logits at z_off; scale 1 / the tokens counted. */
gm_status gm_train_xent(gm_device *dev, const gm_train_kernels *k, const gm_buffer *logits, const gm_buffer *targets,
                        const gm_buffer *dlogits, const gm_buffer *loss, uint64_t rows, unsigned int vocab, float scale,
                        uint64_t z_off, uint64_t dz_off);

/* The embedding's token segments: order holds the n positions sorted by
 * token id, stably; segment s (of *segments) is order[seg_start[s] ..
 * seg_start[s + 1]), all of token seg_token[s]. order and seg_token take
 * n entries, seg_start n + 1. Returns 0, or -1 for a token >= vocab. */
int gm_train_embed_segments(const uint32_t *tokens, size_t n, uint32_t vocab, uint32_t *order, uint32_t *seg_start,
                            uint32_t *seg_token, size_t *segments);

/* dE rows (hidden wide) of each segment's token += its positions' dx
 * (rows of dx from element dx_off); without `accumulate` dE's rows of the
 * segments' tokens are written, the others left as they are. */
gm_status gm_train_embed_bwd(gm_device *dev, const gm_train_kernels *k, const gm_buffer *dx, const gm_buffer *order,
                             const gm_buffer *seg_start, const gm_buffer *seg_token, const gm_buffer *de,
                             uint64_t segments, unsigned int hidden, bool accumulate, uint64_t dx_off);

/* Where one NF4 matrix starts in its buffers: codes and absmax codes
 * (bytes), block scales (floats); all 0 for a matrix alone. */
typedef struct {
    uint64_t codes, absmax, scales;
} gm_nf4_at;

/* n NF4 weights (codes, absmax codes, code2 [256], scale2, offset) from
 * `at` to out[out_off ...] in k's precision. */
gm_status gm_train_nf4_dequant(gm_device *dev, const gm_train_kernels *k, const gm_buffer *codes,
                               const gm_buffer *absmax_q, const gm_buffer *code2, const gm_buffer *scale2, float offset,
                               const gm_buffer *out, uint64_t n, uint64_t out_off, gm_nf4_at at);

/* x[x_off + i] *= scale, i < n (LoRA's alpha / r). */
gm_status gm_train_scale(gm_device *dev, const gm_train_kernels *k, const gm_buffer *x, uint64_t n, uint64_t x_off,
                         float scale);

typedef struct {
    float lr, beta1, beta2, eps, weight_decay;
    unsigned int step;      /* t >= 1: the bias corrections 1 - beta^t */
} gm_adamw_hyper;

/* AdamW step t over n parameters w (k's precision) with gradients g, fp32
 * moments mv (m at [i], v at [n + i]) and, where master is not NULL, fp32
 * master weights that the step updates and w is stored from. */
gm_status gm_train_adamw(gm_device *dev, const gm_train_kernels *k, const gm_buffer *w, const gm_buffer *g,
                         const gm_buffer *master, const gm_buffer *mv, uint64_t n, const gm_adamw_hyper *h);

#endif
