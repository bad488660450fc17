/*
 * The whole model's training step in double precision on the CPU: the
 * forward pass as model_forward.c runs it, the cross-entropy of
 * model_backward.c's targets and every parameter's gradient, from the
 * weights the device holds (read back as doubles). The stages are
 * train_ref.h's; the check (model_train_check.c) compares the device's
 * loss and gradients with these.
 */
#include "bench/workloads/model_private.h"
#include "bench/workloads/train_ref.h"

#include <stdlib.h>
#include <string.h>

/* y [T, out] = x [T, in] W [in, out], plus y where acc. */
static void mm(const double *x, const double *w, double *y, size_t T, size_t in, size_t out, bool acc)
{
    for (size_t t = 0; t < T; t++) {
        double *yr = y + t * out;
        if (!acc)
            memset(yr, 0, out * sizeof *yr);
        for (size_t i = 0; i < in; i++) {
            double xv = x[t * in + i];
            const double *wr = w + i * out;
            for (size_t j = 0; j < out; j++)
                yr[j] += xv * wr[j];
        }
    }
}

/* dW [in, out] = x^T dy; dx [T, in] = dy W^T (plus dx where acc; none where dx is NULL). */
static void mm_bwd(const double *x, const double *w, const double *dy, double *dw, double *dx, size_t T, size_t in,
                   size_t out, bool acc)
{
    memset(dw, 0, in * out * sizeof *dw);
    for (size_t t = 0; t < T; t++)
        for (size_t i = 0; i < in; i++) {
            double xv = x[t * in + i], s = 0;
            for (size_t j = 0; j < out; j++) {
                dw[i * out + j] += xv * dy[t * out + j];
                s += dy[t * out + j] * w[i * out + j];
            }
            if (dx)
                dx[t * in + i] = (acc ? dx[t * in + i] : 0) + s;
        }
}

/* One layer's tensors kept for its backward. */
typedef struct {
    double *x, *a, *q, *k, *v, *o, *lse, *mid, *n, *g, *u, *p;
} kept;

static double *alloc(double **pool, size_t n)
{
    double *p = *pool;
    *pool += n;
    return p;
}

/* LoRA (model_lora.c): y += xa B with xa = (alpha / r) x A kept in xa;
 * where the matrix is not adapted, nothing. */
static void lora_fwd(const model_state *s, const double *ad, int m, size_t l, const double *x, double *y, double *xa)
{
    if (!ad || !model_lora_adapted(s, m))
        return;
    size_t T = s->run_T, in = model_in(s, m), out = model_out(s, m), r = s->rank, p = model_lora_param(s, m, l);
    mm(x, ad + p, xa, T, in, r, false);
    for (size_t i = 0; i < T * r; i++)
        xa[i] *= s->lora_scale;
    mm(xa, ad + p + in * r, y, T, r, out, true);
}

/* The adapter's backward from dy: its gradients into ad_grad, dx += its
 * part; dxa a [T, r] scratch. */
static void lora_bwd(const model_state *s, const double *ad, double *ad_grad, int m, size_t l, const double *x,
                     const double *xa, const double *dy, double *dx, double *dxa)
{
    if (!ad || !model_lora_adapted(s, m))
        return;
    size_t T = s->run_T, in = model_in(s, m), out = model_out(s, m), r = s->rank, p = model_lora_param(s, m, l);
    mm_bwd(xa, ad + p + in * r, dy, ad_grad + p + in * r, dxa, T, r, out, false);
    for (size_t i = 0; i < T * r; i++)
        dxa[i] *= s->lora_scale;
    mm_bwd(x, ad + p, dxa, ad_grad + p, dx, T, in, r, true);
}

double model_train_ref(const model_state *s, const double *w, const double *ad_w, const uint32_t *tokens,
                       const uint32_t *targets, double *grad, double *ad_grad)
{
    const size_t T = s->run_T, h = s->h, ad = s->ad, kd = s->kd, I = s->I, V = s->V, L = s->L;
    const size_t per = T * (4 * h + 2 * ad + 2 * kd + 3 * I) + s->heads * T;
    const size_t scratch = T * (5 * h + 2 * ad + 2 * kd + 2 * I + 1) + 2 * T * V + h;
    const size_t xa_n = ad_w ? T * s->rank : 0, lora = xa_n * (L * N_LAYER_M + 1);
    double *mem = calloc(L * per + scratch + lora, sizeof *mem);
    if (!mem)
        return -1.0;
    double *pool = mem;
    kept *kl = calloc(L, sizeof *kl);
    if (!kl) {
        free(mem);
        return -1.0;
    }
    for (size_t l = 0; l < L; l++) {
        kept *c = &kl[l];
        c->x = alloc(&pool, T * h), c->a = alloc(&pool, T * h), c->q = alloc(&pool, T * ad);
        c->k = alloc(&pool, T * kd), c->v = alloc(&pool, T * kd), c->o = alloc(&pool, T * ad);
        c->lse = alloc(&pool, s->heads * T), c->mid = alloc(&pool, T * h), c->n = alloc(&pool, T * h);
        c->g = alloc(&pool, T * I), c->u = alloc(&pool, T * I), c->p = alloc(&pool, T * I);
    }
    double *xf = alloc(&pool, T * h), *f = alloc(&pool, T * h), *logits = alloc(&pool, T * V);
    double *dl = alloc(&pool, T * V), *dr = alloc(&pool, T * h), *dt = alloc(&pool, T * h);
    double *dn = alloc(&pool, T * h), *dp = alloc(&pool, T * I), *dg = alloc(&pool, T * I);
    double *d_o = alloc(&pool, T * ad), *dq = alloc(&pool, T * ad), *dk = alloc(&pool, T * kd);
    double *dv = alloc(&pool, T * kd), *loss = alloc(&pool, T), *dwn = alloc(&pool, h);
    double *xa = alloc(&pool, xa_n * L * N_LAYER_M), *dxa = alloc(&pool, xa_n);
#define XA(m) (xa + (l * N_LAYER_M + (size_t)(m)) * xa_n)
    /* The rotary tables the device uses (model_backward.c's set-up). */
    size_t tab = s->run_seq * (s->d / 2);
    float *cos_t = malloc((2 * tab + 1) * sizeof *cos_t), *sin_t = cos_t + tab;
    if (!cos_t) {
        free(kl);
        free(mem);
        return -1.0;
    }
    gm_train_rope_table(s->a.rope_theta, (unsigned)s->d, s->run_seq, cos_t, sin_t);
    gm_ref_attn_shape as = {s->run_b, s->run_seq, (unsigned)s->heads, (unsigned)s->kv_heads, (unsigned)s->d, true, 0};
    const double eps = RMS_EPS;
#define AT(m) model_param(s, (m), l)
    /* forward */
    for (size_t t = 0; t < T; t++)
        memcpy(kl[0].x + t * h, w + (size_t)tokens[t] * h, h * sizeof(double));
    for (size_t l = 0; l < L; l++) {
        kept *c = &kl[l];
        gm_ref_rmsnorm(c->x, w + AT(M_NORM1), c->a, T, (unsigned)h, eps);
        mm(c->a, w + AT(M_Q), c->q, T, h, ad, false);
        lora_fwd(s, ad_w, M_Q, l, c->a, c->q, XA(M_Q));
        mm(c->a, w + AT(M_K), c->k, T, h, kd, false);
        lora_fwd(s, ad_w, M_K, l, c->a, c->k, XA(M_K));
        /* the rotary embedding on q and k (model_rope) */
        gm_ref_rope(c->q, c->q, cos_t, sin_t, T, (unsigned)s->heads, (unsigned)s->d, s->run_seq, 0, 1.0);
        gm_ref_rope(c->k, c->k, cos_t, sin_t, T, (unsigned)s->kv_heads, (unsigned)s->d, s->run_seq, 0, 1.0);
        mm(c->a, w + AT(M_V), c->v, T, h, kd, false);
        lora_fwd(s, ad_w, M_V, l, c->a, c->v, XA(M_V));
        gm_ref_attn(&as, c->q, c->k, c->v, c->o, c->lse);
        memcpy(c->mid, c->x, T * h * sizeof(double));
        mm(c->o, w + AT(M_O), c->mid, T, ad, h, true);
        lora_fwd(s, ad_w, M_O, l, c->o, c->mid, XA(M_O));
        gm_ref_rmsnorm(c->mid, w + AT(M_NORM2), c->n, T, (unsigned)h, eps);
        mm(c->n, w + AT(M_GATE), c->g, T, h, I, false);
        lora_fwd(s, ad_w, M_GATE, l, c->n, c->g, XA(M_GATE));
        mm(c->n, w + AT(M_UP), c->u, T, h, I, false);
        lora_fwd(s, ad_w, M_UP, l, c->n, c->u, XA(M_UP));
        gm_ref_swiglu(c->g, c->u, c->p, T * I);
        double *out = l + 1 < L ? kl[l + 1].x : xf;
        memcpy(out, c->mid, T * h * sizeof(double));
        mm(c->p, w + AT(M_DOWN), out, T, I, h, true);
        lora_fwd(s, ad_w, M_DOWN, l, c->p, out, XA(M_DOWN));
    }
    gm_ref_rmsnorm(xf, w + model_param(s, M_FINAL, 0), f, T, (unsigned)h, eps);
    const double *emb = w, *head = w + model_param(s, M_LM, 0);
    for (size_t t = 0; t < T; t++)
        for (size_t j = 0; j < V; j++) {
            double acc = 0;
            for (size_t i = 0; i < h; i++)
                acc += f[t * h + i] * (s->tied ? emb[j * h + i] : head[i * V + j]);
            logits[t * V + j] = acc;
        }
    size_t counted = 0;
    for (size_t t = 0; t < T; t++)
        counted += targets[t] != GM_TRAIN_IGNORE;
    double mean = gm_ref_xent(logits, targets, T, (unsigned)V, counted ? 1.0 / (double)counted : 0.0, loss, dl);
    /* backward: the head (tied: the embedding's rows gain dlogits^T f) */
    double *g_emb = grad, *g_head = grad + model_param(s, M_LM, 0);
    memset(g_emb, 0, V * h * sizeof *g_emb);
    for (size_t t = 0; t < T; t++)
        for (size_t i = 0; i < h; i++) {
            double acc = 0;
            for (size_t j = 0; j < V; j++) {
                double d = dl[t * V + j];
                acc += d * (s->tied ? emb[j * h + i] : head[i * V + j]);
                if (s->tied)
                    g_emb[j * h + i] += d * f[t * h + i];
            }
            dt[t * h + i] = acc;
        }
    if (!s->tied)
        mm_bwd(f, head, dl, g_head, NULL, T, h, V, false);
    gm_ref_rmsnorm_bwd(xf, w + model_param(s, M_FINAL, 0), dt, dr, grad + model_param(s, M_FINAL, 0),
                       T, (unsigned)h, eps);
    for (size_t l = L; l-- > 0;) {
        kept *c = &kl[l];
        mm_bwd(c->p, w + AT(M_DOWN), dr, grad + AT(M_DOWN), dp, T, I, h, false);
        lora_bwd(s, ad_w, ad_grad, M_DOWN, l, c->p, XA(M_DOWN), dr, dp, dxa);
        gm_ref_swiglu_bwd(c->g, c->u, dp, c->g, dg, T * I);   /* d gate over the gate, d up in dg */
        mm_bwd(c->n, w + AT(M_GATE), c->g, grad + AT(M_GATE), dn, T, h, I, false);
        lora_bwd(s, ad_w, ad_grad, M_GATE, l, c->n, XA(M_GATE), c->g, dn, dxa);
        mm_bwd(c->n, w + AT(M_UP), dg, grad + AT(M_UP), dn, T, h, I, true);
        lora_bwd(s, ad_w, ad_grad, M_UP, l, c->n, XA(M_UP), dg, dn, dxa);
        gm_ref_rmsnorm_bwd(c->mid, w + AT(M_NORM2), dn, dt, dwn, T, (unsigned)h, eps);
        memcpy(grad + AT(M_NORM2), dwn, h * sizeof *dwn);
        for (size_t i = 0; i < T * h; i++)
            dr[i] += dt[i];
        mm_bwd(c->o, w + AT(M_O), dr, grad + AT(M_O), d_o, T, ad, h, false);
        lora_bwd(s, ad_w, ad_grad, M_O, l, c->o, XA(M_O), dr, d_o, dxa);
        gm_ref_attn_bwd(&as, c->q, c->k, c->v, c->o, d_o, c->lse, dq, dk, dv);
        gm_ref_rope(dq, dq, cos_t, sin_t, T, (unsigned)s->heads, (unsigned)s->d, s->run_seq, 0, -1.0);
        gm_ref_rope(dk, dk, cos_t, sin_t, T, (unsigned)s->kv_heads, (unsigned)s->d, s->run_seq, 0, -1.0);
        mm_bwd(c->a, w + AT(M_Q), dq, grad + AT(M_Q), dn, T, h, ad, false);
        lora_bwd(s, ad_w, ad_grad, M_Q, l, c->a, XA(M_Q), dq, dn, dxa);
        mm_bwd(c->a, w + AT(M_K), dk, grad + AT(M_K), dn, T, h, kd, true);
        lora_bwd(s, ad_w, ad_grad, M_K, l, c->a, XA(M_K), dk, dn, dxa);
        mm_bwd(c->a, w + AT(M_V), dv, grad + AT(M_V), dn, T, h, kd, true);
        lora_bwd(s, ad_w, ad_grad, M_V, l, c->a, XA(M_V), dv, dn, dxa);
        gm_ref_rmsnorm_bwd(c->x, w + AT(M_NORM1), dn, dt, dwn, T, (unsigned)h, eps);
        memcpy(grad + AT(M_NORM1), dwn, h * sizeof *dwn);
        for (size_t i = 0; i < T * h; i++)
            dr[i] += dt[i];
    }
    for (size_t t = 0; t < T; t++)
        for (size_t i = 0; i < h; i++)
            g_emb[(size_t)tokens[t] * h + i] += dr[t * h + i];
#undef AT
#undef XA
    free(cos_t);
    free(kl);
    free(mem);
    return mean;
}
