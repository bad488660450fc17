/*
 * The whole model (block with --model): its state and what its files
 * share; bench/workloads/block_model.h is what block.c sees.
 *   model_layout.c   the tensor list (the memory model) and where each
 *                    weight matrix lives;
 *   model_forward.c  the forward pass, the AdamW step, the corrupt hook;
 *   model_backward.c the training step's loss and backward pass;
 *   model_step.c     one iteration: the forward pass or a training step;
 *   model_train_ref.c, model_train_check.c  its double-precision
 *                    reference and check;
 *   model_setup.c    allocation, kernels, initial values, teardown;
 *   model_lora.c     LoRA's adapters in the forward and backward (their
 *                    place: model_layout.c);
 *   model_nf4.c, model_nf4_setup.c  QLoRA's NF4 base;
 *   model_check.c    reading the device back and the CPU references of
 *                    each stage;
 *   model_replay.c   the check: the stage-by-stage replay and AdamW;
 *   model_product_check.c  every product of the replay checked whole on
 *                    the device (product_device_check.h), and the
 *                    product faults (output_fault.h) that prove it;
 *   model_attention_check.c  every layer's attention output of the
 *                    replay checked whole on the device
 *                    (model_attention_verify), and its fault (attn).
 *
 * The decoder of a Llama-family model (model_type llama, mistral, qwen2 without biases,
 * phi3) as its modelling code runs it:
 *   x = embed(tokens)
 *   per layer:  a = RMSNorm(x) w1;  q = a Wq, k = a Wk, v = a Wv (GQA:
 *               kv_heads key/value heads, heads / kv_heads queries each);
 *               o = causal softmax(q k^T / sqrt(d)) v;  mid = x + o Wo;
 *               n = RMSNorm(mid) w2;  x = mid + (silu(n Wg) * (n Wu)) Wd
 *   logits = RMSNorm(x) wf  W_lm  (fp32; W_lm the embedding when tied)
 * Rotary position embeddings: the training step (train, lora, qlora)
 * rotates q and k after their projections (train.cl's train_rope, Hugging
 * Face's rotate_half, rope_theta from the config) and dq, dk back before
 * theirs; inference applies none (they move no memory).
 *
 * Precisions per role (inference): one for every tensor, or fp16/bf16
 * activations with int4 weights and/or an fp8 KV cache. int4 weights are
 * mem_plan's: every layer matrix's codes back to back (weights_int4, in
 * the order q, k, v, o, gate, up, down of each layer), their fp16 scales
 * in the same order (weight_scales_fp16), quantised on the device from
 * the same hashes (block.cl); the embedding, norms and LM head stay in
 * the activations' precision (weights, lm_head), but for an untied head
 * with --int4-lm-head (gm_shape.int4_lm_head): its codes and scales then
 * follow the layers' (model.cl's model_lm_head_int4 dequantises them on
 * load). An fp8 KV cache: K and V
 * are projected into the phase buffer (free between Q and the attention
 * output) and converted into the cache, one at a time.
 *
 * Inference (prefill of b sequences of s tokens) holds exactly the tensors
 * of bench/mem_plan's inference plan: the weights, the KV cache (K and V
 * go straight into it), the live layer (residual stream, norm output, and
 * one phase buffer for Q and the attention output, then gate and up), the
 * last tokens' fp32 logits and the attention row statistics.
 *
 * --mode train holds the plan's training tensors: weights, fp32 master
 * weights for 16-bit, gradients, AdamW moments, every layer's activations
 * kept for backward (mem_plan.c, gm_layer_train_activations: x, the norm
 * outputs and inputs, q, k, v, the attention output, its fp32 log-sum-exp
 * per row and head, gate, up and the down projection's input), the final
 * norm's input and output, the fp32 logits of every token, the loss's
 * gradient in the compute precision (fp32: in place), the backward's
 * workspace and the token ids (model_backward.c). One iteration is a whole
 * training step: AdamW over the gradients of the step before (set-up runs
 * the first), the forward pass, the fused cross-entropy and the backward
 * pass. The attention's (max, sum) pairs of one head pass through the
 * logits buffer, which is free until the LM head.
 *
 * Checks: the iteration's output (sampled logits rows) is kept, then the
 * forward pass is replayed stage by stage, untimed: every product of every
 * layer and the LM head (q, k, v, o, gate, up, down, lm_head) checked whole
 * on the device as it runs, by column checksums over blocks of rows
 * (product_device_check.h; fp32, fp16, bf16, int4 and NF4 weights; int8:
 * product_device_check_int8.h; fp8 products on the sampled rows alone),
 * every layer's attention output (and training's log-sum-exp) recomputed
 * whole on the device (model_attention_check.c), and each stage of the
 * checked layers compared on sampled token rows with a double-precision
 * recomputation from the device's own inputs; the replay's logits must
 * equal the iteration's bit for bit (the kernels are deterministic;
 * training: the loss's gradient). In train mode the loss and every
 * gradient are then checked against a double-precision step on the CPU
 * (model_train_check.c, for models small enough) and one AdamW step on a
 * seeded sample of parameters.
 */
#ifndef GM_MODEL_PRIVATE_H
#define GM_MODEL_PRIVATE_H

#include "bench/model/mem_plan.h"
#include "bench/workloads/block_model.h"
#include "bench/workloads/block_private.h"
#include "bench/workloads/kernel_calls.h"
#include "bench/workloads/matmul.h"
#include "bench/workloads/train_kernels.h"
#include "bench/output_fault.h"
#include "bench/workloads/product_device_check.h"
#include "bench/workloads/product_device_check_int8.h"

#define ACT BLOCK_ACT_SCALE
#define SEED_W 401u
#define SEED_GRAD 509u
#define RMS_EPS 1e-5f
#define LR 1e-4f
#define BETA1 0.9f
#define BETA2 0.999f
#define ADAM_EPS 1e-8f
#define WEIGHT_DECAY 0.01f
#define CHECK_ROWS 4            /* token rows per stage */
#define CHECK_PARAMS 256        /* AdamW sample */
#define MAX_CHECKED_LAYERS 4
/* Output columns of a product checked per sampled row: every one up to
 * this many, else the first and last EDGE_COLS and a seeded sample. */
#define CHECK_COLS 1024
#define EDGE_COLS 32

/* Matrices of one layer, in their order in the weights tensor, then the
 * model-wide ones. */
enum { M_NORM1, M_Q, M_K, M_V, M_O, M_NORM2, M_GATE, M_UP, M_DOWN, N_LAYER_M, M_EMB = N_LAYER_M, M_FINAL, M_LM, N_M };

/* Tensors, in the memory model's order. */
enum {
    B_W4, B_WS,                                                           /* int4 weights: codes, scales */
    B_W, B_LM, B_MASTER, B_GRAD, B_MOM,                                   /* train state (B_W, B_LM also inference) */
    B_KV, B_RES, B_NORM, B_PHASE, B_STATS,                                /* inference */
    B_X, B_AIN, B_Q, B_K, B_V, B_O, B_LSE, B_MID, B_MIN, B_GATE, B_UP, B_ACT, B_FIN, B_FOUT, /* train */
    B_LOGITS,
    B_SCORES, B_DEQUANT,                                                  /* the vendor path's workspaces */
    B_DLOGITS, B_BWS, B_TGT, B_ORDER, B_SEG_START, B_SEG_TOKEN,          /* the backward (model_backward.c) */
    B_AD, B_AMASTER, B_AGRAD, B_AMOM, B_XA,                               /* LoRA (model_lora.c) */
    B_NF4C, B_NF4A, B_NF4S, B_NF4M,                                       /* QLoRA's base (model_nf4.c) */
    B_ROPE,                                                               /* training: fp32 cos, sin tables */
    B_HGRAD,                  /* --zero-offload: the gradients in pinned host memory (model_offload.c) */
    N_B
};

/* A verify's whole-product checks (model_product_check.c), while its
 * replay runs. */
typedef struct {
    bool on;                        /* check each product as it runs */
    bool failed;                    /* one failed: its note is written */
    char *note;                     /* the verify's note */
    size_t note_len;
    uint64_t limit;                 /* scratch bytes at most */
    uint64_t checked;               /* products checked whole */
    bool backward;                  /* the verify's backward (else its forward replay) */
    char off[200];                  /* why the products fell back to the sampled checks ("" none) */
    /* The forward replay's attention (model_attention_check.c): checked
     * whole at each layer while attn_on; the layers checked, the largest
     * |got - want| / tolerance seen, why it fell back ("" none). */
    bool attn_on;
    uint64_t attn_checked;
    double attn_worst;
    char attn_off[120];
} model_pcheck;

typedef struct {
    bool model;                     /* true: this is not a block_state (block.c) */
    gm_device *dev;
    gm_shape s;
    gm_arch a;
    gm_precision p, kp;             /* the activations' (and weights' but int4) and the KV cache's */
    size_t es, kes;
    bool int4;                      /* the layer matrices in int4 (B_W4, B_WS) */
    bool int4_head;                 /* the LM head too, after them */
    uint64_t group;                 /* int4: rows of a column per scale */
    uint64_t int4_layer;            /* int4: bytes of one layer's codes */
    bool chunked, train, master, tied;
    /* The vendor implementation: products through the dispatch with the
     * vendor first (mm.vendor), attention by GEMMs over chunks of
     * attn_rows query rows where attn_gemm (mem_plan.h). What ran each
     * kind of product is counted for the rows. */
    bool vendor, attn_gemm;
    bool attn_half_sums;            /* an attention GEMM summed in fp16 (matmul.h's last_half_sums) */
    bool ours_only;                 /* "gemm-ours": that path with our kernels alone (tests) */
    uint64_t attn_rows;
    gm_mm_ctx mm;
    gm_mm_tally tally_proj, tally_attn, tally_head, tally_bwd;
    /* The device's dense peak in the activations' precision (peak.h;
     * 0 in an oom probe, which reports no MFU) and its source. */
    double peak;
    char peak_basis[240];
    uint64_t h, ad, kd, d, I, V, L, heads, kv_heads, b, seq, T;
    /* Sequences, tokens of each, and tokens an iteration runs: the batch
     * (b, seq, T), or for an oom probe (gm_shape.probe) the first
     * GM_PROBE_TOKENS tokens (at most) of its first sequence; the tensors
     * are laid out for the whole batch either way. */
    uint64_t run_b, run_seq, run_T;
    uint64_t per_layer, p_main, p_total;    /* elements: one layer, the weights tensor, all parameters */
    float range[N_M], add[N_M];
    unsigned steps;                 /* AdamW steps taken */
    gm_buffer buf[N_B];
    gm_program *p_attn, *p_model, *p_block;
    gm_kernel *k_attn, *k_softmax, *k_init, *k_fill, *k_master, *k_embed, *k_norm, *k_swiglu, *k_lse, *k_lm, *k_lm4,
        *k_adamw;
    gm_kernel *k_kv, *k_scales, *k_pack;        /* block.cl: an fp8 KV cache, int4 weights */
    gm_kernel *k_attn_verify;                   /* attention.cl's model_attention_verify */
    /* Its verdicts and largest ratios, allocated by a verify's first
     * check and freed at model_pcheck_end. */
    gm_buffer attn_verdict, attn_worst;
    /* Training: train.cl's kernels (built with GPUMEM_FAULT=train-backward's
     * planted error where asked), the embedding's token segments and the
     * tokens the loss counts. */
    gm_train_kernels tk;
    bool tk_built;
    unsigned recompute;             /* gm_recompute: what the backward recomputes */
    /* The layers' backward runs (model_backward.c): an fp32 step's
     * recomputed attention writes its row statistics (and selective's
     * log-sum-exp) into the final norm's input, free after the head's
     * backward, not into the logits' space, where fp32 keeps the loss's
     * gradient for the check (model_locs). */
    bool in_backward;
    uint64_t segments, counted;
    /* --mode lora (model_lora.c): the base frozen (no gradient, no
     * optimizer state), rank-r adapters on the matrices of lora_m (bit
     * M_*), y = x W + (alpha / r) (x A) B; train is true too. */
    bool lora;                      /* qlora too */
    unsigned lora_m;
    uint64_t rank, n_adapted, lora_p;  /* rank, adapted matrices a layer, adapter parameters */
    float lora_scale;
    bool lora_fault;                /* GPUMEM_FAULT=lora-backward (model_lora.c) */
    /* --mode qlora (model_nf4.c): lora too, the layers' projections in
     * NF4 (B_NF4*), dequantised into B_DEQUANT for each product; the
     * offset of each (layer x N_LAYER_M + matrix). */
    bool nf4, nf4_fault;            /* nf4_fault: GPUMEM_FAULT=nf4-dequant (model_nf4.c) */
    float *nf4_offset;
    /* --zero-offload optimizer (model_offload.c): the fp32 master weights
     * (B_MASTER, B_AMASTER), the AdamW moments (B_MOM, B_AMOM) and every
     * gradient (B_HGRAD) in pinned host memory; the device's gradients
     * tensor (B_GRAD, B_AGRAD) holds one module's, parameters from
     * grad_base on. The last step's blocking transfers and host AdamW,
     * wall time, and the bytes held in host memory. */
    bool zoff;
    uint64_t grad_base;
    double xfer_ms, host_opt_ms;
    uint64_t host_bytes;
    /* The products checked whole (model_product_check.c): the device
     * checksums' kernels for weights in p (abft) and in int4 (abft4),
     * and for int8 products (abft8), built at the first product a verify
     * checks; pcheck while a verify's replay runs, else NULL; what the
     * last verify did, for the row's note. */
    gm_abft abft, abft4;
    gm_abft_i8 abft8;
    model_pcheck *pcheck;
    char pcheck_note[360];
    char pcheck_bwd_note[240];      /* the same of the last verify's backward ("" none) */
    /* GPUMEM_FAULT=corrupt-product / flip-product-bit (output_fault.h):
     * the product struck in every forward (kind NONE: none). */
    gm_output_fault pfault;
    int pfault_m, pfault_role;      /* pfault_role: output_fault.h's gm_output_fault_roles; pfault_m
                                     * MODEL_ATTN_SITE: the attention's output (attn) */
    uint64_t pfault_layer;
} model_state;

/* model_state.pfault_m of a fault on a layer's attention output: no matrix. */
#define MODEL_ATTN_SITE (-1)

typedef struct {
    gm_buffer *buf;
    uint64_t off;
} loc;

/* Which product of the model one is: matrix m of `layer` (M_LM: the
 * head, layer L) in `role`, output_fault.h's gm_output_fault_roles (0 the
 * forward's projection; R_LORA_FWD LoRA's forward terms, x A and (x A) B,
 * which no fault names). */
enum { R_LORA_FWD = -1, R_FWD, R_DX, R_DW, R_LORA_DB, R_LORA_DXA, R_LORA_DA, R_LORA_DX };
typedef struct {
    int m, role;
    uint64_t layer;
} model_site;

/* c (m x n) = op(a) op(b) in the model's precision through the dispatch
 * (matmul.h), plus what c holds where `acc`; the call is counted on
 * `tally`. The product is site's: struck by a product fault naming it,
 * and checked whole while a verify checks (model_product_check.c). */
gm_status model_product(model_state *st, model_site site, uint64_t m, uint64_t n, uint64_t k, loc a, bool ta, loc b,
                        bool tb, loc c, bool acc, gm_mm_tally *tally);

typedef struct {
    loc x_in, attn_in, q, k, v, o, lse, mid, mlp_in, gate, up, act, out, stats;
} layer_locs;

enum { S_NORM1, S_QKV, S_ATTN, S_OPROJ, S_NORM2, S_GATEUP, S_SWIGLU, S_DOWN, N_STAGES };

/* ---- model_layout.c ---- */

/* NULL where this file runs architecture a, else why not. */
const char *model_unsupported(const gm_arch *a);
/* Is impl the vendor's (not our "tiled" or "blocked")? */
bool model_is_vendor(const char *impl);
/* Parameters of one layer (its matrices and norms). */
uint64_t model_layer_elems(const gm_arch *a);
/* The tensor list of s (the memory model), each tensor's buffer (B_*) in
 * ids; -1 where a size overflows. */
int model_tensor_list(const gm_shape *s, gm_tensor *out, int *ids);
/* Matrix m's inputs (rows) and outputs (columns). */
uint64_t model_in(const model_state *st, int m);
uint64_t model_out(const model_state *st, int m);
/* Is matrix m stored in int4? */
bool model_is_int4(const model_state *st, int m);
/* The index of matrix m's first parameter in the model (its hashes'). */
uint64_t model_param(const model_state *st, int m, uint64_t layer);
/* Where matrix m of `layer` starts (int4 codes: bytes). */
loc model_loc(model_state *st, int m, uint64_t layer);
/* The int8 scale of matrix m. */
float model_scale(const model_state *st, int m);
/* Where layer l's activations are. */
layer_locs model_locs(model_state *st, uint64_t l);

/* ---- model_forward.c ---- */

/* Enqueues kernel k over `items` on queue 0 with the device's geometry. */
gm_status model_launch(model_state *st, gm_kernel *k, size_t items, gm_arg *args, int n);
/* t[at + i] = add + hash(base + i), i < n, stored at `scale`. */
gm_status model_init_region(model_state *st, loc at, uint64_t n, uint64_t base, unsigned seed, float range, float add,
                            float scale);
/* Matrix m of `layer`, initialised (quantised on the device for int4). */
gm_status model_init_matrix(model_state *st, int m, uint64_t layer);
/* y = x W_m (+ r), `rows` rows. */
gm_status model_linear(model_state *st, int m, uint64_t layer, uint64_t rows, loc x, loc y, const loc *r);
/* Enqueues stage s of layer l. */
gm_status model_stage(model_state *st, uint64_t l, int s);
gm_status model_embed(model_state *st);
/* The rows the LM head computes (each sequence's last token, or every
 * token in train mode) and where its input is. */
uint64_t model_head_rows(const model_state *st);
loc model_head_in(model_state *st);
gm_status model_final_norm(model_state *st);
gm_status model_lm_head(model_state *st);
/* The forward pass: embedding, layers, final norm, LM head. */
gm_status model_forward_pass(model_state *st);
/* Training: rotates q (heads) or k (kv heads) rows of T tokens at `x` by
 * their positions (direction +1), or their gradients back (-1). */
gm_status model_rope(model_state *st, loc x, unsigned int heads, float direction);
/* One AdamW step over every parameter from the gradients (st->steps + 1). */
gm_status model_adamw(model_state *st);

/* ---- model_backward.c ---- */

/* NULL where the device's training step runs shape s, else why not. */
const char *model_train_unsupported(const gm_shape *s);
/* Builds train.cl's kernels (GPUMEM_FAULT=train-backward: with its
 * planted error) and uploads the targets and the embedding's segments. */
gm_status model_train_setup(model_state *st);
void model_train_release(model_state *st);
/* The fused cross-entropy: dlogits (in place over the fp32 logits in an
 * fp32 model), the loss of each row at the workspace's start (fp32). */
gm_status model_loss(model_state *st);
/* The backward pass after model_loss: every parameter's gradient. */
gm_status model_backward(model_state *st);

/* ---- model_train_ref.c ---- */

/* The training step of st's model in double precision: w and grad hold
 * every parameter in the model's order (model_param), tokens and targets
 * st->run_T each (targets GM_TRAIN_IGNORE: not counted). LoRA: ad and
 * ad_grad the adapters and their gradients (model_lora_param), NULL for
 * full fine-tuning (grad then holds the frozen base's too, unused). Fills
 * the gradients and returns the mean loss; -1 where host memory ran out. */
double model_train_ref(const model_state *s, const double *w, const double *ad, const uint32_t *tokens,
                       const uint32_t *targets, double *grad, double *ad_grad);

/* ---- model_lora.c ---- */

/* The adapted matrices of a layer of shape s (bit M_*), their count, the
 * rank and alpha (--lora-targets, --lora-rank, --lora-alpha or plan's
 * defaults). */
unsigned model_lora_matrices(const gm_shape *s, uint64_t *count, uint64_t *rank, double *alpha);
/* The adapters' parameters of s (every layer). */
uint64_t model_lora_params(const gm_shape *s);
/* Is matrix m adapted? */
bool model_lora_adapted(const model_state *st, int m);
/* Element of A [in, r] of matrix m of layer l in the adapters (B [r, out]
 * follows it), the same in their gradients, master copies and moments. */
uint64_t model_lora_param(const model_state *st, int m, uint64_t l);
/* Where layer l's kept (alpha / r) x A of matrix m is ([T, r]); with
 * --recompute full every layer's in the one layer's place (recomputed
 * before its backward, as the layer's other tensors). */
loc model_lora_xa(model_state *st, int m, uint64_t l);
/* The scaled x A of matrix m of layer l, `rows` rows of x, into its
 * place (model_lora_xa); nothing where m has no adapter. */
gm_status model_lora_keep_xa(model_state *st, int m, uint64_t l, uint64_t rows, loc x);
/* After y = x W_m (+ r), `rows` rows: y += (alpha / r) (x A) B, keeping
 * the scaled x A. */
gm_status model_lora_forward(model_state *st, int m, uint64_t l, uint64_t rows, loc x, loc y);
/* The adapter's backward from dy: dB = xa^T dy, d(xa) = dy B^T into the
 * workspace, dA = (alpha / r) x^T d(xa), and dx += (alpha / r) d(xa) A^T. */
gm_status model_lora_backward(model_state *st, int m, uint64_t l, loc x, loc dy, loc dx);

/* ---- model_nf4.c ---- */

/* Is matrix m a projection stored in NF4? */
bool model_is_nf4(const model_state *st, int m);
/* Where matrix m of layer l starts in the NF4 buffers. */
gm_nf4_at model_nf4_at(const model_state *st, int m, uint64_t l);
/* Are the projections of a whole blocks of GM_NF4_BLOCK weights? */
bool model_nf4_fits(const gm_arch *a);
/* Matrix m of layer l for a product: where it is, or for an NF4 one,
 * enqueues its dequantisation into B_DEQUANT (*rc its status) and
 * returns that. */
loc model_weight(model_state *st, int m, uint64_t l, gm_status *rc);
/* The second quantisation's map: 256 ascending values over [-1, 1]. */
void model_nf4_code_map(float *code2);
/* Set-up (model_nf4_setup.c): the code map and every projection quantised. */
gm_status model_nf4_init(model_state *st);
/* Matrix m of layer l dequantised on the host from the device's codes, in
 * double (the reference's weights). */
gm_status model_nf4_host(model_state *st, int m, uint64_t l, double *out);
void model_nf4_release(model_state *st);

/* ---- model_offload.c ---- */

/* Allocates the offloaded states in pinned host memory (st->zoff). */
gm_status model_offload_alloc(model_state *st);
/* The states' first values: zero moments, master weights from the
 * device's weights (read back). */
gm_status model_offload_init(model_state *st);
/* Where the gradient of parameter p is written on the device (p an index
 * of model_param, or of model_lora_param for LoRA). */
loc model_grad_at(model_state *st, uint64_t p);
/* Offload: the gradients of parameters [first, first + n) are complete on
 * the device (from grad_base): after the work queued so far, they are
 * copied to the host's, timed, and the buffer holds parameters from
 * `next` on. Without offload, nothing. */
gm_status model_grad_flush(model_state *st, uint64_t first, uint64_t n, uint64_t next);
/* Offload: parameters [first, first + n) of the host's gradients copied
 * back into the buffer (from grad_base), timed, for a backward that adds
 * to them. */
gm_status model_grad_fetch(model_state *st, uint64_t first, uint64_t n);
/* Offload: AdamW on the host over every trainable parameter from the
 * host's gradients (st->steps already counted), the updated weights
 * rounded to the compute precision and copied to the device. */
gm_status model_host_adamw(model_state *st, float bc1, float bc2);
/* The buffer holding every gradient after a step (the host's with offload). */
gm_buffer *model_grads(model_state *st);

/* ---- model_product_check.c ---- */

/* The name of matrix m's product (q_proj ... lm_head: output_fault.h's). */
const char *model_product_name(int m);
/* Reads a product fault from GPUMEM_FAULT into st (none: nothing);
 * GM_ERR_INVALID for a layer the model does not have, or a backward
 * product this run does not have (no training step; dW_ of LoRA's frozen
 * base; a LoRA product without LoRA or of a matrix it does not adapt). */
gm_status model_product_fault_setup(model_state *st);
/* After product op of `site` has been enqueued: the product fault where
 * it names this one, then, while a verify's replay or backward runs
 * (st->pcheck), the product checked whole (half_sums, b_rounded:
 * gm_abft_check's; int8: gm_abft_i8_check). A failure sets
 * pcheck->failed and writes
 * its note; where the checksums cannot run (no scratch, a precision they
 * do not cover) the replay goes on with the sampled checks alone, and the
 * note says so. Returns the device's status. */
gm_status model_product_done(model_state *st, model_site site, const gm_mm *op, bool half_sums, bool b_rounded);
/* Before product op of a site runs: where it adds itself to its output in
 * place and a verify checks, the output's sums before it
 * (gm_abft_before). Returns the device's status. */
gm_status model_product_before(model_state *st, const gm_mm *op);
/* The verify's replay (or, where `backward`, the verify's backward)
 * checks every product from here (into note) to model_pcheck_end, which
 * frees the scratch and writes st->pcheck_note (st->pcheck_bwd_note). */
void model_pcheck_begin(model_state *st, model_pcheck *pc, char *note, size_t len, bool backward);
void model_pcheck_end(model_state *st, model_pcheck *pc);
void model_pcheck_release(model_state *st);

/* ---- model_attention_check.c ---- */

/* After layer l's attention stage (S_ATTN) has been enqueued: the
 * attention fault where it names this layer (its output struck). Returns
 * the device's status. */
gm_status model_attention_done(model_state *st, uint64_t l);
/* During a verify's forward replay (st->pcheck), after layer l's
 * attention stage has run: its every output element (and in training its
 * log-sum-exp) recomputed on the device and compared
 * (model_attention_verify). A wrong element sets pcheck->failed and
 * writes its note; where the check cannot run (a head dimension past the
 * kernel's, no device memory for its verdicts) the replay goes on with
 * the sampled check alone and the note says so. Returns the device's
 * status. */
gm_status model_attention_check(model_state *st, uint64_t l);

/* ---- model_step.c ---- */

/* Training: the forward pass alone and the whole step (block_model_enqueue)
 * timed in turn, MODEL_STEP_PAIRS pairs after the point's repetitions:
 * *fwd_ms and *step_ms their medians, *ratio the median over the pairs of
 * 3 x forward / step, the step's FLOP rate (3 x its forward's FLOPs) over
 * the forward pass's on the same shapes. Leaves the weights one step on. */
#define MODEL_STEP_PAIRS 3
gm_status model_time_forward_and_step(model_state *st, double *fwd_ms, double *step_ms, double *ratio);

/* ---- model_rows.c ---- */

/* The model FLOPs of one iteration (PaLM's convention, model_rows.c). */
double model_flops(const model_state *st);

/* ---- model_attention.c ---- */

/* Enqueues layer l's attention on the vendor path (st->attn_gemm): QK^T,
 * softmax and PV over chunks of query rows, through the dispatch. */
gm_status model_attention_gemm(model_state *st, uint64_t l);

#endif
