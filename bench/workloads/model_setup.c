/* The whole model's set-up and teardown (bench/workloads/model_private.h). */
#include "bench/workloads/model_private.h"
#include "bench/workloads/kernel_calls.h"
#include "bench/model/mem_plan.h"
#include "bench/model/precision_roles.h"
#include "bench/workloads/peak.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void block_model_teardown(void *state)
{
    model_state *st = state;
    if (!st)
        return;
    for (int i = 0; i < N_B; i++)
        gm_device_free(st->dev, &st->buf[i]);
    gm_kernel *ks[] = {st->k_attn,  st->k_softmax, st->k_init, st->k_fill,   st->k_master, st->k_embed,
                       st->k_norm,  st->k_swiglu,  st->k_lse,  st->k_lm,     st->k_lm4,    st->k_adamw,
                       st->k_kv,    st->k_scales,  st->k_pack,   st->k_attn_verify};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i])
            st->dev->backend->kernel_release(st->dev, ks[i]);
    gm_program *ps[] = {st->p_attn, st->p_model, st->p_block};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        if (ps[i])
            st->dev->backend->program_release(st->dev, ps[i]);
    model_train_release(st);
    model_nf4_release(st);
    model_pcheck_release(st);
    gm_device_free(st->dev, &st->attn_verdict);
    gm_device_free(st->dev, &st->attn_worst);
    gm_mm_ctx_release(&st->mm);
    free(st);
}

static gm_status build(model_state *st)
{
    gm_device *dev = st->dev;
    char variant[32], kv[48];
    gm_kernel_variant(st->p, st->chunked, variant, sizeof variant);
    gm_role_variant(st->p, st->p, st->kp, st->chunked, kv, sizeof kv);
    gm_status rc = gm_mm_ctx_init(&st->mm, dev, st->p, st->int4 ? GM_INT4 : st->p, st->vendor && !st->ours_only);
    st->mm.dequant = st->vendor && st->int4 ? &st->buf[B_DEQUANT] : NULL;
    if (rc == GM_OK)
        rc = dev->backend->program_build(dev, "attention", kv, NULL, &st->p_attn);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, st->p_attn, "attention_tiled", &st->k_attn);
    if (rc == GM_OK && st->attn_gemm)
        rc = dev->backend->kernel_get(dev, st->p_attn, "attention_softmax_rows", &st->k_softmax);
    if (rc == GM_OK)
        rc = dev->backend->program_build(dev, "model", variant, NULL, &st->p_model);
    /* block.cl: the conversion into an fp8 KV cache and the int4 quantiser. */
    if (rc == GM_OK && (st->int4 || st->kp != st->p)) {
        rc = dev->backend->program_build(dev, "block", kv, NULL, &st->p_block);
        static const char *const bnames[] = {"block_kv_store", "block_int4_scales", "block_int4_pack"};
        gm_kernel **bks[] = {&st->k_kv, &st->k_scales, &st->k_pack};
        for (size_t i = 0; i < sizeof bnames / sizeof bnames[0] && rc == GM_OK; i++)
            rc = dev->backend->kernel_get(dev, st->p_block, bnames[i], bks[i]);
    }
    const char *const names[] = {"model_init", "model_fill_f32", "model_master_init", "model_embed",
                                 st->chunked ? "model_rmsnorm" : "model_rmsnorm_rows", "model_swiglu", "model_lse", "model_lm_head",
                                 "model_lm_head_int4", "model_adamw"};
    gm_kernel **ks[] = {&st->k_init, &st->k_fill, &st->k_master, &st->k_embed, &st->k_norm,
                        &st->k_swiglu, &st->k_lse, &st->k_lm, &st->k_lm4, &st->k_adamw};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && rc == GM_OK; i++)
        rc = dev->backend->kernel_get(dev, st->p_model, names[i], ks[i]);
    return rc;
}

#define SEED_LORA_A 613u
#define SEED_LORA_B 617u

/* LoRA: adapters (A as the base's projections, B in a small seeded range:
 * model_lora.c), master copies and moments. */
static gm_status lora_init(model_state *st)
{
    gm_status rc = GM_OK;
    float rb = 0.25f * ldexpf(1.0f, -(int)lround(0.5 * log2((double)st->rank)));
    for (uint64_t l = 0; l < st->L && rc == GM_OK; l++)
        for (int m = 0; m < N_LAYER_M && rc == GM_OK; m++) {
            if (!model_lora_adapted(st, m))
                continue;
            uint64_t in = model_in(st, m), out = model_out(st, m), p = model_lora_param(st, m, l);
            rc = model_init_region(st, (loc){&st->buf[B_AD], p}, in * st->rank, p, SEED_LORA_A, st->range[m], 0.0f,
                                   1.0f);
            if (rc == GM_OK)
                rc = model_init_region(st, (loc){&st->buf[B_AD], p + in * st->rank}, st->rank * out, p, SEED_LORA_B,
                                       rb, 0.0f, 1.0f);
        }
    if (st->zoff)       /* moments and master copies in host memory */
        return rc == GM_OK ? model_offload_init(st) : rc;
    uint64_t n2 = 2 * st->lora_p, zero_off = 0, n = st->lora_p;
    float zero = 0.0f;
    gm_arg f[] = {gm_arg_buf(&st->buf[B_AMOM]), gm_arg_u64(&zero_off), gm_arg_u64(&n2), gm_arg_f32(&zero)};
    if (rc == GM_OK)
        rc = model_launch(st, st->k_fill, (size_t)n2, f, 4);
    gm_arg c[] = {gm_arg_buf(&st->buf[B_AD]), gm_arg_buf(&st->buf[B_AMASTER]), gm_arg_u64(&zero_off), gm_arg_u64(&n)};
    if (rc == GM_OK && st->master)
        rc = model_launch(st, st->k_master, (size_t)n, c, 4);
    return rc;
}

/* Weights (and in train mode master weights and moments; the gradients
 * are the set-up step's, model_backward.c). */
static gm_status initialise(model_state *st)
{
    gm_status rc = GM_OK;
    for (uint64_t l = 0; l < st->L && rc == GM_OK; l++)
        for (int m = 0; m < N_LAYER_M && rc == GM_OK; m++)
            rc = model_init_matrix(st, m, l);
    if (rc == GM_OK)
        rc = model_init_matrix(st, M_EMB, 0);
    if (rc == GM_OK)
        rc = model_init_matrix(st, M_FINAL, 0);
    if (rc == GM_OK && !st->tied)
        rc = model_init_matrix(st, M_LM, 0);
    if (!st->train || rc != GM_OK)
        return rc;
    if (rc == GM_OK && st->nf4)
        rc = model_nf4_init(st);
    if (st->lora)
        return rc == GM_OK ? lora_init(st) : rc;
    if (st->zoff)
        return rc == GM_OK ? model_offload_init(st) : rc;
    uint64_t n2 = 2 * st->p_total, zero_off = 0;
    float zero = 0.0f;
    gm_arg f[] = {gm_arg_buf(&st->buf[B_MOM]), gm_arg_u64(&zero_off), gm_arg_u64(&n2), gm_arg_f32(&zero)};
    rc = model_launch(st, st->k_fill, (size_t)n2, f, 4);
    for (int part = 0; part < 2 && rc == GM_OK && st->master; part++) {
        if (part == 1 && st->tied)
            break;
        uint64_t n = part ? st->h * st->V : st->p_main, off = part ? st->p_main : 0;
        gm_arg a[] = {gm_arg_buf(&st->buf[part ? B_LM : B_W]), gm_arg_buf(&st->buf[B_MASTER]), gm_arg_u64(&off),
                      gm_arg_u64(&n)};
        rc = model_launch(st, st->k_master, (size_t)n, a, 4);
    }
    return rc;
}

/* Does the vendor (impl) refuse the model at s? Sets why. The model's
 * int8 and fp8 products run our kernels: their int8 codes out and [in,
 * out] weights are not what the vendor's "TN" GEMMs take. */
static bool vendor_refuses(gm_device *dev, const gm_shape *s, const char *impl, char *why, size_t len)
{
    if (s->prec != GM_FP32 && s->prec != GM_FP16 && s->prec != GM_BF16) {
        snprintf(why, len, "%s: the whole model's %s products run our kernels (the vendor's int8 GEMM writes int32 "
                 "sums and its fp8 GEMM takes weights [out, in]; the model holds int8 codes of [in, out])", impl,
                 gm_precision_name(s->prec));
        return true;
    }
    gm_gemm g = {.prec = s->prec, .m = 64, .n = 64, .k = 64};
    if (!dev->backend->blas_plan || dev->backend->blas_plan(dev, &g) != GM_OK) {
        snprintf(why, len, "%s: %s", impl, dev->backend->blas_plan ? dev->err.msg : "this backend has no vendor GEMM");
        return true;
    }
    return false;
}

gm_status block_model_setup(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state)
{
    *state = NULL;
    const gm_arch *a = &s->arch;
    const char *why = model_unsupported(a);
    if (why)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: %s is not run on the device (plan counts it)", a->name, why);
    const bool qlora = s->tune == GM_PLAN_QLORA, trains = s->train || s->tune == GM_PLAN_LORA || qlora;
    if (trains && s->prec == GM_INT8)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "int8 training is not run (plan refuses it too)");
    gm_precision wp = qlora ? s->prec : gm_weight_prec(s), kp = gm_kv_prec(s);
    if (trains && (wp != s->prec || kp != s->prec))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "--mode train runs one precision for every role (plan "
                              "counts training so)");
    char head_why[300];
    if (gm_int4_lm_head_check("block", s, head_why, sizeof head_why))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s", head_why);
    uint64_t group = gm_group_size(s), ad = a->heads * a->head_dim;
    if (wp == GM_INT4 && (a->hidden % group || ad % group || a->ffn % group || a->hidden % 2))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: int4 weights need hidden (%llu), heads * head_dim "
                              "(%llu) and intermediate (%llu) multiples of --group-size %llu, hidden even", a->name,
                              (unsigned long long)a->hidden, (unsigned long long)ad, (unsigned long long)a->ffn,
                              (unsigned long long)group);
    if (s->checkpoint || s->offload || s->micro_batch != s->batch)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "--checkpoint, --offload and --micro-batch apply to "
                              "a block of the shape options, not to a whole model");
    /* Training keeps the attention's row statistics in the logits' space
     * (T * 2 * heads floats in T * vocab). */
    if (trains && a->vocab < 2 * a->heads)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: --mode train needs a vocabulary of at least twice the "
                              "heads", a->name);
    if (trains && model_train_unsupported(s))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: %s", a->name, model_train_unsupported(s));
    if (trains && model_offload_unsupported(s))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: %s", a->name, model_offload_unsupported(s));
    uint64_t T = s->batch * s->seq, wide = a->heads * a->head_dim > a->ffn ? a->heads * a->head_dim : a->ffn;
    /* linear.cl indexes a product's operands in 32 bits (the LM head's
     * kernel does not; offsets are 64-bit): the tokens an iteration runs
     * must fit. On the vendor path, where the vendor runs every product
     * and attention (no int4 weights, no KV cache of its own precision),
     * cuBLAS's int rows are the limit. */
    uint64_t run_seq = s->probe ? gm_probe_tokens(s) : s->seq;
    uint64_t run_T = s->probe ? run_seq : T;
    bool all_vendor = model_is_vendor(impl) && strcmp(impl, "gemm-ours") != 0 && wp != GM_INT4
                      && gm_plan_attention_by_gemm(s->prec, kp);
    if (all_vendor ? run_T > INT32_MAX
                   : run_T * 2 * wide > UINT32_MAX || run_T * a->hidden > UINT32_MAX || s->batch * a->heads > UINT32_MAX)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "a pass's activations must fit %s indices",
                              all_vendor ? "the vendor's 31-bit" : "32-bit");
    /* "gemm-ours" (tests): the vendor implementation's path, its attention
     * by GEMMs and its workspaces, with our kernels in every product, so
     * that a device without the vendor's precision runs that path. */
    bool ours_only = strcmp(impl, "gemm-ours") == 0;
    if (model_is_vendor(impl) && !ours_only) {
        char refusal[300];
        if (vendor_refuses(dev, s, impl, refusal, sizeof refusal))
            return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s", refusal);
    }
    model_state *st = calloc(1, sizeof *st);
    if (!st)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    st->model = true;
    st->dev = dev;
    st->s = *s;
    st->a = *a;
    st->p = s->prec;
    st->es = gm_precision_size(s->prec);
    st->kp = kp;
    st->kes = gm_precision_size(kp);
    st->int4 = wp == GM_INT4;
    st->int4_head = st->int4 && s->int4_lm_head && !a->tied;
    st->group = group;
    st->chunked = gm_device_prefers_chunked(dev);
    st->train = trains;
    st->lora = s->tune == GM_PLAN_LORA || qlora;
    st->nf4 = qlora;
    st->recompute = trains ? s->recompute : 0;
    st->master = trains && st->es < 4;
    st->zoff = trains && s->zero_offload == GM_OFFLOAD_OPTIMIZER;
    if (st->lora) {
        double alpha;
        st->lora_m = model_lora_matrices(s, &st->n_adapted, &st->rank, &alpha);
        st->lora_scale = (float)(alpha / (double)st->rank);
        st->lora_p = model_lora_params(s);
        const char *fault = getenv("GPUMEM_FAULT");
        st->lora_fault = fault && strcmp(fault, "lora-backward") == 0;
        st->nf4_fault = st->nf4 && fault && strcmp(fault, "nf4-dequant") == 0;
    }
    st->tied = a->tied;
    st->vendor = model_is_vendor(impl);
    st->ours_only = ours_only;
    st->attn_gemm = st->vendor && gm_plan_attention_by_gemm(st->p, kp);
    st->attn_rows = gm_plan_attention_rows(a->heads, s->seq, st->es);
    st->h = a->hidden;
    st->d = a->head_dim;
    st->heads = a->heads;
    st->kv_heads = a->kv_heads;
    st->ad = a->heads * a->head_dim;
    st->kd = a->kv_heads * a->head_dim;
    st->I = a->ffn;
    st->V = a->vocab;
    st->L = a->layers;
    st->b = s->batch;
    st->seq = s->seq;
    st->T = T;
    st->run_b = s->probe ? 1 : s->batch;
    st->run_seq = run_seq;
    st->run_T = st->run_b * run_seq;
    st->per_layer = model_layer_elems(a);
    st->int4_layer = (st->per_layer - 2 * st->h) / 2;
    st->p_main = st->V * st->h + st->L * st->per_layer + st->h;
    st->p_total = gm_arch_params(a);
    gm_status rc = st->p_main + (st->tied ? 0 : st->h * st->V) == st->p_total
                       ? GM_OK
                       : gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: parameters other than a Llama layout's",
                                        a->name);
    /* Weights uniform in [-r, r) with r the power of two nearest
     * 1/sqrt(fan-in) (activations keep their scale), the embedding in
     * [-1, 1), norm weights in [0.75, 1.25). */
    for (int m = 0; m < N_M; m++) {
        uint64_t fan_in = m == M_EMB ? 1 : m == M_LM ? st->h : model_in(st, m);
        st->range[m] = ldexpf(1.0f, -(int)lround(0.5 * log2((double)fan_in)));
        st->add[m] = 0.0f;
    }
    st->range[M_NORM1] = st->range[M_NORM2] = st->range[M_FINAL] = 0.25f;
    st->add[M_NORM1] = st->add[M_NORM2] = st->add[M_FINAL] = 1.0f;
    /* The device's peak for MFU, measured (where no datasheet says it)
     * before the model's tensors take the memory; not in an oom probe. */
    if (rc == GM_OK && !s->probe)
        rc = gm_peak(dev, st->p, &st->peak, st->peak_basis, sizeof st->peak_basis);
    gm_tensor t[GM_MAX_TENSORS];
    int ids[GM_MAX_TENSORS];
    int nt = model_tensor_list(s, t, ids);
    for (int i = 0; i < nt && rc == GM_OK; i++)
        rc = gm_pattern_alloc(pat, (size_t)t[i].bytes, &st->buf[ids[i]]);
    if (rc == GM_OK && st->zoff)
        rc = model_offload_alloc(st);
    if (rc == GM_OK)
        rc = build(st);
    if (rc == GM_OK)
        rc = initialise(st);
    /* Training: the first step's gradients, for the first iteration's AdamW. */
    if (rc == GM_OK && st->train)
        rc = model_train_setup(st);
    if (rc == GM_OK && st->train)
        rc = model_forward_pass(st);
    if (rc == GM_OK && st->train)
        rc = model_loss(st);
    if (rc == GM_OK && st->train)
        rc = model_backward(st);
    if (rc == GM_OK)
        rc = dev->backend->synchronize(dev, 0);
    /* A product fault strikes from the first timed iteration on: set-up's
     * training step, whose gradients the first iteration's AdamW applies,
     * would leave the weights themselves wrong before any check. */
    if (rc == GM_OK)
        rc = model_product_fault_setup(st);
    if (rc != GM_OK) {
        gm_error saved = dev->err;
        block_model_teardown(st);
        dev->err = saved;
        return rc;
    }
    *state = st;
    return GM_OK;
}

