/*
 * The block workload's descriptor: a whole model (--model PRESET or a
 * config.json) runs in bench/workloads/model_*.c, a shape of blocks
 * in bench/workloads/block_shape.c (checked by block_check.c); the
 * state's first member tells the two apart.
 */
#include "bench/workloads/block_private.h"
#include "bench/workloads/block_model.h"
#include "bench/model/mem_plan.h"

static bool is_model(const void *state) { return state && *(const bool *)state; }

static int block_impls_any(const gm_device *dev, const gm_shape *s, const char **out)
{
    return gm_shape_has_arch(s) ? block_model_impls(dev, s, out) : block_impls(dev, s, out);
}

static void block_adapt_any(gm_shape *s, const char *impl)
{
    if (gm_shape_has_arch(s))
        block_model_adapt(s, impl);
    else
        block_adapt(s, impl);
}

static int block_tensors(const gm_shape *s, gm_tensor *out)
{
    if (s->tune && gm_shape_has_arch(s) && !model_lora_runs(s))
        return gm_tune_tensors(s, out);
    if ((s->train || s->tune) && gm_shape_has_arch(s) && model_offload_unsupported(s))
        return gm_tune_tensors(s, out);     /* plan's bytes for a step not run */
    return gm_shape_has_arch(s) ? block_model_tensors(s, out) : block_tensors_shape(s, out);
}

static gm_status block_setup(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state)
{
    if (s->tune && !model_lora_runs(s))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "--mode %s: the fine-tuning step is not run on the device "
                              "(gpumem plan --mode %s counts its memory)", gm_mode_label(s) + 1, gm_mode_label(s) + 1);
    if (gm_shape_has_arch(s))
        return block_model_setup(dev, pat, s, impl, state);
    if (s->train)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "--mode train needs a whole model (--model PRESET)");
    return block_setup_shape(dev, pat, s, impl, state);
}

static gm_status block_enqueue(void *state)
{
    return is_model(state) ? block_model_enqueue(state) : block_enqueue_shape(state);
}

static gm_status block_corrupt(void *state, const gm_output_fault *f, unsigned rep)
{
    return is_model(state) ? block_model_corrupt(state, f, rep) : block_corrupt_shape(state, f, rep);
}

static gm_status block_verify_any(void *state, unsigned rep, bool *correct, char *note, size_t len)
{
    return is_model(state) ? block_model_verify(state, rep, correct, note, len)
                           : block_verify(state, rep, correct, note, len);
}

static void block_work(const gm_shape *s, double *flops, double *bytes, double *tokens)
{
    if (gm_shape_has_arch(s))
        block_model_work(s, flops, bytes, tokens);
    else
        block_work_shape(s, flops, bytes, tokens);
}

static void block_describe(void *state, char *note, size_t len)
{
    if (is_model(state))
        block_model_describe(state, note, len);
}

static bool block_utilization(void *state, double *flops, double *peak, char *basis, size_t len)
{
    return is_model(state) && block_model_utilization(state, flops, peak, basis, len);
}

static bool block_host_parts(void *state, double *transfer_ms, double *host_ms, uint64_t *host_bytes)
{
    return is_model(state) && block_model_host_parts(state, transfer_ms, host_ms, host_bytes);
}

static void block_teardown(void *state)
{
    if (is_model(state))
        block_model_teardown(state);
    else
        block_teardown_shape(state);
}

const gm_workload gm_workload_block = {
    .name = "block",
    .summary = "transformer blocks: weights, activations, KV cache, workspace",
    .uses_heads = true,
    .trains = true,
    .runs_whole_model = true,
    .tensors = block_tensors,
    .impls = block_impls_any,
    .adapt = block_adapt_any,
    .setup = block_setup,
    .enqueue = block_enqueue,
    .corrupt = block_corrupt,
    .verify = block_verify_any,
    .work = block_work,
    .describe = block_describe,
    .utilization = block_utilization,
    .host_parts = block_host_parts,
    .teardown = block_teardown,
};
