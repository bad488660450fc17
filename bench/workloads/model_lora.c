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
 * up, down, A before B. A is initialised as the base's projections are; B
 * with a small seeded range rather than LoRA's zeros, so that the first
 * step's dA and the adapters' part of the output are not zero and the
 * check sees them.
 */
#include "bench/workloads/model_private.h"
#include "bench/model/train_plan.h"

#include <math.h>

#define SEED_LORA_A 613u
#define SEED_LORA_B 617u

/* The gm_lora_target of matrix m, or -1. */
static int target_of(int m)
{
    switch (m) {
    case M_Q: return GM_LORA_Q;
    case M_K: return GM_LORA_K;
    case M_V: return GM_LORA_V;
    case M_O: return GM_LORA_O;
    case M_GATE: return GM_LORA_GATE;
    case M_UP: return GM_LORA_UP;
    case M_DOWN: return GM_LORA_DOWN;
    default: return -1;
    }
}

static gm_tune_opts tune_of(const gm_shape *s)
{
    gm_tune_opts t = {0};
    t.rank = s->lora_rank;
    t.alpha = s->lora_alpha;
    t.targets = s->lora_targets;
    return t;
}

bool model_lora_runs(const gm_shape *s)
{
    return (s->tune == GM_PLAN_LORA || (s->tune == GM_PLAN_QLORA && model_nf4_fits(&s->arch)))
           && gm_shape_has_arch(s) && !model_unsupported(&s->arch)
           && s->recompute == GM_RECOMPUTE_NONE && !s->checkpoint
           && (s->prec == GM_FP32 || s->prec == GM_FP16 || s->prec == GM_BF16);
}

static unsigned matrices_of(const gm_arch *a, const gm_tune_opts *t, uint64_t *count)
{
    unsigned targets = gm_lora_targets(a, t), mask = 0;
    *count = 0;
    for (int m = 0; m < N_LAYER_M; m++)
        if (target_of(m) >= 0 && (targets & (1u << target_of(m)))) {
            mask |= 1u << m;
            ++*count;
        }
    return mask;
}

unsigned model_lora_matrices(const gm_shape *s, uint64_t *count, uint64_t *rank, double *alpha)
{
    gm_tune_opts t = tune_of(s);
    *rank = gm_lora_rank(&t);
    *alpha = gm_lora_alpha(&t);
    return matrices_of(&s->arch, &t, count);
}

uint64_t model_lora_params(const gm_shape *s)
{
    gm_tune_opts t = tune_of(s);
    return gm_lora_params(&s->arch, &t);
}

bool model_lora_adapted(const model_state *st, int m) { return st->lora && m < N_LAYER_M && (st->lora_m >> m & 1u); }

uint64_t model_lora_param(const model_state *st, int m, uint64_t l)
{
    uint64_t per = 0, at = 0;
    for (int i = 0; i < N_LAYER_M; i++) {
        if (!model_lora_adapted(st, i))
            continue;
        if (i == m)
            at = per;
        per += st->rank * (model_in(st, i) + model_out(st, i));
    }
    return l * per + at;
}

loc model_lora_xa(model_state *st, int m, uint64_t l)
{
    uint64_t idx = 0;
    for (int i = 0; i < m; i++)
        idx += model_lora_adapted(st, i);
    return (loc){&st->buf[B_XA], (l * st->n_adapted + idx) * st->T * st->rank};
}

/* c (rows x cols) = op(a) op(b) (+ c where acc), on the backward's tally or the projections'. */
static gm_status product(model_state *st, uint64_t rows, uint64_t cols, uint64_t k, loc a, bool ta, loc b, bool tb,
                         loc c, bool acc, bool backward)
{
    gm_mm op = {.prec = st->p, .m = rows, .n = cols, .k = k};
    op.a = (gm_mm_operand){a.buf, a.off, 0, 0, ta};
    op.b = (gm_mm_operand){b.buf, b.off, 0, 0, tb};
    op.c = (gm_mm_operand){c.buf, c.off, 0, 0, false};
    if (acc) {
        op.r = c.buf;
        op.r_off = c.off;
    }
    return gm_mm_run(&st->mm, &op, backward ? &st->tally_bwd : &st->tally_proj);
}

gm_status model_lora_forward(model_state *st, int m, uint64_t l, uint64_t rows, loc x, loc y)
{
    if (!model_lora_adapted(st, m))
        return GM_OK;
    uint64_t in = model_in(st, m), out = model_out(st, m), r = st->rank, p = model_lora_param(st, m, l);
    loc a = {&st->buf[B_AD], p}, b = {&st->buf[B_AD], p + in * r}, xa = model_lora_xa(st, m, l);
    gm_status rc = product(st, rows, r, in, x, false, a, false, xa, false, false);
    if (rc == GM_OK)
        rc = gm_train_scale(st->dev, &st->tk, xa.buf, rows * r, xa.off, st->lora_scale);
    return rc == GM_OK ? product(st, rows, out, r, xa, false, b, false, y, true, false) : rc;
}

gm_status model_lora_backward(model_state *st, int m, uint64_t l, loc x, loc dy, loc dx)
{
    if (!model_lora_adapted(st, m))
        return GM_OK;
    gm_plan_opts po = {.prec = st->p, .mode = GM_PLAN_TRAIN, .gpus = 1, .tp = 1};
    uint64_t T = st->run_T, in = model_in(st, m), out = model_out(st, m), r = st->rank, p = model_lora_param(st, m, l);
    loc a = {&st->buf[B_AD], p}, b = {&st->buf[B_AD], p + in * r}, xa = model_lora_xa(st, m, l);
    loc ga = {&st->buf[B_AGRAD], p}, gb = {&st->buf[B_AGRAD], p + in * r};
    loc dxa = {&st->buf[B_BWS], gm_plan_backward_workspace(&st->a, &po, st->b, st->seq) / st->es};
    gm_status rc = product(st, r, out, T, xa, true, dy, false, gb, false, true);
    if (rc == GM_OK)
        rc = product(st, T, r, out, dy, false, b, true, dxa, false, true);
    /* GPUMEM_FAULT=lora-backward (tests): the planted error of forgetting
     * alpha / r in the backward; the check must catch it. */
    if (rc == GM_OK && !st->lora_fault)
        rc = gm_train_scale(st->dev, &st->tk, dxa.buf, T * r, dxa.off, st->lora_scale);
    if (rc == GM_OK)
        rc = product(st, in, r, T, x, true, dxa, false, ga, false, true);
    return rc == GM_OK ? product(st, T, in, r, dxa, false, a, true, dx, true, true) : rc;
}

gm_status model_lora_init(model_state *st)
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

gm_status model_lora_adamw(model_state *st, float bc1, float bc2)
{
    float lr = LR, b1 = BETA1, b2 = BETA2, eps = ADAM_EPS, wd = WEIGHT_DECAY;
    unsigned int has_master = st->master;
    uint64_t n = st->lora_p, p_off = 0;
    gm_buffer *master = st->master ? &st->buf[B_AMASTER] : &st->buf[B_AMOM];
    gm_arg args[] = {gm_arg_buf(&st->buf[B_AD]), gm_arg_buf(&st->buf[B_AGRAD]), gm_arg_buf(master),
                     gm_arg_buf(&st->buf[B_AMOM]), gm_arg_u64(&n), gm_arg_u64(&p_off), gm_arg_u64(&n),
                     gm_arg_u32(&has_master), gm_arg_f32(&lr), gm_arg_f32(&b1), gm_arg_f32(&b2), gm_arg_f32(&eps),
                     gm_arg_f32(&wd), gm_arg_f32(&bc1), gm_arg_f32(&bc2)};
    return model_launch(st, st->k_adamw, (size_t)n, args, 15);
}
