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
 * scales, one per `group` rows of each column of W; c->w_off is in bytes,
 * and the scales of the matrix there start at element 2 * w_off / group
 * of ws (matrices back to back, kernels/gm_portable.h). */
gm_status gm_linear_enqueue_int4(gm_device *dev, int queue, gm_kernel *kernel, bool blocked, const gm_linear_call *c,
                                 const gm_buffer *ws, unsigned int group);

typedef struct {
    const gm_buffer *q, *k, *v, *o, *stats;
    unsigned int bh, seq, dim, causal, heads;
    float scale_in, scale_out;
    uint64_t q_batch, q_row, kv_batch, kv_row, o_batch, o_row;
    uint64_t q_off, k_off, v_off, o_off;
    unsigned int kv_group;    /* query heads per K/V head (GQA); 0 or 1: one each */
} gm_attention_call;

/* Enqueues attention_tiled on queue 0 over bh * seq query rows. */
gm_status gm_attention_enqueue(gm_device *dev, gm_kernel *kernel, bool chunked, const gm_attention_call *c);

/* Enqueues block.cl's block_kv_store on queue 0: `tokens` rows of `width`
 * values of src (row t at element src_off + t * src_row) into the KV cache
 * at element dst_off (rows `width` apart), converted to the cache's
 * precision (the program's KV role token). */
gm_status gm_kv_store_enqueue(gm_device *dev, gm_kernel *kernel, bool chunked, const gm_buffer *src,
                              const gm_buffer *cache, uint64_t tokens, unsigned int width, uint64_t src_row,
                              uint64_t src_off, uint64_t dst_off, float scale);

/* Enqueues block.cl's int4 quantisation of one [k, n] matrix on queue 0
 * (block_int4_scales, then block_int4_pack): its weights are
 * gm_hashed_value(base + kk * n + j, seed, range); its codes go to byte
 * p_off of `codes` and its scales to element 2 * p_off / group of
 * `scales` (the layout of kernels/gm_portable.h's GM_WLOAD). */
gm_status gm_int4_init_enqueue(gm_device *dev, gm_kernel *k_scales, gm_kernel *k_pack, bool chunked,
                               const gm_buffer *codes, uint64_t p_off, const gm_buffer *scales, uint64_t k,
                               uint64_t n, uint64_t group, uint64_t base, unsigned int seed, float range);

/* Builds the linear program of `linear_variant` (with the weights' role
 * token, gm_role_variant) and the attention program of `attn_variant`
 * (with the KV cache's) and gets the kernels a layer uses: linear_blocked
 * (chunked) or linear_tiled, and attention_tiled. On failure returns the
 * status with dev->err set; what was built is in the out pointers for the
 * caller to release. */
gm_status gm_build_layer_kernels(gm_device *dev, const char *linear_variant, const char *attn_variant, bool chunked,
                                 gm_program **p_linear, gm_kernel **k_linear, gm_program **p_attn,
                                 gm_kernel **k_attn);

#endif
