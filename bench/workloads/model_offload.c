/*
 * ZeRO-Offload's optimizer offload in the whole model's training step
 * (bench/workloads/model_private.h; Ren et al. 2021, "ZeRO-Offload",
 * section 4.1): the fp32 master weights, the AdamW moments and every
 * gradient live in pinned host memory, the step's AdamW runs on the host
 * (as DeepSpeed's CPU Adam does) and the updated weights go back to the
 * device in the compute precision. The device keeps the weights and one
 * module's gradients (plan's gradient_buffer, train_plan.c): the backward
 * writes a layer's (or the LM head's, the final norm's, the embedding's)
 * into it, and each module's are copied to the host before the next
 * module's are written.
 *
 * Transfers are blocking and come after the work queued before them has
 * finished, so that each is timed alone (wall time, st->xfer_ms); the
 * host's AdamW likewise (st->host_opt_ms). Nothing overlaps: a step's
 * time is its device compute, its transfers and its host AdamW in turn.
 *
 * The host's gradients are in the compute precision (plan's 2 bytes a
 * parameter for bf16): the host AdamW reads each and writes the updated
 * weight, rounded to the compute precision, in its place, and the weights
 * are copied to the device from there (no further host buffer).
 */
#include "bench/workloads/model_private.h"
#include "bench/bench.h"
#include "lib/precision.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *model_offload_unsupported(const gm_shape *s)
{
    if (!s->zero_offload)
        return NULL;
    if (s->zero_offload == GM_OFFLOAD_PARAMS)
        return "--zero-offload params: the device's step does not fetch each layer's weights from host memory "
               "before its forward and backward (gpumem plan counts its bytes); --zero-offload optimizer runs";
    if (s->prec != GM_FP16 && s->prec != GM_BF16)
        return "--zero-offload optimizer runs a 16-bit step (bf16, fp16): its host keeps the fp32 master weights "
               "that the device's weights are rounded from";
    return NULL;
}

/* Trainable parameters: the whole model's, or LoRA's adapters. */
static uint64_t trainable(const model_state *st) { return st->lora ? st->lora_p : st->p_total; }

static gm_buffer *device_grads(model_state *st) { return &st->buf[st->lora ? B_AGRAD : B_GRAD]; }

gm_buffer *model_grads(model_state *st) { return st->zoff ? &st->buf[B_HGRAD] : device_grads(st); }

loc model_grad_at(model_state *st, uint64_t p) { return (loc){device_grads(st), p - st->grad_base}; }

gm_status model_offload_alloc(model_state *st)
{
    const uint64_t P = trainable(st);
    gm_device *dev = st->dev;
    gm_status rc = gm_device_alloc(dev, GM_MEM_PINNED, (size_t)(P * st->es), &st->buf[B_HGRAD]);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_PINNED, (size_t)(P * 8), &st->buf[st->lora ? B_AMOM : B_MOM]);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_PINNED, (size_t)(P * 4), &st->buf[st->lora ? B_AMASTER : B_MASTER]);
    /* what was allocated in host memory */
    st->host_bytes = st->buf[B_HGRAD].bytes + st->buf[st->lora ? B_AMOM : B_MOM].bytes
                     + st->buf[st->lora ? B_AMASTER : B_MASTER].bytes;
    return rc;
}

/* Times one blocking copy after the work queued before it. */
static gm_status timed_copy(model_state *st, gm_buffer *dst, size_t dst_off, const gm_buffer *src, size_t src_off,
                            size_t bytes)
{
    gm_status rc = st->dev->backend->synchronize(st->dev, 0);
    double t0 = gm_now();
    if (rc == GM_OK)
        rc = st->dev->backend->copy(st->dev, 0, dst, dst_off, src, src_off, bytes, false);
    st->xfer_ms += (gm_now() - t0) * 1e3;
    return rc;
}

/* The weights of parameters [first, first + n) on the device (B_W, B_LM
 * or the adapters) copied to or from `host` at the same parameters. */
static gm_status weights_copy(model_state *st, gm_buffer *host, bool to_device)
{
    const size_t e = st->es;
    struct { int buf; uint64_t first, n; } part[2] = {{st->lora ? B_AD : B_W, 0, st->lora ? st->lora_p : st->p_main},
                                                      {B_LM, st->p_main, st->p_total - st->p_main}};
    gm_status rc = GM_OK;
    for (int i = 0; i < (st->lora ? 1 : 2) && rc == GM_OK; i++) {
        if (part[i].n == 0)
            continue;
        size_t bytes = (size_t)(part[i].n * e), at = (size_t)(part[i].first * e);
        rc = to_device ? timed_copy(st, &st->buf[part[i].buf], 0, host, at, bytes)
                       : timed_copy(st, host, at, &st->buf[part[i].buf], 0, bytes);
    }
    return rc;
}

static float load(const model_state *st, const unsigned char *at)
{
    if (st->p == GM_FP32) {
        float f;
        memcpy(&f, at, 4);
        return f;
    }
    uint16_t u;
    memcpy(&u, at, 2);
    return st->p == GM_BF16 ? gm_bf16_to_float(u) : gm_half_to_float(u);
}

static void store(const model_state *st, unsigned char *at, float f)
{
    if (st->p == GM_FP32) {
        memcpy(at, &f, 4);
        return;
    }
    uint16_t u = st->p == GM_BF16 ? gm_float_to_bf16(f) : gm_float_to_half(f);
    memcpy(at, &u, 2);
}

gm_status model_offload_init(model_state *st)
{
    const uint64_t P = trainable(st);
    unsigned char *w = st->buf[B_HGRAD].host;
    float *mv = st->buf[st->lora ? B_AMOM : B_MOM].host, *master = st->buf[st->lora ? B_AMASTER : B_MASTER].host;
    memset(mv, 0, (size_t)(2 * P) * sizeof *mv);
    /* the device's weights, through the gradients' place (free until the
     * first backward), into the fp32 master weights */
    gm_status rc = weights_copy(st, &st->buf[B_HGRAD], false);
    for (uint64_t p = 0; p < P && rc == GM_OK; p++)
        master[p] = load(st, w + p * st->es);
    return rc;
}

gm_status model_grad_flush(model_state *st, uint64_t first, uint64_t n, uint64_t next)
{
    if (!st->zoff)
        return GM_OK;
    gm_status rc = timed_copy(st, &st->buf[B_HGRAD], (size_t)(first * st->es), device_grads(st),
                              (size_t)((first - st->grad_base) * st->es), (size_t)(n * st->es));
    st->grad_base = next;
    return rc;
}

gm_status model_grad_fetch(model_state *st, uint64_t first, uint64_t n)
{
    if (!st->zoff)
        return GM_OK;
    return timed_copy(st, device_grads(st), (size_t)((first - st->grad_base) * st->es), &st->buf[B_HGRAD],
                      (size_t)(first * st->es), (size_t)(n * st->es));
}

gm_status model_host_adamw(model_state *st, float bc1, float bc2)
{
    const uint64_t P = trainable(st);
    unsigned char *g = st->buf[B_HGRAD].host;
    float *mv = st->buf[st->lora ? B_AMOM : B_MOM].host, *master = st->buf[st->lora ? B_AMASTER : B_MASTER].host;
    const float lr = LR, b1 = BETA1, b2 = BETA2, eps = ADAM_EPS, wd = WEIGHT_DECAY;
    /* model.cl's model_adamw, the same float operations in the same order */
    double t0 = gm_now();
    for (uint64_t p = 0; p < P; p++) {
        const float grad = load(st, g + p * st->es);
        const float m = b1 * mv[p] + (1.0f - b1) * grad;
        const float v = b2 * mv[P + p] + (1.0f - b2) * grad * grad;
        mv[p] = m;
        mv[P + p] = v;
        float x = master[p];
        x = x - lr * wd * x - lr * (m / bc1) / (sqrtf(v / bc2) + eps);
        master[p] = x;
        store(st, g + p * st->es, x);
    }
    st->host_opt_ms += (gm_now() - t0) * 1e3;
    /* GPUMEM_FAULT=offload-upload (tests): the updated weights left on the
     * host; the check must see the device's stale ones. */
    const char *fault = getenv("GPUMEM_FAULT");
    if (fault && strcmp(fault, "offload-upload") == 0)
        return GM_OK;
    return weights_copy(st, &st->buf[B_HGRAD], true);
}
