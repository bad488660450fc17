/*
 * The block workload run with a whole architecture (--model PRESET or a
 * config.json, bench/model/arch.h): embeddings, every layer with grouped-query
 * attention, RMSNorm and the SwiGLU MLP, the final norm and the LM head;
 * with --mode train also the training state and an AdamW step. Its memory
 * model is bench/mem_plan's plan for the same point (bench/workloads/model_*.c).
 * bench/workloads/block.c dispatches to these hooks when the shape carries an arch.
 */
#ifndef GM_BLOCK_MODEL_H
#define GM_BLOCK_MODEL_H

#include "bench/workloads/runnable.h"

/* Our kernels ("tiled" on a GPU, "blocked" on a CPU device) and the
 * vendor's GEMM (blas_impl's name) where the model runs its products on
 * it in s->prec; by default the one faster on the device: the vendor's on
 * a GPU, ours on a CPU device (PoCL: CLBlast's SGEMM is slower than
 * linear_blocked). */
int block_model_impls(const gm_device *dev, const gm_shape *s, const char **out);
/* The vendor's implementation sets s->vendor_gemm (its workspaces). */
void block_model_adapt(gm_shape *s, const char *impl);
int block_model_tensors(const gm_shape *s, gm_tensor *out);
gm_status block_model_setup(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state);
gm_status block_model_enqueue(void *state);
gm_status block_model_corrupt(void *state, const struct gm_output_fault *f, unsigned rep);
gm_status block_model_verify(void *state, unsigned rep, bool *correct, char *note, size_t len);
void block_model_work(const gm_shape *s, double *flops, double *bytes, double *tokens);
void block_model_teardown(void *state);
/* The rows' note: what ran the projections, attention and the LM head. */
void block_model_describe(void *state, char *note, size_t len);
/* MFU's parts (gm_workload.utilization). */
bool block_model_utilization(void *state, double *flops, double *peak, char *basis, size_t len);
/* NULL where the device's training step runs --zero-offload of shape s
 * (none, or optimizer in a 16-bit precision: model_offload.c), else why
 * not. */
const char *model_offload_unsupported(const gm_shape *s);
/* The training step's host parts with --zero-offload (gm_workload.host_parts). */
bool block_model_host_parts(void *state, double *transfer_ms, double *host_ms, uint64_t *host_bytes);
/* Does the device run shape s's LoRA or QLoRA step (--mode lora or qlora
 * of a model it runs, fp32, fp16 or bf16, any --recompute; model_lora.c,
 * model_nf4.c)? Else its rows are unsupported and carry plan's bytes. */
bool model_lora_runs(const gm_shape *s);

#endif
