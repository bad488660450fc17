/*
 * Launches of the kernels more than one workload uses: linear.cl's matrix
 * products (with offsets and an epilogue) and attention.cl's streaming
 * attention (in any strided layout). The argument structs mirror the
 * kernels' parameters, documented in kernels/linear.cl and
 * kernels/attention.cl.
 */
#ifndef GM_KERNEL_CALLS_H
#define GM_KERNEL_CALLS_H

#include "device/device.h"

#include <stdbool.h>
#include <stdint.h>

/* Epilogues of linear.cl (GM_EPI_*). */
#define GM_LINEAR_PLAIN 0u
#define GM_LINEAR_RESIDUAL 1u
#define GM_LINEAR_GELU 2u

typedef struct {
    const gm_buffer *x, *w, *y, *r;   /* r: residual input, or NULL */
    uint64_t m, n, k;
    float sx, sw, sy, sr;             /* int8 scales */
    uint64_t x_off, w_off, y_off, r_off;
    unsigned int epilogue;
} gm_linear_call;

/* Enqueues Y = epilogue(X * W) on `queue` with linear_tiled (blocked =
 * false) or linear_blocked. m, n and k must fit 32 bits. */
gm_status gm_linear_enqueue(gm_device *dev, int queue, gm_kernel *kernel, bool blocked, const gm_linear_call *c);
/* The same with int4 weights (a "wint4" variant): ws holds the fp16
 * scales, one per `group` rows of each column of W. */
gm_status gm_linear_enqueue_int4(gm_device *dev, int queue, gm_kernel *kernel, bool blocked, const gm_linear_call *c,
                                 const gm_buffer *ws, unsigned int group);

typedef struct {
    const gm_buffer *q, *k, *v, *o, *stats;
    unsigned int bh, seq, dim, causal, heads;
    float scale_in, scale_out;
    uint64_t q_batch, q_row, kv_batch, kv_row, o_batch, o_row;
    uint64_t q_off, k_off, v_off, o_off;
} gm_attention_call;

/* Enqueues attention_tiled on queue 0 over bh * seq query rows. */
gm_status gm_attention_enqueue(gm_device *dev, gm_kernel *kernel, bool chunked, const gm_attention_call *c);

/* Builds the linear and attention programs of `variant` and gets the
 * kernels a layer uses: linear_blocked (chunked) or linear_tiled, and
 * attention_tiled. On failure returns the status with dev->err set; what
 * was built is in the out pointers for the caller to release. */
gm_status gm_build_layer_kernels(gm_device *dev, const char *variant, bool chunked, gm_program **p_linear,
                                 gm_kernel **k_linear, gm_program **p_attn, gm_kernel **k_attn);

#endif
