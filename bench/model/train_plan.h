/*
 * Fine-tuning's memory, per GPU: the optimizer states, LoRA and QLoRA
 * (adapters over a frozen base, the base in NF4 for QLoRA), the tensors
 * the backward keeps (gpumem's training step's, or PyTorch's eager
 * autograd's) and ZeRO-Offload's split between device and host memory.
 * gm_plan_model (mem_plan.h) hands these modes here; the formulas and
 * their sources are in train_plan.c and docs/training.md. Arithmetic
 * saturates (saturate.h).
 */
#ifndef GM_TRAIN_PLAN_H
#define GM_TRAIN_PLAN_H

#include "bench/model/mem_plan.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The defaults of gm_tune_opts: rank 16, alpha 2 r. */
#define GM_LORA_RANK_DEFAULT 16u

/* NF4 (QLoRA, bitsandbytes' layout): 4-bit codes two a byte, one 8-bit
 * absmax a block of GM_NF4_BLOCK weights, one fp32 scale of those a
 * GM_NF4_SCALE_BLOCK absmax values (double quantisation). */
#define GM_NF4_BLOCK 64u
#define GM_NF4_SCALE_BLOCK 256u

/* Optimizer state bytes for n parameters (not counting master weights). */
uint64_t gm_optimizer_bytes(gm_optimizer opt, uint64_t n);

/* Projection t's input and output widths in one layer (one expert's, for
 * the MLP's of a mixture of experts); false where the model has none (the
 * gate of a plain MLP). */
bool gm_lora_shape(const gm_arch *a, gm_lora_target t, uint64_t *in, uint64_t *out);

/* The adapted projections (bit t: gm_lora_target t): t->targets, or
 * every projection the model has when it is 0. */
unsigned gm_lora_targets(const gm_arch *a, const gm_tune_opts *t);

/* t->rank, or GM_LORA_RANK_DEFAULT. */
uint64_t gm_lora_rank(const gm_tune_opts *t);

/* t->alpha, or twice the rank. */
double gm_lora_alpha(const gm_tune_opts *t);

/* The adapters' trainable parameters: r (in + out) for each adapted
 * projection of each layer (and expert). */
uint64_t gm_lora_params(const gm_arch *a, const gm_tune_opts *t);

/* The whole model's weights with the layers' projections in NF4: their
 * codes, 8-bit absmax values and fp32 scales (bytes, each matrix
 * quantised on its own), and the other parameters (embedding, LM head,
 * norms, routers) at other_elem bytes each. */
void gm_plan_nf4_weights(const gm_arch *a, size_t other_elem, uint64_t *codes, uint64_t *absmax, uint64_t *scales,
                         uint64_t *other);

/* Activation bytes one layer keeps for the backward pass in mode o->mode
 * (train, lora, qlora) with o's targets, rank, precision, attention and
 * o->tune.saved, at batch b, sequence s and recomputation r, on one of
 * o->tp ranks. */
uint64_t gm_layer_tune_activations(const gm_arch *a, const gm_plan_opts *o, uint64_t b, uint64_t s, gm_recompute r);

/* The items of a LoRA or QLoRA plan, or of full fine-tuning as PyTorch's
 * autograd keeps it (o->tune.saved); the same contract as gm_plan_model. */
/* The bytes of gpumem's backward workspace at batch b, sequence s
 * (train_plan.c: the residual stream's gradient, the larger of the
 * attention's and the MLP's gradients, the fp32 1/rms of each row, and
 * for LoRA and QLoRA one adapter's d(x A)); the whole model's training
 * step lays out its buffers in exactly this many. */
uint64_t gm_plan_backward_workspace(const gm_arch *a, const gm_plan_opts *o, uint64_t b, uint64_t s);
/* The bytes of the token ids a full fine-tuning step uploads: each
 * token's target and the embedding backward's segments (gm_train_embed_
 * segments: the sorted positions, the segments' starts and tokens), 32-bit
 * each: 4 (4 b s + 1). */
uint64_t gm_plan_token_inputs(uint64_t b, uint64_t s);
/* The fp32 rotary tables of the device's training step at sequence s:
 * cos and sin of s positions x head_dim / 2, 4 s head_dim bytes (0 for
 * learned positions). */
uint64_t gm_plan_rope_tables(const gm_arch *a, uint64_t s);
int gm_plan_tune(const gm_arch *a, const gm_plan_opts *o, gm_plan_item *out);

/* Moves the items o->tune.offload puts in host memory there (host = true)
 * and adds what the device holds instead; returns the new count (n when
 * nothing is offloaded, -1 where it does not fit GM_PLAN_MAX_ITEMS). */
int gm_plan_offload(const gm_arch *a, const gm_plan_opts *o, gm_plan_item *out, int n);

/* Whether o's fine-tuning options suit model a: 0, or -1 with one line in
 * err naming the option (a rank above an adapted projection's width,
 * targets the model lacks, a QLoRA base that is not 4-bit). */
int gm_plan_tune_check(const gm_arch *a, const gm_plan_opts *o, char *err, size_t err_len);

#endif
