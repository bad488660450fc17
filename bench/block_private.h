/*
 * The block workload's state, shared by bench/block.c (set-up and the
 * forward pass) and bench/block_check.c (the CPU reference).
 *
 * Layouts (row-major, element offsets): weights [layer][in][out]; the KV
 * cache [layer][k|v][batch][seq][hidden]; block_inputs [layer+1][token][hidden]
 * with tokens = micro_batch * seq; activations [slot][token][width], one
 * slot per layer (one with --checkpoint). Heads are contiguous within a
 * row (token-major), as the projections write them.
 */
#ifndef GM_BLOCK_PRIVATE_H
#define GM_BLOCK_PRIVATE_H

#include "bench/runnable.h"

enum { W_QKV, W_O, W_UP, W_DOWN, N_WEIGHTS };
enum { A_QKV, A_ATTN, A_RESID, A_MLP, N_ACTS };

/* Seeds of gm_hashed_value: one per weight tensor, then the input. */
#define BLOCK_SEED_WEIGHT 101u
#define BLOCK_SEED_INPUT 211u
#define BLOCK_ACT_SCALE (4.0f / 127.0f)   /* int8 activations: |v| up to 4 */

typedef struct {
    bool model;                     /* false (true: a whole model's state, bench/block_model.c) */
    gm_device *dev;
    gm_shape s;
    bool chunked;                   /* CPU device: blocked products, chunked loops */
    uint64_t h, ffn, heads, dim, seq, layers, mb;
    uint64_t tokens_max;            /* mb * seq: rows of one micro-batch */
    uint64_t last_b0, last_nb;      /* the last micro-batch run: first sequence, count */
    float w_range[N_WEIGHTS];       /* weights are in [-range, range) */
    gm_buffer w[N_WEIGHTS], kv, inputs, act[N_ACTS], stats;
    /* --offload: every layer's weights in pinned host memory (host_w), two
     * layer slots on the device (w), layer l in slot l % 2; loaded[] names
     * the layer each slot holds (-1: none). */
    bool offload;
    gm_buffer host_w[N_WEIGHTS];
    int64_t loaded[2];
    gm_program *p_linear, *p_attn, *p_block;
    gm_kernel *k_linear, *k_attn, *k_init, *k_kv;
} block_state;

/* Widths of the weight matrices (in, out) and of the activations. */
uint64_t block_weight_in(const block_state *st, int w);
uint64_t block_weight_out(const block_state *st, int w);
uint64_t block_act_width(const block_state *st, int a);

/* Enqueues layer `layer` of micro-batch (b0, nb) into activation slot
 * `slot`: the projections, attention over the KV cache, and (when
 * `full`) the KV append and the down projection into the next block input.
 * The recomputation of --checkpoint runs it with full = false. */
gm_status block_enqueue_layer(block_state *st, uint64_t layer, uint64_t slot, uint64_t b0, uint64_t nb, bool full);

/* --offload: makes layer `layer`'s weights present in their slot, waiting
 * for every queue first (no-op otherwise, or when they are there). */
gm_status block_weights_for(block_state *st, uint64_t layer);

/* --offload: the weight copies of one iteration alone, in its order, on
 * queue 1 (what the overlap with compute hides). */
gm_status block_stream_weights(block_state *st);

/* The CPU reference check of the state after an iteration. */
gm_status block_verify(void *state, unsigned rep, bool *correct, char *note, size_t len);

/* Host copy of gm_hashed_value (kernels/gm_portable.h), bit for bit. */
float gm_hashed_value(uint64_t i, uint32_t seed, float range);

#endif
