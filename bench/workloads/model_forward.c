/* The whole model's forward pass and AdamW step (bench/workloads/model_private.h). */
#include "bench/workloads/model_private.h"
#include "bench/workloads/kernel_calls.h"
#include "bench/model/precision_roles.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gm_status model_launch(model_state *st, gm_kernel *k, size_t items, gm_arg *args, int n)
{
    size_t global, local;
    gm_launch_geometry(st->dev, st->chunked, items, &global, &local);
    return st->dev->backend->launch(st->dev, 0, k, global, local, args, n);
}

gm_status model_init_region(model_state *st, loc at, uint64_t n, uint64_t base, unsigned seed, float range, float add,
                             float scale)
{
    gm_arg args[] = {gm_arg_buf(at.buf), gm_arg_u64(&at.off), gm_arg_u64(&n), gm_arg_u64(&base), gm_arg_u32(&seed),
                     gm_arg_f32(&range), gm_arg_f32(&add), gm_arg_f32(&scale)};
    return model_launch(st, st->k_init, (size_t)n, args, 8);
}

gm_status model_init_matrix(model_state *st, int m, uint64_t layer)
{
    loc at = model_loc(st, m, layer);
    uint64_t n = model_in(st, m) * model_out(st, m);
    /* The hash runs over the parameter's index in the model (lm_head after the weights tensor). */
    uint64_t base = model_param(st, m, layer);
    if (model_is_nf4(st, m))        /* quantised by model_nf4_init */
        return GM_OK;
    if (model_is_int4(st, m))
        return gm_int4_init_enqueue(st->dev, st->k_scales, st->k_pack, st->chunked, at.buf, at.off, &st->buf[B_WS],
                                    model_in(st, m), model_out(st, m), st->group, base, SEED_W, st->range[m]);
    return model_init_region(st, at, n, base, SEED_W, st->range[m], st->add[m], model_scale(st, m));
}

gm_status model_linear(model_state *st, int m, uint64_t layer, uint64_t rows, loc x, loc y, const loc *r)
{
    gm_status rc = GM_OK;
    loc w = model_weight(st, m, layer, &rc);
    if (rc != GM_OK)
        return rc;
    gm_mm op = {.prec = st->p, .m = rows, .n = model_out(st, m), .k = model_in(st, m), .sa = ACT,
                .sb = model_scale(st, m), .sc = ACT, .sr = ACT};
    op.a = (gm_mm_operand){x.buf, x.off, 0, 0, false};
    op.b = (gm_mm_operand){w.buf, w.off, 0, 0, false};
    op.c = (gm_mm_operand){y.buf, y.off, 0, 0, false};
    op.r = r ? r->buf : NULL;
    op.r_off = r ? r->off : 0;
    if (model_is_int4(st, m)) {
        op.b_scales = &st->buf[B_WS];
        op.group = (unsigned int)st->group;
    }
    rc = gm_mm_run(&st->mm, &op, &st->tally_proj);
    /* The base product is checked (and struck by a product fault) before
     * LoRA adds its term. */
    if (rc == GM_OK)
        rc = model_product_done(st, (model_site){m, R_FWD, layer}, &op, st->mm.last_half_sums,
                                st->mm.last_kind == GM_MM_VENDOR_DEQUANT);
    return rc == GM_OK ? model_lora_forward(st, m, layer, rows, x, y) : rc;
}

/* K or V (m) of `layer` into the KV cache at `to`: straight from the
 * projection, or through the phase buffer after Q when the cache has its
 * own precision (block.cl converts). Like every stage, over the tokens
 * the iteration runs (run_T: an oom probe's first tokens), not over the
 * whole batch the tensors are laid out for. */
static gm_status kv_projection(model_state *st, int m, uint64_t layer, loc in, loc to)
{
    uint64_t T = st->run_T;
    if (st->kp == st->p)
        return model_linear(st, m, layer, T, in, to, NULL);
    loc staged = {&st->buf[B_PHASE], st->T * st->ad};
    gm_status rc = model_linear(st, m, layer, T, in, staged, NULL);
    return rc == GM_OK ? gm_kv_store_enqueue(st->dev, st->k_kv, st->chunked, staged.buf, to.buf, T,
                                             (unsigned int)st->kd, st->kd, staged.off, to.off, ACT)
                       : rc;
}

static gm_status rmsnorm(model_state *st, int m, uint64_t layer, uint64_t rows, loc x, uint64_t first, uint64_t step,
                         loc y)
{
    loc w = model_loc(st, m, layer);
    unsigned int width = (unsigned int)st->h;
    float eps = RMS_EPS, sx = ACT, sw = model_scale(st, m);
    gm_arg args[] = {gm_arg_buf(x.buf), gm_arg_buf(y.buf), gm_arg_buf(w.buf), gm_arg_u64(&rows), gm_arg_u32(&width),
                     gm_arg_u64(&x.off), gm_arg_u64(&first), gm_arg_u64(&step), gm_arg_u64(&y.off),
                     gm_arg_u64(&w.off), gm_arg_f32(&eps), gm_arg_f32(&sx), gm_arg_f32(&sx), gm_arg_f32(&sw)};
    if (st->chunked)
        return model_launch(st, st->k_norm, (size_t)rows, args, 14);
    /* model_rmsnorm_rows on a GPU: a work group a row. */
    return st->dev->backend->launch(st->dev, 0, st->k_norm, (size_t)rows * 256, 256, args, 14);
}

gm_status model_rope(model_state *st, loc x, unsigned int heads, float direction)
{
    uint64_t half = st->d / 2;
    return gm_train_rope(st->dev, &st->tk, x.buf, &st->buf[B_ROPE], &st->buf[B_ROPE], st->run_T, heads,
                         (unsigned int)st->d, st->run_seq, 0, x.off, direction, 0, st->seq * half);
}

gm_status model_stage(model_state *st, uint64_t l, int s)
{
    layer_locs c = model_locs(st, l);
    uint64_t T = st->run_T;
    gm_status rc = GM_OK;
    switch (s) {
    case S_NORM1:
        return rmsnorm(st, M_NORM1, l, T, c.x_in, 0, 1, c.attn_in);
    case S_QKV:
        rc = model_linear(st, M_Q, l, T, c.attn_in, c.q, NULL);
        if (rc == GM_OK)
            rc = kv_projection(st, M_K, l, c.attn_in, c.k);
        if (rc == GM_OK && st->train)      /* the rotary embedding on q and k */
            rc = model_rope(st, c.q, (unsigned int)st->heads, 1.0f);
        if (rc == GM_OK && st->train)
            rc = model_rope(st, c.k, (unsigned int)st->kv_heads, 1.0f);
        return rc == GM_OK ? kv_projection(st, M_V, l, c.attn_in, c.v) : rc;
    case S_ATTN: {
        if (st->attn_gemm) {
            rc = model_attention_gemm(st, l);
            return rc == GM_OK ? model_attention_done(st, l) : rc;
        }
        /* One launch over every query head: head j reads KV head
         * j / (heads / kv_heads). */
        gm_attention_call a = {c.q.buf, c.k.buf, c.v.buf, c.o.buf, c.stats.buf,
                               (unsigned int)(st->run_b * st->heads), (unsigned int)st->run_seq, (unsigned int)st->d,
                               1u, (unsigned int)st->heads, ACT, ACT, st->seq * st->ad, st->ad, st->seq * st->kd,
                               st->kd, st->seq * st->ad, st->ad, c.q.off, c.k.off, c.v.off, c.o.off,
                               (unsigned int)(st->heads / st->kv_heads)};
        rc = gm_attention_enqueue(st->dev, st->k_attn, st->chunked, &a);
        if (rc == GM_OK && st->train) {
            /* lse: [heads][T] per layer */
            uint64_t rows = st->run_b * st->heads * st->run_seq;
            unsigned int heads = (unsigned int)st->heads;
            gm_arg args[] = {gm_arg_buf(c.stats.buf), gm_arg_buf(c.lse.buf), gm_arg_u64(&rows),
                             gm_arg_u64(&c.lse.off), gm_arg_u32(&heads), gm_arg_u64(&st->run_seq),
                             gm_arg_u64(&st->seq), gm_arg_u64(&st->T)};
            rc = model_launch(st, st->k_lse, (size_t)rows, args, 8);
        }
        return rc == GM_OK ? model_attention_done(st, l) : rc;
    }
    case S_OPROJ:
        return model_linear(st, M_O, l, T, c.o, c.mid, &c.x_in);
    case S_NORM2:
        return rmsnorm(st, M_NORM2, l, T, c.mid, 0, 1, c.mlp_in);
    case S_GATEUP:
        rc = model_linear(st, M_GATE, l, T, c.mlp_in, c.gate, NULL);
        return rc == GM_OK ? model_linear(st, M_UP, l, T, c.mlp_in, c.up, NULL) : rc;
    case S_SWIGLU: {
        uint64_t n = T * st->I;
        float sc = ACT;
        gm_arg args[] = {gm_arg_buf(c.gate.buf), gm_arg_buf(c.up.buf), gm_arg_buf(c.act.buf), gm_arg_u64(&n),
                         gm_arg_u64(&c.gate.off), gm_arg_u64(&c.up.off), gm_arg_u64(&c.act.off), gm_arg_f32(&sc)};
        return model_launch(st, st->k_swiglu, (size_t)n, args, 8);
    }
    case S_DOWN:
        return model_linear(st, M_DOWN, l, T, c.act, c.out, &c.mid);
    }
    return GM_OK;
}

gm_status model_embed(model_state *st)
{
    loc x = model_locs(st, 0).x_in;
    unsigned int hidden = (unsigned int)st->h, vocab = (unsigned int)st->V;
    float sw = model_scale(st, M_EMB), sx = ACT;
    gm_arg args[] = {gm_arg_buf(&st->buf[B_W]), gm_arg_buf(x.buf), gm_arg_u64(&st->run_T), gm_arg_u32(&hidden),
                     gm_arg_u32(&vocab), gm_arg_u64(&x.off), gm_arg_f32(&sw), gm_arg_f32(&sx)};
    return model_launch(st, st->k_embed, (size_t)(st->run_T * st->h), args, 8);
}

/* The rows the head computes logits for: each sequence's last token
 * (inference) or every token (train). */
uint64_t model_head_rows(const model_state *st) { return st->train ? st->run_T : st->run_b; }
/* LoRA keeps no head input: the backward's workspace holds it until the loss. */
loc model_head_in(model_state *st)
{
    return st->lora ? (loc){&st->buf[B_BWS], 0} : st->train ? (loc){&st->buf[B_FOUT], 0} : (loc){&st->buf[B_NORM], 0};
}

gm_status model_final_norm(model_state *st)
{
    if (st->train)
        return rmsnorm(st, M_FINAL, 0, st->run_T, (loc){&st->buf[B_FIN], 0}, 0, 1, model_head_in(st));
    return rmsnorm(st, M_FINAL, 0, st->run_b, (loc){&st->buf[B_RES], 0}, st->run_seq - 1, st->seq, model_head_in(st));
}

gm_status model_lm_head(model_state *st)
{
    uint64_t rows = model_head_rows(st);
    loc x = model_head_in(st), w = model_loc(st, M_LM, 0);
    /* fp32 logits of the activations' products: [rows, h] x [h, V], or the
     * tied embedding [V, h] transposed; int4: the head's codes and scales. */
    gm_mm op = {.prec = st->p, .m = rows, .n = st->V, .k = st->h, .c_fp32 = true, .sa = ACT,
                .sb = model_scale(st, st->tied ? M_EMB : M_LM)};
    op.a = (gm_mm_operand){x.buf, x.off, 0, 0, false};
    op.b = (gm_mm_operand){w.buf, w.off, 0, 0, st->tied};
    op.c = (gm_mm_operand){&st->buf[B_LOGITS], 0, 0, 0, false};
    if (st->int4_head) {
        op.b_scales = &st->buf[B_WS];
        op.group = (unsigned int)st->group;
    }
    gm_status rc;
    bool half_sums = false;     /* our kernels sum in fp32 */
    if ((st->vendor || st->train) && !st->int4_head) {
        /* Training too: every token's row, where model_lm_head's column reads are slow. */
        rc = gm_mm_run(&st->mm, &op, &st->tally_head);
        half_sums = st->mm.last_half_sums;
    } else {
        unsigned int hidden = (unsigned int)st->h, vocab = (unsigned int)st->V, tied = st->tied;
        float sx = ACT, sw = op.sb;
        if (st->int4_head) {
            unsigned int group = (unsigned int)st->group;
            gm_arg args[] = {gm_arg_buf(x.buf), gm_arg_buf(w.buf), gm_arg_buf(&st->buf[B_WS]),
                             gm_arg_buf(&st->buf[B_LOGITS]), gm_arg_u64(&rows), gm_arg_u32(&hidden),
                             gm_arg_u32(&vocab), gm_arg_u64(&x.off), gm_arg_u64(&w.off), gm_arg_u32(&group),
                             gm_arg_f32(&sx)};
            rc = model_launch(st, st->k_lm4, (size_t)(rows * st->V), args, 11);
        } else {
            gm_arg args[] = {gm_arg_buf(x.buf), gm_arg_buf(w.buf), gm_arg_buf(&st->buf[B_LOGITS]), gm_arg_u64(&rows),
                             gm_arg_u32(&hidden), gm_arg_u32(&vocab), gm_arg_u64(&x.off), gm_arg_u64(&w.off),
                             gm_arg_u32(&tied), gm_arg_f32(&sx), gm_arg_f32(&sw)};
            rc = model_launch(st, st->k_lm, (size_t)(rows * st->V), args, 11);
        }
    }
    return rc == GM_OK ? model_product_done(st, (model_site){M_LM, R_FWD, st->L}, &op, half_sums, false) : rc;
}

gm_status model_forward_pass(model_state *st)
{
    gm_status rc = model_embed(st);
    for (uint64_t l = 0; l < st->L && rc == GM_OK; l++)
        for (int s = 0; s < N_STAGES && rc == GM_OK; s++)
            rc = model_stage(st, l, s);
    if (rc == GM_OK)
        rc = model_final_norm(st);
    return rc == GM_OK ? model_lm_head(st) : rc;
}

/* LoRA: one AdamW step over the adapters (st->steps already counted). */
static gm_status lora_adamw(model_state *st, float bc1, float bc2)
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

/* AdamW over the weights tensor, then the LM head's (after it in the
 * gradients, master weights and moments). */
gm_status model_adamw(model_state *st)
{
    st->steps++;
    float lr = LR, b1 = BETA1, b2 = BETA2, eps = ADAM_EPS, wd = WEIGHT_DECAY;
    float bc1 = 1.0f - powf(BETA1, (float)st->steps), bc2 = 1.0f - powf(BETA2, (float)st->steps);
    if (st->zoff)       /* the states in host memory: AdamW on the host */
        return model_host_adamw(st, bc1, bc2);
    if (st->lora)
        return lora_adamw(st, bc1, bc2);
    unsigned int has_master = st->master;
    gm_buffer *master = st->master ? &st->buf[B_MASTER] : &st->buf[B_MOM];
    gm_status rc = GM_OK;
    for (int part = 0; part < 2 && rc == GM_OK; part++) {
        if (part == 1 && st->tied)
            break;
        uint64_t n = part ? st->h * st->V : st->p_main, p_off = part ? st->p_main : 0;
        gm_arg args[] = {gm_arg_buf(&st->buf[part ? B_LM : B_W]), gm_arg_buf(&st->buf[B_GRAD]), gm_arg_buf(master),
                         gm_arg_buf(&st->buf[B_MOM]), gm_arg_u64(&n), gm_arg_u64(&p_off), gm_arg_u64(&st->p_total),
                         gm_arg_u32(&has_master), gm_arg_f32(&lr), gm_arg_f32(&b1), gm_arg_f32(&b2),
                         gm_arg_f32(&eps), gm_arg_f32(&wd), gm_arg_f32(&bc1), gm_arg_f32(&bc2)};
        rc = model_launch(st, st->k_adamw, (size_t)n, args, 15);
    }
    return rc;
}

gm_status block_model_corrupt(void *state, const gm_output_fault *f, unsigned rep)
{
    model_state *st = state;
    /* Any logit (training: any element of the loss's gradient), all of
     * which the check compares bit for bit with its replay: any bit. */
    bool dl16 = st->train && st->es < 4;
    size_t n = (size_t)(model_head_rows(st) * st->V);
    return gm_output_fault_strike(f, st->dev, &st->buf[dl16 ? B_DLOGITS : B_LOGITS], 0, n, dl16 ? st->es : 4,
                                  gm_output_fault_salt("model logits"), rep, 0, NULL);
}

