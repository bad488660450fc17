/* Launches of kernels/train.cl and model.cl's AdamW (train_kernels.h). */
#include "bench/workloads/train_kernels.h"

#include "bench/bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

gm_status gm_train_kernels_build(gm_device *dev, gm_precision p, bool chunked, bool fault, gm_train_kernels *k)
{
    memset(k, 0, sizeof *k);
    k->prec = p;
    k->chunked = chunked;
    if (p != GM_FP32 && p != GM_FP16 && p != GM_BF16)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "the training kernels run in fp32, fp16 or bf16, not %s",
                              gm_precision_name(p));
    char variant[32];
    gm_kernel_variant(p, chunked, variant, sizeof variant);
    gm_status st = dev->backend->program_build(dev, "train", variant, fault ? "-DGM_TRAIN_FAULT=1" : NULL, &k->train);
    if (st == GM_OK)
        st = dev->backend->program_build(dev, "model", variant, NULL, &k->model);
    struct { const char *name; gm_kernel **out; } train[] = {
        {"train_rope", &k->rope},         {"train_rmsnorm_dx", &k->norm_dx}, {"train_rmsnorm_dw", &k->norm_dw},
        {"train_swiglu_bwd", &k->swiglu}, {"train_attn_delta", &k->delta},   {"train_attn_dq", &k->dq},
        {"train_attn_dkv", &k->dkv},      {"train_xent", &k->xent},          {"train_embed_bwd", &k->embed},
        {"train_nf4_dequant", &k->nf4},   {"train_scale", &k->scale},
    };
    for (size_t i = 0; i < sizeof train / sizeof train[0] && st == GM_OK; i++)
        st = dev->backend->kernel_get(dev, k->train, train[i].name, train[i].out);
    if (st == GM_OK)
        st = dev->backend->kernel_get(dev, k->model, "model_adamw", &k->adamw);
    if (st != GM_OK) {
        gm_error saved = dev->err;
        gm_train_kernels_release(dev, k);
        dev->err = saved;
    }
    return st;
}

void gm_train_kernels_release(gm_device *dev, gm_train_kernels *k)
{
    gm_kernel *all[] = {k->rope, k->norm_dx, k->norm_dw, k->swiglu, k->delta, k->dq,
                        k->dkv,  k->xent,    k->embed,   k->nf4,    k->adamw, k->scale};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i])
            dev->backend->kernel_release(dev, all[i]);
    if (k->train)
        dev->backend->program_release(dev, k->train);
    if (k->model)
        dev->backend->program_release(dev, k->model);
    gm_precision p = k->prec;
    bool chunked = k->chunked;
    memset(k, 0, sizeof *k);
    k->prec = p;
    k->chunked = chunked;
}

static gm_status launch(gm_device *dev, const gm_train_kernels *k, gm_kernel *kern, uint64_t items, gm_arg *args,
                        int n)
{
    size_t global, local;
    gm_launch_geometry(dev, k->chunked, (size_t)items, &global, &local);
    return dev->backend->launch(dev, 0, kern, global, local, args, n);
}

void gm_train_rope_table(double theta, unsigned int dim, size_t positions, float *cos_t, float *sin_t)
{
    const unsigned int half = dim / 2;
    for (size_t p = 0; p < positions; p++)
        for (unsigned int c = 0; c < half; c++) {
            double angle = (double)p * pow(theta, -2.0 * c / dim);
            cos_t[p * half + c] = (float)cos(angle);
            sin_t[p * half + c] = (float)sin(angle);
        }
}

gm_status gm_train_rope(gm_device *dev, const gm_train_kernels *k, const gm_buffer *x, const gm_buffer *cos_t,
                        const gm_buffer *sin_t, uint64_t tokens, unsigned int heads, unsigned int dim, uint64_t seq,
                        uint64_t pos0, uint64_t x_off, float direction, uint64_t cos_off, uint64_t sin_off)
{
    gm_arg args[] = {gm_arg_buf(x),       gm_arg_buf(cos_t),  gm_arg_buf(sin_t),  gm_arg_u64(&tokens),
                     gm_arg_u32(&heads),  gm_arg_u32(&dim),   gm_arg_u64(&seq),   gm_arg_u64(&pos0),
                     gm_arg_u64(&x_off),  gm_arg_f32(&direction), gm_arg_u64(&cos_off), gm_arg_u64(&sin_off)};
    return launch(dev, k, k->rope, tokens * heads * (dim / 2), args, 12);
}

gm_status gm_train_rmsnorm_bwd(gm_device *dev, const gm_train_kernels *k, const gm_train_norm_call *c)
{
    unsigned int acc_dx = c->accumulate_dx, acc_dw = c->accumulate_dw;
    gm_arg dx[] = {gm_arg_buf(c->x),       gm_arg_buf(c->w),       gm_arg_buf(c->dy),     gm_arg_buf(c->dx),
                   gm_arg_buf(c->rstd),    gm_arg_u64(&c->rows),   gm_arg_u32(&c->width), gm_arg_f32(&c->eps),
                   gm_arg_u32(&acc_dx),    gm_arg_u64(&c->x_off),  gm_arg_u64(&c->w_off), gm_arg_u64(&c->dy_off),
                   gm_arg_u64(&c->dx_off)};
    gm_status st = launch(dev, k, k->norm_dx, c->rows, dx, 13);
    if (st != GM_OK || !c->dw)
        return st;
    gm_arg dw[] = {gm_arg_buf(c->x),      gm_arg_buf(c->dy),     gm_arg_buf(c->rstd),   gm_arg_buf(c->dw),
                   gm_arg_u64(&c->rows),  gm_arg_u32(&c->width), gm_arg_u32(&acc_dw),   gm_arg_u64(&c->x_off),
                   gm_arg_u64(&c->dy_off), gm_arg_u64(&c->dw_off)};
    return launch(dev, k, k->norm_dw, c->width, dw, 10);
}

gm_status gm_train_swiglu_bwd(gm_device *dev, const gm_train_kernels *k, const gm_buffer *g, const gm_buffer *u,
                              const gm_buffer *dp, const gm_buffer *dg, const gm_buffer *du, uint64_t n,
                              const uint64_t off[5])
{
    gm_arg args[] = {gm_arg_buf(g),       gm_arg_buf(u),       gm_arg_buf(dp),      gm_arg_buf(dg),
                     gm_arg_buf(du),      gm_arg_u64(&n),      gm_arg_u64(&off[0]), gm_arg_u64(&off[1]),
                     gm_arg_u64(&off[2]), gm_arg_u64(&off[3]), gm_arg_u64(&off[4])};
    return launch(dev, k, k->swiglu, n, args, 11);
}

gm_status gm_train_attn_bwd(gm_device *dev, const gm_train_kernels *k, const gm_train_attn_call *c)
{
    if (c->dim == 0 || c->kv_heads == 0 || c->heads % c->kv_heads)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "attention backward: head width %u, %u heads over %u K/V "
                              "heads (a multiple)", c->dim, c->heads, c->kv_heads);
    float scale = c->scale > 0 ? c->scale : 1.0f / sqrtf((float)c->dim);
    unsigned int causal = c->causal;
    uint64_t rows = c->batch * c->seq;
    uint64_t lse_head = c->lse_head ? c->lse_head : c->seq, lse_seq = c->lse_seq ? c->lse_seq : c->heads * c->seq;
    gm_arg delta[] = {gm_arg_buf(c->o),        gm_arg_buf(c->d_o),    gm_arg_buf(c->delta), gm_arg_u64(&c->batch),
                      gm_arg_u64(&c->seq),     gm_arg_u32(&c->heads), gm_arg_u32(&c->dim),  gm_arg_u64(&c->o_off),
                      gm_arg_u64(&c->do_off),  gm_arg_u64(&c->delta_off)};
    gm_status st = launch(dev, k, k->delta, rows * c->heads, delta, 10);
    gm_arg dq[] = {gm_arg_buf(c->q),          gm_arg_buf(c->k),          gm_arg_buf(c->v),      gm_arg_buf(c->d_o),
                   gm_arg_buf(c->lse),        gm_arg_buf(c->delta),      gm_arg_buf(c->dq),     gm_arg_u64(&c->batch),
                   gm_arg_u64(&c->seq),       gm_arg_u32(&c->heads),     gm_arg_u32(&c->kv_heads),
                   gm_arg_u32(&c->dim),       gm_arg_u32(&causal),       gm_arg_f32(&scale),    gm_arg_u64(&c->q_off),
                   gm_arg_u64(&c->k_off),     gm_arg_u64(&c->v_off),     gm_arg_u64(&c->do_off),
                   gm_arg_u64(&c->delta_off), gm_arg_u64(&c->lse_off),   gm_arg_u64(&lse_head), gm_arg_u64(&lse_seq),
                   gm_arg_u64(&c->dq_off)};
    if (st == GM_OK)
        st = launch(dev, k, k->dq, rows * c->heads, dq, 23);
    gm_arg dkv[] = {gm_arg_buf(c->q),      gm_arg_buf(c->k),      gm_arg_buf(c->v),        gm_arg_buf(c->d_o),
                    gm_arg_buf(c->lse),    gm_arg_buf(c->delta),  gm_arg_buf(c->dk),       gm_arg_buf(c->dv),
                    gm_arg_u64(&c->batch), gm_arg_u64(&c->seq),   gm_arg_u32(&c->heads),   gm_arg_u32(&c->kv_heads),
                    gm_arg_u32(&c->dim),   gm_arg_u32(&causal),   gm_arg_f32(&scale),      gm_arg_u64(&c->q_off),
                    gm_arg_u64(&c->k_off), gm_arg_u64(&c->v_off), gm_arg_u64(&c->do_off),  gm_arg_u64(&c->delta_off),
                    gm_arg_u64(&c->lse_off), gm_arg_u64(&lse_head), gm_arg_u64(&lse_seq), gm_arg_u64(&c->dk_off),
                    gm_arg_u64(&c->dv_off)};
    if (st == GM_OK)
        st = launch(dev, k, k->dkv, rows * c->kv_heads, dkv, 25);
    return st;
}

gm_status gm_train_xent(gm_device *dev, const gm_train_kernels *k, const gm_buffer *logits, const gm_buffer *targets,
                        const gm_buffer *dlogits, const gm_buffer *loss, uint64_t rows, unsigned int vocab, float scale,
                        uint64_t z_off, uint64_t dz_off)
{
    gm_arg args[] = {gm_arg_buf(logits), gm_arg_buf(targets), gm_arg_buf(dlogits), gm_arg_buf(loss),
                     gm_arg_u64(&rows),  gm_arg_u32(&vocab),  gm_arg_f32(&scale),  gm_arg_u64(&z_off),
                     gm_arg_u64(&dz_off)};
    return launch(dev, k, k->xent, rows, args, 9);
}

int gm_train_embed_segments(const uint32_t *tokens, size_t n, uint32_t vocab, uint32_t *order, uint32_t *seg_start,
                            uint32_t *seg_token, size_t *segments)
{
    /* A counting sort by token id: stable, O(n + vocab). */
    uint32_t *count = calloc((size_t)vocab + 1, sizeof *count);
    if (!count)
        return -1;
    for (size_t t = 0; t < n; t++) {
        if (tokens[t] >= vocab) {
            free(count);
            return -1;
        }
        count[tokens[t] + 1]++;
    }
    for (uint32_t v = 0; v < vocab; v++)
        count[v + 1] += count[v];
    for (size_t t = 0; t < n; t++)
        order[count[tokens[t]]++] = (uint32_t)t;
    size_t s = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || tokens[order[i]] != tokens[order[i - 1]]) {
            seg_start[s] = (uint32_t)i;
            seg_token[s++] = tokens[order[i]];
        }
    seg_start[s] = (uint32_t)n;
    *segments = s;
    free(count);
    return 0;
}

gm_status gm_train_embed_bwd(gm_device *dev, const gm_train_kernels *k, const gm_buffer *dx, const gm_buffer *order,
                             const gm_buffer *seg_start, const gm_buffer *seg_token, const gm_buffer *de,
                             uint64_t segments, unsigned int hidden, bool accumulate, uint64_t dx_off)
{
    unsigned int acc = accumulate;
    gm_arg args[] = {gm_arg_buf(dx), gm_arg_buf(order),     gm_arg_buf(seg_start), gm_arg_buf(seg_token),
                     gm_arg_buf(de), gm_arg_u64(&segments), gm_arg_u32(&hidden),   gm_arg_u32(&acc),
                     gm_arg_u64(&dx_off)};
    return launch(dev, k, k->embed, segments * hidden, args, 9);
}

gm_status gm_train_nf4_dequant(gm_device *dev, const gm_train_kernels *k, const gm_buffer *codes,
                               const gm_buffer *absmax_q, const gm_buffer *code2, const gm_buffer *scale2, float offset,
                               const gm_buffer *out, uint64_t n, uint64_t out_off, gm_nf4_at at)
{
    gm_arg args[] = {gm_arg_buf(codes),       gm_arg_buf(absmax_q),      gm_arg_buf(code2),
                     gm_arg_buf(scale2),      gm_arg_f32(&offset),       gm_arg_buf(out),
                     gm_arg_u64(&n),          gm_arg_u64(&out_off),      gm_arg_u64(&at.codes),
                     gm_arg_u64(&at.absmax),  gm_arg_u64(&at.scales)};
    return launch(dev, k, k->nf4, n, args, 11);
}

gm_status gm_train_scale(gm_device *dev, const gm_train_kernels *k, const gm_buffer *x, uint64_t n, uint64_t x_off,
                         float scale)
{
    gm_arg args[] = {gm_arg_buf(x), gm_arg_u64(&n), gm_arg_u64(&x_off), gm_arg_f32(&scale)};
    return launch(dev, k, k->scale, n, args, 4);
}

gm_status gm_train_adamw(gm_device *dev, const gm_train_kernels *k, const gm_buffer *w, const gm_buffer *g,
                         const gm_buffer *master, const gm_buffer *mv, uint64_t n, const gm_adamw_hyper *h)
{
    const uint64_t p_off = 0;
    const unsigned int has_master = master != NULL;
    const float bc1 = (float)(1.0 - pow(h->beta1, h->step)), bc2 = (float)(1.0 - pow(h->beta2, h->step));
    gm_arg args[] = {gm_arg_buf(w),          gm_arg_buf(g),      gm_arg_buf(master ? master : mv), gm_arg_buf(mv),
                     gm_arg_u64(&n),         gm_arg_u64(&p_off), gm_arg_u64(&n),                   gm_arg_u32(&has_master),
                     gm_arg_f32(&h->lr),     gm_arg_f32(&h->beta1), gm_arg_f32(&h->beta2),         gm_arg_f32(&h->eps),
                     gm_arg_f32(&h->weight_decay), gm_arg_f32(&bc1), gm_arg_f32(&bc2)};
    return launch(dev, k, k->adamw, n, args, 15);
}
