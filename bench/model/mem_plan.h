/*
 * The memory of a whole model (bench/model/arch.h) for inference or training,
 * per GPU: what `gpumem plan --model M` prints without --workload. The
 * formulas and their sources are in mem_plan.c and README.md ("Planning a
 * model's memory"). Arithmetic saturates: a figure that overflows 64 bits
 * is UINT64_MAX, which never fits.
 */
#ifndef GM_MEM_PLAN_H
#define GM_MEM_PLAN_H

#include "bench/model/arch.h"
#include "lib/precision.h"

#include <stdbool.h>
#include <stdint.h>

/* train is full fine-tuning; lora and qlora train rank-r adapters over a
 * frozen base (bench/model/train_plan.h); serve is a serving engine's
 * budget (bench/model/serve_plan.h). */
typedef enum {
    GM_PLAN_INFERENCE, GM_PLAN_TRAIN, GM_PLAN_LORA, GM_PLAN_QLORA, GM_PLAN_SERVE, GM_PLAN_MODE_COUNT
} gm_plan_mode;
/* "inference", "train", "lora", "qlora", "serve": the values of --mode,
 * and of results' `mode` column. */
extern const char *const gm_plan_mode_names[GM_PLAN_MODE_COUNT];
typedef enum { GM_OPTIM_ADAMW, GM_OPTIM_ADAMW_8BIT, GM_OPTIM_SGD, GM_OPTIM_SGD_MOMENTUM } gm_optimizer;
typedef enum { GM_RECOMPUTE_NONE, GM_RECOMPUTE_SELECTIVE, GM_RECOMPUTE_FULL } gm_recompute;

/* Does mode m train (hold gradients and optimizer states)? train, lora
 * and qlora do; inference and serve do not. */
#define gm_plan_trains(m) ((m) == GM_PLAN_TRAIN || (m) == GM_PLAN_LORA || (m) == GM_PLAN_QLORA)

/* The projections of a layer a LoRA adapter may sit on, in --lora-targets
 * order: "q", "k", "v", "o", "gate", "up", "down". */
typedef enum {
    GM_LORA_Q,
    GM_LORA_K,
    GM_LORA_V,
    GM_LORA_O,
    GM_LORA_GATE,
    GM_LORA_UP,
    GM_LORA_DOWN,
    GM_LORA_TARGET_COUNT
} gm_lora_target;
extern const char *const gm_lora_target_names[GM_LORA_TARGET_COUNT];

/* What lives in host memory (ZeRO-Offload, Ren et al. 2021): nothing; the
 * optimizer states, fp32 master weights and gradients; those and the
 * parameters too (ZeRO-3's parameter offload). */
typedef enum { GM_OFFLOAD_NONE, GM_OFFLOAD_OPTIMIZER, GM_OFFLOAD_PARAMS } gm_offload;

/* Whose tensors the backward keeps: gpumem's training step's, or those
 * plain PyTorch's eager autograd keeps (mem_plan_tune.c says which). */
typedef enum { GM_SAVED_GPUMEM, GM_SAVED_PYTORCH } gm_saved;

/* Fine-tuning's options (--mode train, lora, qlora); zeros are defaults. */
typedef struct {
    uint64_t rank;          /* LoRA rank r (0: 16) */
    double alpha;           /* LoRA scales x A B by alpha / r (0: 2 r); no bytes */
    unsigned targets;       /* bit gm_lora_target t: adapted (0: every projection the model has) */
    unsigned adapter_prec;  /* adapters' precision + 1 (0: fp32) */
    gm_offload offload;
    gm_saved saved;
} gm_tune_opts;

/* Roles in print order. */
typedef enum {
    GM_PLAN_WEIGHTS,
    GM_PLAN_GRADIENTS,
    GM_PLAN_OPTIMIZER,
    GM_PLAN_KV_CACHE,
    GM_PLAN_ACTIVATIONS,
    GM_PLAN_WORKSPACE,
    GM_PLAN_ROLE_COUNT
} gm_plan_role;

const char *gm_plan_role_name(gm_plan_role r);   /* "weights", "kv_cache", ... */

typedef struct {
    gm_plan_mode mode;
    gm_precision prec;      /* weights, activations, KV cache; fp32 master and optimizer */
    uint64_t batch;         /* per data-parallel rank */
    uint64_t seq;
    bool logits_all;        /* inference: logits of every position, else the last */
    bool naive;             /* attention keeps the s x s scores; else tiled (flash) */
    gm_optimizer optimizer;
    gm_recompute recompute;
    uint64_t gpus;          /* N >= 1 */
    uint64_t tp;            /* tensor-parallel degree T, divides N */
    int zero;               /* 0..3 over the N / T data-parallel ranks */
    /* Per-role precisions over prec (inference): 0 = prec, else the
     * precision + 1. int4 weights: the layers' matrices packed two a byte
     * with one fp16 scale per group_size rows (0: 128) along the input
     * dimension; embeddings, LM head, norms, biases and routers in the
     * activations' precision, the LM head in int4 too with int4_lm_head
     * (an untied head only: a tied one is the embedding). */
    unsigned weight_prec, kv_prec, act_prec;
    uint64_t group_size;
    bool int4_lm_head;
    gm_tune_opts tune;      /* training modes */
    /* The vendor path's workspaces (a whole model's products by the
     * vendor GEMM: bench/workloads/model_*.c): attention's score chunk
     * where gm_plan_attention_by_gemm, int4 weights dequantised a matrix
     * at a time. */
    bool vendor_gemm;
} gm_plan_opts;

/* Defaults: inference, fp32, batch 1, seq 512, last logits, tiled, AdamW,
 * no recomputation, one GPU. */
void gm_plan_opts_init(gm_plan_opts *o);

#define GM_PLAN_MAX_ITEMS 24

typedef struct {
    const char *name;
    gm_plan_role role;
    uint64_t bytes;
    bool host;              /* in host memory (offload), not on the GPU */
} gm_plan_item;

/* The bytes one GPU holds at its peak, one item per tensor group. Returns
 * the count (<= GM_PLAN_MAX_ITEMS); -1 if the options are inconsistent
 * (mode serve: serve_plan.h; tp does not divide gpus, int8 training, int4_lm_head without int4
 * weights or with a tied head). */
int gm_plan_model(const gm_arch *a, const gm_plan_opts *o, gm_plan_item *out);

/* Bytes of the whole model's weights with the layers' matrices in int4
 * (packed and their fp16 group scales), and with `lm_head` the untied LM
 * head [h, V] too (after them), the other parameters at `other_elem`
 * bytes, before any tensor-parallel split. */
void gm_plan_int4_weights(const gm_arch *a, uint64_t group, bool lm_head, size_t other_elem, uint64_t *packed,
                          uint64_t *scales, uint64_t *other);

/*
 * The vendor path's attention: per sequence and chunk of query rows, QK^T
 * as batched GEMMs into fp32 scores, a softmax into probabilities in the
 * activations' precision, and PV as batched GEMMs, where the activations
 * and the KV cache share a precision the vendor GEMMs take (fp32, fp16,
 * bf16); elsewhere the tiled kernel. The chunk: the largest power of two
 * of query rows, at most s, whose scores and probabilities for every head,
 * heads * rows * s * (4 + e) bytes, fit GM_PLAN_SCORE_BUDGET (1 row at
 * least); gm_plan_attention_scratch is that many bytes (heads shared over
 * tp ranks).
 */
#define GM_PLAN_SCORE_BUDGET ((uint64_t)256 << 20)
bool gm_plan_attention_by_gemm(gm_precision act, gm_precision kv);
uint64_t gm_plan_attention_rows(uint64_t heads, uint64_t s, size_t e);
uint64_t gm_plan_attention_scratch(const gm_arch *a, uint64_t s, size_t e, uint64_t tp);
/* int4 weights on the vendor path: the largest layer matrix, dequantised
 * into e-byte elements before its GEMM (an int4 LM head runs our fused
 * kernel: its rows are each sequence's last token). */
uint64_t gm_plan_int4_dequant(const gm_arch *a, size_t e, uint64_t tp);

/* Sum of the device's items among n (host items are left out), saturating. */
uint64_t gm_plan_sum(const gm_plan_item *it, int n);
/* Sum of the host's items among n (offload), saturating. */
uint64_t gm_plan_host_sum(const gm_plan_item *it, int n);

/* Activation bytes one layer keeps for the backward pass (training), on
 * one of `tp` tensor-parallel ranks, at batch b and sequence s. */
uint64_t gm_layer_train_activations(const gm_arch *a, uint64_t b, uint64_t s, size_t e, bool naive,
                                    gm_recompute r, uint64_t tp);


/* The largest batch (at o->seq) and the largest sequence length (at
 * o->batch), each at most 2^24 and the sequence at most the model's
 * context (a->context, where known), whose total fits in `budget` bytes;
 * 0 where not even 1 fits. */
void gm_plan_fit(const gm_arch *a, const gm_plan_opts *o, uint64_t budget, uint64_t *max_batch, uint64_t *max_seq);

#endif
