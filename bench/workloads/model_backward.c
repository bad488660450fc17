/*
 * The whole model's training step on the device, after its forward pass
 * (bench/workloads/model_private.h): the fused cross-entropy over the LM
 * head's fp32 logits and the backward pass of every stage, each weight's
 * gradient written once into the gradients tensor (the order of the
 * parameters), ready for AdamW. The products are the dispatch's (matmul.h):
 * dX = dY W^T and dW = X^T dY for weights held [in, out].
 *
 * Per layer, from dR = d(layer output) (the residual stream's gradient):
 *   down:    dWd = act^T dR,            dP = dR Wd^T
 *   SwiGLU:  d gate, d up from dP, written over the kept gate and up
 *   gate/up: dWg = n^T dg, dWu = n^T du, dN = dg Wg^T + du Wu^T
 *   norm 2:  dR += RMSNorm'(mid) dN,    dw2
 *   o:       dWo = o^T dR,              dO = dR Wo^T
 *   attention (FlashAttention-2 from the kept log-sum-exp): dq, dk, dv
 *   q, k, v: dW = a^T d(q, k, v),       dA = dq Wq^T + dk Wk^T + dv Wv^T
 *   norm 1:  dR += RMSNorm'(x) dA,      dw1
 * and before the layers the head: dlogits = (softmax - one-hot) / tokens,
 * dW_lm = f^T dlogits (tied: dE = dlogits^T f), dF = dlogits W_lm^T, the
 * final norm's backward into dR; after them the embedding's rows gain dR
 * (train_embed_bwd, after the tied head's part or over zeros).
 *
 * The backward workspace (mem_plan's backward_workspace, exactly its
 * bytes), from its start: the fp32 1/rms of each row (RMSNorm's dx kernel
 * to its dw kernel; the loss of each row after train_xent), dR, then
 * either the MLP's dP [T, I] and dN [T, h] or the attention's fp32 D
 * [heads, T], dO, dq [T, heads x dim], dk, dv [T, kv_heads x dim], dA [T, h].
 */
#include "bench/workloads/model_private.h"
#include "bench/workloads/model_check.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t dr, dp, dn, delta, d_o, dq, dk, dv, da;   /* elements of the compute precision; delta: floats */
} ws_layout;

static ws_layout layout(const model_state *st)
{
    uint64_t e = st->es, T = st->T, phase = 4 * T + e * T * st->h;
    ws_layout w;
    w.dr = 4 * T / e;
    w.dp = phase / e;
    w.dn = w.dp + T * st->I;
    w.delta = phase / 4;
    w.d_o = (phase + 4 * st->heads * T) / e;
    w.dq = w.d_o + T * st->ad;
    w.dk = w.dq + T * st->ad;
    w.dv = w.dk + T * st->kd;
    w.da = w.dv + T * st->kd;
    return w;
}

const char *model_train_unsupported(const gm_shape *s)
{
    if (s->prec != GM_FP32 && s->prec != GM_FP16 && s->prec != GM_BF16)
        return "the training step runs fp32, fp16 or bf16";
    /* selective: the log-sum-exp after the attention's (max, sum) pairs. */
    if (s->recompute == GM_RECOMPUTE_SELECTIVE && s->arch.vocab < 3 * s->arch.heads)
        return "--recompute selective needs a vocabulary of at least three times the heads";
    /* fp32: a recomputed attention's row statistics and selective's
     * log-sum-exp, 3 heads floats a token, in the final norm's input. */
    if (s->prec == GM_FP32 && s->recompute != GM_RECOMPUTE_NONE && 3 * s->arch.heads > s->arch.hidden)
        return "fp32 with --recompute needs a hidden size of at least three times the heads";
    /* The workspace's fp32 D follows dR: e T h bytes must keep it aligned. */
    if (gm_precision_size(s->prec) == 2 && (s->batch * s->seq * s->arch.hidden) % 2)
        return "a 16-bit backward needs an even tokens x hidden";
    return NULL;
}

/* A backward product of matrix mat of `layer` in `role`, on the backward's tally. */
static gm_status product(model_state *st, int mat, uint64_t layer, int role, uint64_t m, uint64_t n, uint64_t k, loc a,
                         bool ta, loc b, bool tb, loc c, bool acc)
{
    return model_product(st, (model_site){mat, role, layer}, m, n, k, a, ta, b, tb, c, acc, &st->tally_bwd);
}

/* The backward of y = x W_m: dW_m = x^T dy into the gradients, and where
 * dx.buf dx = dy W_m^T (added to dx with acc_dx). */
static gm_status linear_bwd(model_state *st, int m, uint64_t l, loc x, loc dy, loc dx, bool acc_dx)
{
    uint64_t T = st->run_T, in = model_in(st, m), out = model_out(st, m);
    loc g = model_grad_at(st, model_param(st, m, l));
    /* LoRA: the base is frozen (no dW); its adapter's backward after dX. */
    gm_status rc = st->lora ? GM_OK : product(st, m, l, R_DW, in, out, T, x, true, dy, false, g, false);
    loc w = rc == GM_OK && dx.buf ? model_weight(st, m, l, &rc) : model_loc(st, m, l);
    if (rc == GM_OK && dx.buf)
        rc = product(st, m, l, R_DX, T, in, out, dy, false, w, true, dx, acc_dx);
    return rc == GM_OK && dx.buf ? model_lora_backward(st, m, l, x, dy, dx) : rc;
}

/* RMSNorm m's backward from dy: dR = (dR +) dx, the weight's gradient. */
static gm_status norm_bwd(model_state *st, int m, uint64_t l, loc x, loc dy, bool acc)
{
    loc w = model_loc(st, m, l);
    gm_buffer *ws = &st->buf[B_BWS];
    gm_train_norm_call c = {.x = x.buf, .w = w.buf, .dy = dy.buf, .dx = ws, .rstd = ws,
                            .dw = st->lora ? NULL : &st->buf[B_GRAD],
                            .rows = st->run_T, .width = (unsigned int)st->h, .eps = RMS_EPS, .accumulate_dx = acc,
                            .x_off = x.off, .w_off = w.off, .dy_off = dy.off, .dx_off = layout(st).dr,
                            .dw_off = model_param(st, m, l) - st->grad_base};
    return gm_train_rmsnorm_bwd(st->dev, &st->tk, &c);
}

static gm_status layer_backward(model_state *st, uint64_t l)
{
    layer_locs c = model_locs(st, l);
    ws_layout w = layout(st);
    gm_buffer *ws = &st->buf[B_BWS];
    loc dr = {ws, w.dr}, dp = {ws, w.dp}, dn = {ws, w.dn}, d_o = {ws, w.d_o}, dq = {ws, w.dq}, dk = {ws, w.dk},
        dv = {ws, w.dv}, da = {ws, w.da};
    gm_status rc = linear_bwd(st, M_DOWN, l, c.act, dr, dp, false);
    if (rc == GM_OK) {
        const uint64_t off[5] = {c.gate.off, c.up.off, dp.off, c.gate.off, c.up.off};
        rc = gm_train_swiglu_bwd(st->dev, &st->tk, c.gate.buf, c.up.buf, ws, c.gate.buf, c.up.buf, st->run_T * st->I,
                                 off);
    }
    if (rc == GM_OK)
        rc = linear_bwd(st, M_GATE, l, c.mlp_in, c.gate, dn, false);
    if (rc == GM_OK)
        rc = linear_bwd(st, M_UP, l, c.mlp_in, c.up, dn, true);
    if (rc == GM_OK)
        rc = norm_bwd(st, M_NORM2, l, c.mid, dn, true);
    if (rc == GM_OK)
        rc = linear_bwd(st, M_O, l, c.o, dr, d_o, false);
    if (rc == GM_OK) {
        /* The forward keeps the log-sum-exp head-major over the layer's
         * tokens (model.cl's model_lse). */
        gm_train_attn_call a = {.q = c.q.buf, .k = c.k.buf, .v = c.v.buf, .o = c.o.buf, .d_o = ws, .lse = c.lse.buf,
                                .delta = ws, .dq = ws, .dk = ws, .dv = ws, .batch = st->run_b, .seq = st->run_seq,
                                .heads = (unsigned int)st->heads, .kv_heads = (unsigned int)st->kv_heads,
                                .dim = (unsigned int)st->d, .causal = true, .q_off = c.q.off, .k_off = c.k.off,
                                .v_off = c.v.off, .o_off = c.o.off, .do_off = w.d_o, .dq_off = w.dq, .dk_off = w.dk,
                                .dv_off = w.dv, .delta_off = w.delta, .lse_off = c.lse.off, .lse_head = st->T,
                                .lse_seq = st->seq};
        rc = gm_train_attn_bwd(st->dev, &st->tk, &a);
    }
    /* dq and dk of the rotated q and k: rotated back */
    if (rc == GM_OK)
        rc = model_rope(st, dq, (unsigned int)st->heads, -1.0f);
    if (rc == GM_OK)
        rc = model_rope(st, dk, (unsigned int)st->kv_heads, -1.0f);
    if (rc == GM_OK)
        rc = linear_bwd(st, M_Q, l, c.attn_in, dq, da, false);
    if (rc == GM_OK)
        rc = linear_bwd(st, M_K, l, c.attn_in, dk, da, true);
    if (rc == GM_OK)
        rc = linear_bwd(st, M_V, l, c.attn_in, dv, da, true);
    return rc == GM_OK ? norm_bwd(st, M_NORM1, l, c.x_in, da, true) : rc;
}

gm_status model_loss(model_state *st)
{
    gm_buffer *dl = st->es < 4 ? &st->buf[B_DLOGITS] : &st->buf[B_LOGITS];
    float scale = st->counted ? 1.0f / (float)st->counted : 0.0f;
    return gm_train_xent(st->dev, &st->tk, &st->buf[B_LOGITS], &st->buf[B_TGT], dl, &st->buf[B_BWS], st->run_T,
                         (unsigned int)st->V, scale, 0, 0);
}

/* The LM head's and the final norm's backward: dR = d(last layer's output). */
static gm_status head_backward(model_state *st)
{
    uint64_t T = st->run_T, h = st->h, V = st->V;
    loc dl = {st->es < 4 ? &st->buf[B_DLOGITS] : &st->buf[B_LOGITS], 0}, f = model_head_in(st);
    loc df = {&st->buf[B_BWS], layout(st).dp}, wl = model_loc(st, M_LM, 0);
    loc g = model_grad_at(st, model_param(st, M_LM, 0));
    gm_status rc;
    if (st->lora) {      /* frozen: dF alone */
        rc = product(st, M_LM, st->L, R_DX, T, h, V, dl, false, wl, !st->tied, df, false);
    } else if (st->tied) {      /* the head is E^T: dE = dlogits^T f, dF = dlogits E */
        rc = product(st, M_LM, st->L, R_DW, V, h, T, dl, true, f, false, g, false);
        if (rc == GM_OK)
            rc = product(st, M_LM, st->L, R_DX, T, h, V, dl, false, wl, false, df, false);
    } else {
        rc = product(st, M_LM, st->L, R_DW, h, V, T, f, true, dl, false, g, false);
        if (rc == GM_OK)
            rc = product(st, M_LM, st->L, R_DX, T, h, V, dl, false, wl, true, df, false);
    }
    /* offload: the head's gradients out, the buffer the final norm's */
    if (rc == GM_OK && !st->lora)
        rc = model_grad_flush(st, model_param(st, M_LM, 0), V * h, model_param(st, M_FINAL, 0));
    if (rc == GM_OK)
        rc = norm_bwd(st, M_FINAL, 0, (loc){&st->buf[B_FIN], 0}, df, false);
    return rc == GM_OK && !st->lora ? model_grad_flush(st, model_param(st, M_FINAL, 0), h, 0) : rc;
}

/* What --recompute drops of layer l, again before its backward: full,
 * every stage from the kept input but the last (its output is the next
 * layer's kept input), then LoRA's x A of down, which that stage writes
 * and down's adapter's backward reads; selective, the attention (its
 * log-sum-exp; the output it writes again is the kept one, bit for bit). */
static gm_status recompute_layer(model_state *st, uint64_t l)
{
    if (st->recompute == GM_RECOMPUTE_SELECTIVE)
        return model_stage(st, l, S_ATTN);
    if (st->recompute != GM_RECOMPUTE_FULL)
        return GM_OK;
    gm_status rc = GM_OK;
    for (int s = S_NORM1; s < S_DOWN && rc == GM_OK; s++)
        rc = model_stage(st, l, s);
    return rc == GM_OK ? model_lora_keep_xa(st, M_DOWN, l, st->run_T, model_locs(st, l).act) : rc;
}

/* The first trainable parameter of layer l and the layer's count: its
 * matrices and norms, or its adapters (LoRA). */
static void layer_params(const model_state *st, uint64_t l, uint64_t *first, uint64_t *n)
{
    *first = st->lora ? l * (st->lora_p / st->L) : model_param(st, M_NORM1, l);
    *n = st->lora ? st->lora_p / st->L : st->per_layer;
}

gm_status model_backward(model_state *st)
{
    /* offload: the buffer holds one module's gradients at a time, in the
     * order the backward writes them (model_offload.c) */
    st->grad_base = st->zoff && !st->lora ? model_param(st, M_LM, 0) : 0;
    gm_status rc = head_backward(st);
    st->in_backward = true;
    for (uint64_t l = st->L; l-- > 0 && rc == GM_OK;) {
        uint64_t first, n;
        layer_params(st, l, &first, &n);
        st->grad_base = st->zoff ? first : 0;
        rc = recompute_layer(st, l);
        if (rc == GM_OK)
            rc = layer_backward(st, l);
        if (rc == GM_OK)
            rc = model_grad_flush(st, first, n, 0);
    }
    st->grad_base = 0;
    st->in_backward = false;
    if (st->lora)       /* the embedding is frozen */
        return rc;
    const uint64_t Vh = st->V * st->h;
    loc g = model_grad_at(st, 0);
    if (rc == GM_OK && !st->tied)       /* rows of tokens that do not occur stay 0 */
        rc = model_init_region(st, g, Vh, 0, SEED_GRAD, 0.0f, 0.0f, 1.0f);
    if (rc == GM_OK && st->tied)        /* offload: the head's part back, which the rows add to */
        rc = model_grad_fetch(st, 0, Vh);
    if (rc == GM_OK)
        rc = gm_train_embed_bwd(st->dev, &st->tk, &st->buf[B_BWS], &st->buf[B_ORDER], &st->buf[B_SEG_START],
                                &st->buf[B_SEG_TOKEN], g.buf, st->segments, (unsigned int)st->h, true,
                                layout(st).dr);
    return rc == GM_OK ? model_grad_flush(st, 0, Vh, 0) : rc;
}

/* n 32-bit values to the start of dst. */
static gm_status upload(model_state *st, gm_buffer *dst, const uint32_t *v, size_t n)
{
    if (n == 0)
        return GM_OK;
    gm_buffer host = {0};
    gm_status rc = gm_device_alloc(st->dev, GM_MEM_HOST, n * 4, &host);
    if (rc == GM_OK) {
        memcpy(host.host, v, n * 4);
        rc = st->dev->backend->copy(st->dev, 0, dst, 0, &host, 0, n * 4, false);
    }
    gm_device_free(st->dev, &host);
    return rc;
}

gm_status model_train_setup(model_state *st)
{
    const char *fault = getenv("GPUMEM_FAULT");
    gm_status rc = gm_train_kernels_build(st->dev, st->p, st->chunked, fault && strcmp(fault, "train-backward") == 0,
                                          &st->tk);
    st->tk_built = rc == GM_OK;
    size_t n = (size_t)st->run_T;
    uint32_t *tokens = malloc(n * 4 + 4), *targets = malloc(n * 4 + 4), *order = malloc(n * 4 + 4),
             *start = malloc(n * 4 + 4), *seg_token = malloc(n * 4 + 4);
    if (rc == GM_OK && !(tokens && targets && order && start && seg_token))
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    size_t segments = 0;
    if (rc == GM_OK) {
        /* Token t = b * run_seq + i predicts token t + 1 of its sequence;
         * each sequence's last token counts for nothing. */
        st->counted = 0;
        for (size_t t = 0; t < n; t++) {
            tokens[t] = check_host_token(t, (uint32_t)st->V);
            bool last = t % st->run_seq == st->run_seq - 1;
            targets[t] = last ? GM_TRAIN_IGNORE : check_host_token(t + 1, (uint32_t)st->V);
            st->counted += !last;
        }
        gm_train_embed_segments(tokens, n, (uint32_t)st->V, order, start, seg_token, &segments);
        st->segments = segments;
    }
    if (rc == GM_OK)
        rc = upload(st, &st->buf[B_TGT], targets, n);
    /* The rotary tables: cos, then sin, of seq positions x head_dim / 2. */
    size_t tab = (size_t)(st->seq * (st->d / 2));
    float *tables = rc == GM_OK ? malloc(2 * tab * sizeof *tables + 4) : NULL;
    if (rc == GM_OK && !tables)
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    if (rc == GM_OK) {
        gm_train_rope_table(st->a.rope_theta, (unsigned int)st->d, (size_t)st->seq, tables, tables + tab);
        rc = upload(st, &st->buf[B_ROPE], (const uint32_t *)(const void *)tables, 2 * tab);
    }
    free(tables);
    if (rc == GM_OK && !st->lora)       /* LoRA: the embedding is frozen */
        rc = upload(st, &st->buf[B_ORDER], order, n);
    if (rc == GM_OK && !st->lora)
        rc = upload(st, &st->buf[B_SEG_START], start, segments + 1);
    if (rc == GM_OK && !st->lora)
        rc = upload(st, &st->buf[B_SEG_TOKEN], seg_token, segments);
    free(tokens);
    free(targets);
    free(order);
    free(start);
    free(seg_token);
    return rc;
}

void model_train_release(model_state *st)
{
    if (st->tk_built)
        gm_train_kernels_release(st->dev, &st->tk);
    st->tk_built = false;
}
