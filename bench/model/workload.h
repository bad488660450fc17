/*
 * ML workloads: one descriptor each (gm_workload), and their memory model.
 * A workload declares the tensors it holds as a function of its shape
 * (name, role, bytes): that list is the memory model `gpumem plan` prints and the sweeps compare with what the
 * device really held.
 */
#ifndef GM_WORKLOAD_H
#define GM_WORKLOAD_H

#include "bench/model/arch.h"
#include "device/device.h"
#include "lib/precision.h"
#include "run/results.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    GM_ROLE_WEIGHT,
    GM_ROLE_ACTIVATION,
    GM_ROLE_KV_CACHE,
    GM_ROLE_WORKSPACE,
} gm_tensor_role;

const char *gm_tensor_role_name(gm_tensor_role r);

typedef struct {
    char name[32];
    gm_tensor_role role;
    uint64_t bytes;
} gm_tensor;

/* Tokens of its first sequence a whole model's oom probe runs and
 * verifies (gm_shape.probe) with our kernels: the whole sequence up to
 * this length (with the vendor's GEMMs, the whole sequence: see
 * gm_probe_tokens). The answer is the memory's (every tensor of the batch
 * is allocated whatever this is), and every weight matrix is read whole at
 * any token count; on an H100 512 tokens of Llama-3-8B took our kernels
 * 10 s to run and 12.5 s to verify a probe, most of make bench's time. */
#define GM_PROBE_TOKENS 128u

/* The shape of one point. Unused fields are ignored by a workload. */
typedef struct {
    gm_precision prec;
    uint64_t batch, seq;
    uint64_t hidden;        /* model width */
    uint64_t heads, head_dim;
    uint64_t out;           /* linear: output features (default hidden) */
    uint64_t ffn;           /* block: MLP width (default 4 * hidden) */
    uint64_t layers;
    uint64_t micro_batch;   /* block: rows of the batch live at once (0 = batch) */
    uint64_t block_tokens;  /* kvcache: tokens per block when paged */
    bool causal, checkpoint, paged;
    bool offload;           /* block: weights in host memory, two layers on the device */
    bool naive;             /* attention: materialise the score matrix */
    bool int32_out;         /* linear: y holds int32 accumulators (the vendor's int8 GEMM) */
    /* --model PRESET or config.json: the whole architecture (arch.layers
     * is 0 for the shape options alone); block runs it (bench/workloads/model_*.c). */
    gm_arch arch;
    bool train;             /* --mode train: training state and an AdamW step */
    /* --recompute: a gm_recompute (mem_plan.h) of the whole model's training
     * step (bench/workloads/model_backward.c); 0, none, elsewhere. */
    unsigned recompute;
    /* --mode lora or qlora: the gm_plan_mode (0 otherwise). The device
     * runs LoRA's step on a whole model it runs (bench/workloads/
     * model_lora.c); elsewhere block answers unsupported, its tensors
     * plan's (gm_tune_tensors). */
    unsigned tune;
    /* --lora-rank, --lora-alpha, --lora-targets (bit gm_lora_target);
     * 0: plan's defaults (bench/model/train_plan.h). */
    uint64_t lora_rank;
    double lora_alpha;
    unsigned lora_targets;
    /* --zero-offload: a gm_offload (mem_plan.h) of the whole model's
     * training step (bench/workloads/model_offload.c), 0 (none) elsewhere;
     * --host-memory: the host memory the offloaded states must fit in (0:
     * this host's). */
    unsigned zero_offload;
    uint64_t host_memory;
    /* An oom probe (bench/oom/probe.h): every tensor of the batch is allocated
     * as ever, but a whole model (gm_probe_runs_one_sequence) runs and
     * verifies the batch's first sequence only, and of it with our kernels
     * the first GM_PROBE_TOKENS tokens (gm_probe_tokens), so that a probe's
     * time grows neither with the memory searched nor with the sequence
     * length (a Llama-3-8B probe at seq 8192 runs some 160 TFLOP twice,
     * timed and replayed by the check: a fraction of a second with the
     * vendor's GEMMs, minutes with ours). Other workloads run it all. */
    bool probe;
    /* Per-role precisions (bench/model/precision_roles.h): 0 = prec, else the
     * precision + 1. act_prec only in the options' base shape. */
    unsigned weight_prec, kv_prec, act_prec;
    unsigned sweep_prec;    /* the point's --precision value + 1 (gm_shape_set_roles) */
    uint64_t group_size;    /* int4 weights: rows of W per fp16 scale (0: 128) */
    /* int4 weights: a whole model's (untied) LM head in int4 too, not in
     * the activations' precision (gm_int4_lm_head_check says where). */
    bool int4_lm_head;
    /* --variant's pick of implementations (GM_PICK_*): ours, the vendor's,
     * all of them; GM_PICK_DEFAULT the workload's own choice. */
    unsigned impl_pick;
    /* A whole model's products by the vendor GEMM first (its vendor
     * implementation: block's adapt sets it): its tensors then hold the
     * vendor path's workspaces (bench/model/mem_plan.h). */
    bool vendor_gemm;
    /* --mode serve (bench/model/serve_plan.h, bench/workloads/serve.c): the
     * serving engine's budget options (0: vLLM's defaults), the KV pool's
     * blocks (0: the blocks `batch` requests of `seq` tokens take), the
     * tokens of each request decoded after its prompt (0: the default of
     * serve.c) and how a full pool preempts (GM_PREEMPT_* bits). */
    bool serve;
    double gpu_util;
    uint64_t max_batched_tokens, max_seqs, max_model_len;
    uint64_t kv_cache_memory, serve_reserve;
    uint64_t kv_blocks, output_tokens;
    uint64_t prefill_requests;  /* the serve suite: requests prefilled, the others copying the first's (0: all) */
    unsigned preempt;
} gm_shape;

enum { GM_PICK_DEFAULT, GM_PICK_OURS, GM_PICK_VENDOR, GM_PICK_ALL };

#define GM_PREEMPT_SWAP 1u          /* a victim's blocks to pinned host memory and back */
#define GM_PREEMPT_RECOMPUTE 2u     /* a victim's blocks dropped, its prefill run again */

/* Does s carry a whole architecture (--model PRESET)? */
#define gm_shape_has_arch(s) ((s)->arch.layers != 0)

/* The tensors of a --mode lora or qlora point of a whole model (s->tune),
 * or of a training point (s->train) with s->zero_offload, that the device
 * does not run: gm_plan_model's items on the device for its precision,
 * batch and sequence, with the LoRA defaults (bench/model/train_plan.h),
 * the offload and full recomputation where s->checkpoint. Returns the
 * count, or -1 (bytes overflow, a shape the plan refuses, more than
 * GM_MAX_TENSORS). */
int gm_tune_tensors(const gm_shape *s, gm_tensor *out);

/* " train", " lora", " qlora" for a point of that mode, "" for inference
 * (progress labels). */
const char *gm_mode_label(const gm_shape *s);

/* Fills in defaults that depend on other fields (out, ffn, head_dim...). */
void gm_shape_complete(gm_shape *s);

#define GM_MAX_TENSORS 32
#define GM_MAX_IMPLS 4

struct gm_pattern;
struct gm_output_fault;

/*
 * One workload: its name, its memory model, and how to run and verify one
 * iteration on a device. Each is defined in its own file, bench/workloads/NAME.c, as
 * `const gm_workload gm_workload_NAME`, with its kernel in kernels/NAME.cl,
 * and listed once in GM_WORKLOAD_LIST.
 */
typedef struct gm_workload {
    const char *name;               /* as in gm_runnable_workloads */
    const char *summary;
    /* Does the memory model use heads and head_dim (so --hidden must be a
     * multiple of --heads)? */
    bool uses_heads;
    /* Does it run --mode train (the suites pass over the others)? */
    bool trains;
    /* Does it run a whole --model architecture (bench/workloads/model_*.c) when
     * the shape has one? Such a point's oom probe runs one sequence
     * (gm_shape.probe). */
    bool runs_whole_model;
    /* Does it run --mode serve, and that mode alone? */
    bool serves;
    /* The tensors held at once for shape s, at most GM_MAX_TENSORS.
     * Returns the count, or -1 if a size overflows 64 bits. */
    int (*tensors)(const gm_shape *s, gm_tensor *out);
    /* The implementations to run on dev at shape s (its precision s->prec,
     * --variant's pick s->impl_pick): our kernel chosen for the device type,
     * then the vendor BLAS where it applies (gm_impls_pick). */
    int (*impls)(const gm_device *dev, const gm_shape *s, const char **out);
    /* Sets what the implementation changes in the shape's memory model
     * (attention: naive holds the score matrix). May be NULL. */
    void (*adapt)(gm_shape *s, const char *impl);
    /* Takes the device tensors of the memory model from the pattern (in the
     * model's order), fills the inputs and builds the kernels. On failure
     * returns the status with dev->err set; *state is then NULL. */
    gm_status (*setup)(gm_device *dev, struct gm_pattern *pat, const gm_shape *s, const char *impl, void **state);
    /* Enqueues one iteration on queue 0 (the suite times it). */
    gm_status (*enqueue)(void *state);
    /* Test-only fault (bench/output_fault.h): strikes one element of the
     * whole output on the device, the one fault f picks for repetition
     * rep, flipping only bits the check must see where it flips one. */
    gm_status (*corrupt)(void *state, const struct gm_output_fault *f, unsigned rep);
    /* Reads the output back and checks it against the CPU reference (every
     * element for small outputs, a seeded sample for large). */
    gm_status (*verify)(void *state, unsigned rep, bool *correct, char *note, size_t note_len);
    /* Reads the output tensor back as n floats (after an iteration), so
     * that tests can compare implementations. May be NULL. */
    gm_status (*output)(void *state, float *dst, size_t n);
    /* Work done by one iteration. */
    void (*work)(const gm_shape *s, double *flops, double *bytes, double *tokens);
    /* Optional: what every row of the point says besides its figures
     * (which implementation ran each part), after its timed repetitions
     * and their checks; it may time further work of its own on queue 0
     * and say it (the whole model's training rows: the forward pass
     * beside the step, model_time_forward_and_step). */
    void (*describe)(void *state, char *note, size_t note_len);
    /* Optional: model FLOPs utilization's parts, the model FLOPs of one
     * iteration and the device's dense peak in FLOP/s for them, with the
     * convention and the peak's source in `basis`; false where there is no
     * peak (basis says why). */
    bool (*utilization)(void *state, double *model_flops, double *peak, char *basis, size_t basis_len);
    /* Optional: whether the point's iteration works on the host too (a
     * whole model's --zero-offload step); where it does, the last
     * iteration's blocking transfers between host and device and its host
     * work (wall time, ms) and the bytes it holds in host memory. The
     * suite times such a point with its queue unheld (bench.h), so that
     * the iteration's time spans its host parts. */
    bool (*host_parts)(void *state, double *transfer_ms, double *host_ms, uint64_t *host_bytes);
    void (*teardown)(void *state);
} gm_workload;

/*
 * THE list of workloads, one X(NAME) each, in the bit order of --workload.
 * Adding a workload: bench/workloads/NAME.c (its descriptor), kernels/NAME.cl, and
 * one entry here. Everything else (names, count, lookup) derives from it.
 */
#define GM_WORKLOAD_LIST(X) X(linear) X(attention) X(block) X(kvcache) X(serve)

#define GM_WORKLOAD_DECLARE_(n) extern const gm_workload gm_workload_##n;
GM_WORKLOAD_LIST(GM_WORKLOAD_DECLARE_)
#undef GM_WORKLOAD_DECLARE_

#define GM_WORKLOAD_COUNT_ONE_(n) +1
/* How many workloads there are (a constant expression). */
#define GM_WORKLOAD_COUNT (0 GM_WORKLOAD_LIST(GM_WORKLOAD_COUNT_ONE_))

/* Does an oom probe of workload w at shape s run only the batch's first
 * sequence (a whole model, gm_shape.probe)? */
#define gm_probe_runs_one_sequence(w, s) ((w)->runs_whole_model && gm_shape_has_arch(s))
/* Does a training point of w at s step AdamW over synthetic gradients
 * (GM_TRAIN_NOTE), without a backward pass? The whole model computes its
 * backward (bench/workloads/model_backward.c). */
#define gm_train_synthetic(w, s) ((s)->train && !gm_probe_runs_one_sequence((w), (s)))
/* The tokens of that sequence such a probe runs: all of them where the
 * vendor GEMM runs the model's products (gm_shape.vendor_gemm: a card's
 * vendor GEMMs run a whole sequence of thousands of tokens in under a
 * second), else up to GM_PROBE_TOKENS (our kernels'). */
#define gm_probe_tokens(s) ((s)->vendor_gemm || (s)->seq <= GM_PROBE_TOKENS ? (s)->seq : (uint64_t)GM_PROBE_TOKENS)

/* The implementations a workload offers, our kernel `ours` and the
 * vendor's `vendor` (NULL: none), as s->impl_pick picks them: ours alone,
 * the vendor's alone (none where there is none), all, or by default
 * (GM_PICK_DEFAULT) all when `one` is NULL, else `one` alone (the one the
 * workload prefers on the device). Returns the count written to out. */
int gm_impls_pick(const gm_shape *s, const char *ours, const char *vendor, const char *one, const char **out);

/* Does workload w run in mode m (a gm_plan_mode: inference, train,
 * serve)? A serving workload runs serve alone; every other workload runs
 * inference, and train where w->trains. */
bool gm_workload_in_mode(const gm_workload *w, int m);

/* The names of GM_WORKLOAD_LIST in its order (the bit order of
 * --workload); the descriptors themselves: bench/workloads/registry.h. */
extern const char *const gm_runnable_workloads[];
#define GM_RUNNABLE_WORKLOAD_COUNT GM_WORKLOAD_COUNT

/* Builds a tensor list for a tensors hook, refusing sizes that wrap:
 * gm_tensor_list_add appends one (at most GM_MAX_TENSORS), gm_tensor_mul
 * multiplies element counts, gm_tensor_list_finish returns the count or -1
 * if anything overflowed. */
typedef struct {
    gm_tensor *t;
    int n;
    bool overflow;
} gm_tensor_list;

uint64_t gm_tensor_mul(gm_tensor_list *l, uint64_t a, uint64_t b);
void gm_tensor_list_add(gm_tensor_list *l, const char *name, gm_tensor_role role, uint64_t elems, uint64_t elem_size);
int gm_tensor_list_finish(const gm_tensor_list *l);

/* Sum of bytes over n tensors (UINT64_MAX on overflow). */
uint64_t gm_tensors_total(const gm_tensor *t, int n);

#endif
