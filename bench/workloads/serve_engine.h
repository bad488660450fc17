/*
 * A serving engine on the device, as vLLM's V1 engine runs a decoder:
 * the weights, a paged KV pool of fixed-size blocks shared by every
 * sequence through a block table, and steps that each run a batch of
 * rows: decode rows (one token of a running sequence) and prefill rows (a
 * chunk of a prompt), at most max_tokens a step; each sequence whose row
 * ends its prompt or decodes gets logits and a greedily sampled token.
 * The model is block_model.c's Llama-family decoder (RMSNorm, grouped-query
 * attention, SwiGLU, an untied LM head), its weights the same hashes.
 *
 * Its device memory is the memory model of the serve workload
 * (serve_tensors), which is what vLLM's profile run holds
 * (bench/model/serve_plan.h): the weights, the KV pool, the activations of
 * one step of max_tokens rows (the residual stream, the norms' output and
 * one phase buffer: q, k, v and the attention output, then gate and up),
 * the logits of up to max_seqs rows in the activations' precision and in
 * fp32 (the sampler's copy), and a small workspace (block table, the
 * step's rows, the sampled tokens).
 *
 * The layers' products go through serve_linear (serve_engine.c), the one
 * place a vendor GEMM dispatch would take over.
 */
#ifndef GM_SERVE_ENGINE_H
#define GM_SERVE_ENGINE_H

#include "bench/workloads/runnable.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    gm_arch a;
    gm_precision p;             /* weights and activations */
    gm_precision kp;            /* the KV pool */
    uint64_t block_tokens;      /* tokens a block */
    uint64_t pool_blocks;       /* blocks in the pool */
    uint64_t max_tokens;        /* rows a step (max_num_batched_tokens) */
    uint64_t max_seqs;          /* sequences at once: slots of the block table */
    uint64_t max_blocks;        /* blocks a sequence may hold: cdiv(max_model_len, block_tokens) */
} serve_dims;

/* The engine's tensors, in the memory model's order. */
enum {
    SB_WEIGHTS, SB_LM, SB_POOL, SB_RES, SB_HID, SB_PHASE, SB_LOGITS, SB_LOGITS32,
    SB_TABLE, SB_ROWS, SB_TOKENS, SB_COUNT
};

/* The tensors of an engine of dims d (at most GM_MAX_TENSORS): the count,
 * or -1 if a size overflows 64 bits. */
int serve_tensors(const serve_dims *d, gm_tensor *out);
/* Bytes of one block across every layer (K and V). */
uint64_t serve_block_bytes(const serve_dims *d);
/* Elements a token takes in the phase buffer: the larger of the attention
 * phase (q, k, v, the attention output and o_proj's output) and the MLP's
 * (gate_up's 2I and the activation's I), as serve_plan counts them. */
uint64_t serve_phase_width(const gm_arch *a);
/* Why the engine cannot run dims d (NULL if it can). */
const char *serve_unsupported(const serve_dims *d);

#define SERVE_ROW_WORDS 4           /* slot, position, prompt token, flags */
#define SERVE_ROW_DECODE 1u         /* kernels/serve.cl SERVE_DECODE */

typedef struct serve_engine {
    gm_device *dev;
    serve_dims d;
    bool chunked;
    uint64_t h, ad, kd, I, V, L, per_layer, p_main;
    float range[16], add[16];       /* per matrix kind: weights uniform add + [-range, range) */
    gm_buffer buf[SB_COUNT];
    gm_buffer stage;                /* host staging of the step's rows and table rows */
    int32_t *table;                 /* host mirror of the block table, max_seqs x max_blocks */
    bool *table_dirty;              /* per slot: its row differs from the device's */
    /* The step being built: rows (SERVE_ROW_WORDS words each), then the
     * rows that get logits (their index) and their slots. */
    uint32_t *rows;
    uint32_t n_rows, n_decode;      /* rows; of them the decode rows, first */
    bool *slot_in_step;             /* per slot: the step has a row of it */
    bool rows_distinct;             /* no two of the step's rows share a slot */
    uint32_t *logit_row, *logit_slot, n_logits;
    gm_program *p_linear, *p_model, *p_serve;
    gm_kernel *k_linear, *k_init, *k_norm, *k_swiglu, *k_embed, *k_kv, *k_attn, *k_sample;
} serve_engine;

/* Allocates the tensors of d through pat (in the memory model's order),
 * builds the kernels and writes the weights. On failure returns the
 * status with dev->err set; *out is then NULL. */
gm_status serve_engine_open(gm_device *dev, gm_pattern *pat, const serve_dims *d, serve_engine **out);
void serve_engine_close(serve_engine *e);

/* The prompt token at `pos` of request `req` (a fixed hash). */
uint32_t serve_prompt_token(uint64_t req, uint64_t pos, uint64_t vocab);

/* Block `index` of sequence `slot` is physical block `block` (-1: none). */
void serve_table_set(serve_engine *e, unsigned slot, unsigned index, int32_t block);

/* Starts a step's rows. */
void serve_step_begin(serve_engine *e);
/* Adds a row: the token at `pos` of the sequence in `slot`: `token`, or
 * with `decode` the one sampled for the slot at the step before (decode
 * rows come first). `logits`: the row gets logits and a sampled token.
 * False when the step is full (max_tokens rows, max_seqs logits). */
bool serve_step_add(serve_engine *e, unsigned slot, uint64_t pos, uint32_t token, bool decode, bool logits);
/* Copies the step's rows and the changed block-table rows to the device
 * (queue 0, blocking). */
gm_status serve_step_upload(serve_engine *e);
/* Enqueues the step's forward on queue 0 (launches only: what is timed). */
gm_status serve_step_enqueue(void *engine);
/* After a step: the sampled tokens become the next step's decode inputs
 * (queue 0), and out[i] gets the token sampled for the step's logit row i
 * (out may be NULL; n_logits entries; blocking). */
gm_status serve_step_commit(serve_engine *e, uint32_t *out);
/* The CPU reference check of the step last enqueued (before its commit):
 * the step is replayed stage by stage and each stage of sampled rows
 * compared with a double-precision recomputation from the device's own
 * inputs (serve_check.c). */
gm_status serve_step_verify(serve_engine *e, unsigned rep, bool *correct, char *note, size_t len);
/* Test-only fault (bench/output_fault.h): strikes one element of the
 * step's logits (n_logits rows of the vocabulary), the one f picks for
 * repetition rep, any bit of it (serve_step_verify compares the logits
 * whole, bit for bit, with a replay's). */
gm_status serve_step_corrupt(serve_engine *e, const gm_output_fault *f, unsigned rep);

/* Moves physical block `block` (every layer, K and V) to or from byte
 * `off` of host buffer `host` on queue 0 (not waiting). */
gm_status serve_block_out(serve_engine *e, int32_t block, gm_buffer *host, size_t off);
gm_status serve_block_in(serve_engine *e, int32_t block, gm_buffer *host, size_t off);

#endif
