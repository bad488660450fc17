/*
 * What serve_engine.c (the forward pass) and serve_check.c (its CPU
 * reference) share: the weights' matrices and where they are, the step's
 * stages and the buffers each reads and writes. Private to the engine.
 */
#ifndef GM_SERVE_LAYOUT_H
#define GM_SERVE_LAYOUT_H

#include "bench/workloads/serve_engine.h"

/* kernels/serve.cl's limits and launch groups. */
#define SERVE_MAX_GROUP 8
#define SERVE_MAX_DIM 256
#define SERVE_MAX_BLOCK 128
#define SERVE_WG 128
#define SERVE_SAMPLE_WG 256
#define SERVE_RMS_EPS 1e-5f

/* Matrices of a layer in their order in the weights tensor, fused as
 * vLLM's Llama fuses them (qkv_proj [h][a*d + 2*k*d], gate_up_proj
 * [h][2I]), then the model-wide ones. */
enum { M_NORM1, M_QKV, M_O, M_NORM2, M_GATEUP, M_DOWN, N_LAYER_M, M_EMB = N_LAYER_M, M_FINAL, M_LM, N_M };

/* A layer's stages, in the order the step runs them. */
enum { S_NORM1, S_QKV, S_KV, S_ATTN, S_OPROJ, S_NORM2, S_GATEUP, S_SWIGLU, S_DOWN, N_STAGES };

typedef struct {
    gm_buffer *buf;
    uint64_t off;               /* elements */
} serve_loc;

/* Where a layer's tensors are for the step's rows: the residual stream in
 * a (and b between the attention and the MLP); in the phase buffer the
 * rows of qkv_proj's output [q | k | v], then the attention output; later
 * gate_up_proj's [gate | up], then the activation. */
typedef struct {
    serve_loc a, b, qkv, o, gu, act;
} serve_layer_locs;

uint64_t serve_m_in(const serve_engine *e, int m);
uint64_t serve_m_out(const serve_engine *e, int m);
/* The index of matrix m's first parameter in the model (its hashes). */
uint64_t serve_m_param(const serve_engine *e, int m, uint64_t layer);
/* Its buffer and element offset there. */
gm_buffer *serve_m_buf(serve_engine *e, int m);
uint64_t serve_m_off(const serve_engine *e, int m, uint64_t layer);
/* Weight i (an index over the model's parameters) of matrix kind m. */
float serve_weight(const serve_engine *e, int m, uint64_t i);

serve_layer_locs serve_locs(serve_engine *e);
/* Whether the step's keys and values are written by the attention's
 * launch (S_KV then launches nothing): on CPU devices, when every row is a
 * decode row of a sequence of its own, so that no row attends over a key
 * another row of the step writes. */
bool serve_kv_fused(const serve_engine *e);
/* Enqueues stage s of layer l, the embedding, the head (final norm, LM
 * head, sampler). */
gm_status serve_stage(serve_engine *e, uint64_t l, int s);
gm_status serve_embed(serve_engine *e);
gm_status serve_head(serve_engine *e);

#endif
