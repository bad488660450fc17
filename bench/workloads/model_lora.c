/*
 * LoRA on the whole model's training step (bench/workloads/model_private.h):
 * Hu et al. 2021, section 4.1. Each adapted projection W [in, out] of a
 * layer gains A [in, r] and B [r, out], and its output is
 *   y = x W + (alpha / r) (x A) B
 * with W frozen (no gradient, no optimizer state: the base's norms,
 * embedding and LM head too). The forward keeps xa = (alpha / r) x A, [T,
 * r] (mem_plan's "each adapter's x A"); the backward, from dy:
 *   dB = xa^T dy,  d(xa) = dy B^T (the workspace's last e T r bytes),
 *   dA = (alpha / r) x^T d(xa),  dx += (alpha / r) d(xa) A^T.
 * Adapters, their gradients, fp32 master copies (16-bit) and AdamW moments
 * are in the order of the layers, then of the matrices q, k, v, o, gate,
 * up, down, A before B (where: model_layout.c). A is initialised as the
 * base's projections are; B with a small seeded range rather than LoRA's
 * zeros, so that the first step's dA and the adapters' part of the output
 * are not zero and the check sees them (model_setup.c; their AdamW step:
 * model_forward.c).
 */
#include "bench/workloads/model_private.h"
#include "bench/model/train_plan.h"

/* c (rows x cols) = op(a) op(b) (+ c where acc), a product of matrix m's
 * adapter of layer l in `role` (R_LORA_FWD: the forward's, on the
 * projections' tally; else the backward's). */
static gm_status product(model_state *st, int m, uint64_t l, int role, uint64_t rows, uint64_t cols, uint64_t k,
                         loc a, bool ta, loc b, bool tb, loc c, bool acc)
{
    return model_product(st, (model_site){m, role, l}, rows, cols, k, a, ta, b, tb, c, acc,
                         role == R_LORA_FWD ? &st->tally_proj : &st->tally_bwd);
}

gm_status model_lora_keep_xa(model_state *st, int m, uint64_t l, uint64_t rows, loc x)
{
    if (!model_lora_adapted(st, m))
        return GM_OK;
    loc a = {&st->buf[B_AD], model_lora_param(st, m, l)}, xa = model_lora_xa(st, m, l);
    gm_status rc = product(st, m, l, R_LORA_FWD, rows, st->rank, model_in(st, m), x, false, a, false, xa, false);
    return rc == GM_OK ? gm_train_scale(st->dev, &st->tk, xa.buf, rows * st->rank, xa.off, st->lora_scale) : rc;
}

gm_status model_lora_forward(model_state *st, int m, uint64_t l, uint64_t rows, loc x, loc y)
{
    if (!model_lora_adapted(st, m))
        return GM_OK;
    uint64_t in = model_in(st, m), out = model_out(st, m), r = st->rank, p = model_lora_param(st, m, l);
    loc b = {&st->buf[B_AD], p + in * r}, xa = model_lora_xa(st, m, l);
    gm_status rc = model_lora_keep_xa(st, m, l, rows, x);
    return rc == GM_OK ? product(st, m, l, R_LORA_FWD, rows, out, r, xa, false, b, false, y, true) : rc;
}

gm_status model_lora_backward(model_state *st, int m, uint64_t l, loc x, loc dy, loc dx)
{
    if (!model_lora_adapted(st, m))
        return GM_OK;
    gm_plan_opts po = {.prec = st->p, .mode = GM_PLAN_TRAIN, .gpus = 1, .tp = 1};
    uint64_t T = st->run_T, in = model_in(st, m), out = model_out(st, m), r = st->rank, p = model_lora_param(st, m, l);
    loc a = {&st->buf[B_AD], p}, b = {&st->buf[B_AD], p + in * r}, xa = model_lora_xa(st, m, l);
    loc ga = model_grad_at(st, p), gb = model_grad_at(st, p + in * r);
    loc dxa = {&st->buf[B_BWS], gm_plan_backward_workspace(&st->a, &po, st->b, st->seq) / st->es};
    gm_status rc = product(st, m, l, R_LORA_DB, r, out, T, xa, true, dy, false, gb, false);
    if (rc == GM_OK)
        rc = product(st, m, l, R_LORA_DXA, T, r, out, dy, false, b, true, dxa, false);
    /* GPUMEM_FAULT=lora-backward (tests): the planted error of forgetting
     * alpha / r in the backward; the check must catch it. */
    if (rc == GM_OK && !st->lora_fault)
        rc = gm_train_scale(st->dev, &st->tk, dxa.buf, T * r, dxa.off, st->lora_scale);
    if (rc == GM_OK)
        rc = product(st, m, l, R_LORA_DA, in, r, T, x, true, dxa, false, ga, false);
    return rc == GM_OK ? product(st, m, l, R_LORA_DX, T, in, r, dxa, false, a, true, dx, true) : rc;
}
