/*
 * The block workload's state, shared by bench/workloads/block.c (set-up and the
 * forward pass) and bench/workloads/block_check.c (the CPU reference).
 *
 * Layouts (row-major, element offsets): weights [layer][in][out]; the KV
 * cache [layer][k|v][batch][seq][hidden]; block_inputs [layer+1][token][hidden]
 * with tokens = micro_batch * seq; activations [slot][token][width], one
 * slot per layer (one with --checkpoint). Heads are contiguous within a
 * row (token-major), as the projections write them.
 */
#ifndef GM_BLOCK_PRIVATE_H
#define GM_BLOCK_PRIVATE_H

#include "bench/workloads/runnable.h"

enum { W_QKV, W_O, W_UP, W_DOWN, N_WEIGHTS };
enum { A_QKV, A_ATTN, A_RESID, A_MLP, N_ACTS };

/* Seeds of gm_hashed_value: one per weight tensor (BLOCK_SEED_WEIGHT + w),
 * then the input. */
#define BLOCK_SEED_WEIGHT 101u
#define BLOCK_SEED_INPUT 211u
#define BLOCK_ACT_SCALE (4.0f / 127.0f)   /* int8 activations: |v| up to 4 */

typedef struct {
    bool model;                     /* false (true: a whole model's state, bench/workloads/model_*.c) */
    gm_device *dev;
    gm_shape s;
    gm_precision wp, kp;            /* the weights' and the KV cache's precisions (s.prec: the activations') */
    uint64_t group;                 /* int4 weights: rows of a column per fp16 scale */
    bool chunked;                   /* CPU device: blocked products, chunked loops */
    uint64_t h, ffn, heads, dim, seq, layers, mb;
    uint64_t tokens_max;            /* mb * seq: rows of one micro-batch */
    uint64_t last_b0, last_nb;      /* the last micro-batch run: first sequence, count */
    float w_range[N_WEIGHTS];       /* weights are in [-range, range) */
    gm_buffer w[N_WEIGHTS], kv, inputs, act[N_ACTS], stats;
    gm_buffer ws[N_WEIGHTS];        /* int4 weights: the scales (w holds the codes, two a byte) */
    /* --offload: every layer's weights in pinned host memory (host_w), two
     * layer slots on the device (w), layer l in slot l % 2; loaded[] names
     * the layer each slot holds (-1: none). */
    bool offload;
    gm_buffer host_w[N_WEIGHTS], host_ws[N_WEIGHTS];
    int64_t loaded[2];
    gm_program *p_linear, *p_attn, *p_block;
    gm_kernel *k_linear, *k_attn, *k_init, *k_kv, *k_scales, *k_pack;
} block_state;

/* The name of weight w in the memory model ("w_qkv"), and the widths of
 * the weight matrices (in, out) and of the activations. */
const char *block_weight_name(int w);
uint64_t block_weight_in_of(uint64_t h, uint64_t ffn, int w);
uint64_t block_weight_out_of(uint64_t h, uint64_t ffn, int w);
uint64_t block_weight_in(const block_state *st, int w);
uint64_t block_weight_out(const block_state *st, int w);
uint64_t block_act_width(const block_state *st, int a);
/* One layer of weight w as stored: its bytes (int4: the codes) and, for
 * int4, its scales' bytes (0 otherwise). Layer l starts at l times these. */
uint64_t block_layer_bytes(const block_state *st, int w);
uint64_t block_layer_scale_bytes(const block_state *st, int w);
/* A CPU reference's product on checked columns (w: [k][nc]): want[j] =
 * sum over k of in[k] w[k][j] and mag[j] = the sum of |in[k] w[k][j]|, in
 * double; mag bounds the product's rounding error (the whole model's and
 * the serving engine's checks). */
void block_ref_columns(const float *in, const float *w, uint64_t k, uint64_t nc, double *want, double *mag);
/* Reads n elements of precision p (es bytes each, times scale) from
 * element `first` of src, whose element 0 is element off of the buffer, as
 * floats into out, through the
 * host-visible staging buffer `stage` of stage_bytes, in pieces (the whole
 * model's and the serving engine's checks). Stops at the first failed
 * copy and returns its status. */
gm_status block_read_floats(gm_device *dev, gm_buffer *stage, size_t stage_bytes, gm_buffer *src, uint64_t off,
                            uint64_t first, uint64_t n, size_t es, gm_precision p, float scale, float *out);

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

/* The workload hooks (bench/model/workload.h) of a shape of blocks
 * (block_shape.c); block.c dispatches to them when the shape has no arch. */
int block_impls(const gm_device *dev, const gm_shape *s, const char **out);
void block_adapt(gm_shape *s, const char *impl);
int block_tensors_shape(const gm_shape *s, gm_tensor *out);
gm_status block_setup_shape(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state);
gm_status block_enqueue_shape(void *state);
gm_status block_corrupt_shape(void *state, const struct gm_output_fault *f, unsigned rep);
void block_work_shape(const gm_shape *s, double *flops, double *bytes, double *tokens);
void block_teardown_shape(void *state);

/* The CPU reference check of the state after an iteration. */
gm_status block_verify(void *state, unsigned rep, bool *correct, char *note, size_t len);

/* Checks an int4 matrix [k, n] as the device holds it (codes two a byte,
 * fp16 scales) against the host's quantisation (gm_int4_quantize) of its
 * weights gm_hashed_value(base + kk * n + j, seed, range): every weight of
 * a small matrix, else a sample seeded by rng. On a difference returns
 * false with a note naming `what` and the element. */
bool block_int4_matches(const uint8_t *codes, const uint16_t *scales, uint64_t k, uint64_t n, uint64_t group,
                        uint64_t base, unsigned seed, float range, uint64_t rng, const char *what, char *note,
                        size_t len);

/* Host copy of gm_hashed_value (kernels/gm_portable.h), bit for bit. */
float gm_hashed_value(uint64_t i, uint32_t seed, float range);

#endif
