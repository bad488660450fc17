/*
 * The whole model's attention output checked whole on the device during
 * the verify's replay (kernels/attention.cl, model_attention_verify: each
 * (token, query head) row recomputed, our fused kernel's and the vendor
 * path's alike), and the fault that proves it (output_fault.h:
 * corrupt-product:attn, flip-product-bit:attn). bench/workloads/model_private.h.
 */
#include "bench/workloads/model_private.h"
#include "bench/workloads/device_check.h"
#include "bench/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_DIM 256          /* GM_ATTN_MAX_DIM in kernels/attention.cl */

gm_status model_attention_done(model_state *st, uint64_t l)
{
    if (st->pfault.kind == GM_OUTPUT_FAULT_NONE || st->pfault_m != MODEL_ATTN_SITE || l != st->pfault_layer)
        return GM_OK;
    char label[48];
    snprintf(label, sizeof label, "layer %llu %s", (unsigned long long)l, gm_output_fault_attn);
    loc o = model_locs(st, l).o;
    /* The tokens the iteration runs: the whole batch, or an oom probe's
     * first tokens, which lead the layout. */
    return gm_output_fault_strike_product(&st->pfault, st->dev, o.buf, (size_t)(o.off * st->es),
                                          (size_t)(st->run_T * st->ad), st->es, st->p, gm_output_fault_salt(label),
                                          label, NULL);
}

/* The check cannot run: the sampled check stands alone from here, and
 * the note says why. */
static void attention_off(model_pcheck *pc, const char *why)
{
    pc->attn_on = false;
    snprintf(pc->attn_off, sizeof pc->attn_off, "%s", why);
}

/* The kernel's arguments but the verdict (set by gm_device_check_run). */
typedef struct {
    unsigned int run_b, run_seq, heads, kv_group, dim, has_lse, gemm;
    uint64_t seq, ad, kd, lse_head, report_at;
    float scale, out_rel, out_abs, pv_u, p_u, p_abs;
} verify_args;

/* One launch over every row of layer l; the groups' largest ratios (and
 * where report_at names an element, its want, got and tolerance) into
 * the host's worst[groups + 3]. */
static gm_status launch(model_state *st, layer_locs *c, verify_args *x, gm_device_verdict *v, float *worst,
                        size_t groups)
{
    gm_buffer *lse = c->lse.buf ? c->lse.buf : c->o.buf;
    gm_arg args[] = {gm_arg_buf(c->q.buf),      gm_arg_buf(c->k.buf),      gm_arg_buf(c->v.buf),
                     gm_arg_buf(c->o.buf),      gm_arg_buf(lse),           gm_arg_buf(&st->attn_verdict),
                     gm_arg_buf(&st->attn_worst), gm_arg_u32(&x->run_b),   gm_arg_u32(&x->run_seq),
                     gm_arg_u32(&x->heads),     gm_arg_u32(&x->kv_group),  gm_arg_u32(&x->dim),
                     gm_arg_u64(&x->seq),       gm_arg_u64(&x->ad),        gm_arg_u64(&x->kd),
                     gm_arg_u64(&c->q.off),     gm_arg_u64(&c->k.off),     gm_arg_u64(&c->v.off),
                     gm_arg_u64(&c->o.off),     gm_arg_u64(&c->lse.off),   gm_arg_u64(&x->lse_head),
                     gm_arg_u32(&x->has_lse),   gm_arg_u32(&x->gemm),      gm_arg_f32(&x->scale),
                     gm_arg_f32(&x->out_rel),   gm_arg_f32(&x->out_abs),   gm_arg_f32(&x->pv_u),
                     gm_arg_f32(&x->p_u),       gm_arg_f32(&x->p_abs),     gm_arg_u64(&x->report_at)};
    size_t rows = (size_t)(st->run_b * st->run_seq * st->heads);
    uint64_t of = x->lse_head * (x->ad + x->heads);
    gm_status rc = gm_device_check_run(st->dev, st->k_attn_verify, st->chunked, rows, args,
                                       (int)(sizeof args / sizeof args[0]), 5, &st->attn_verdict, of, v);
    gm_buffer host = {.kind = GM_MEM_HOST, .bytes = (groups + 3) * sizeof(float), .host = worst};
    if (rc == GM_OK)
        rc = st->dev->backend->copy(st->dev, 0, &host, 0, &st->attn_worst, 0, host.bytes, false);
    return rc;
}

/* The note of a wrong element: its place, how far off, the tolerance. */
static void wrong_note(model_state *st, uint64_t l, const verify_args *x, const gm_device_verdict *v,
                       const float *report)
{
    model_pcheck *pc = st->pcheck;
    uint64_t at = v->first, o_n = x->lse_head * x->ad;
    double off = fabs((double)report[1] - (double)report[0]);
    int n;
    if (at < o_n)
        n = snprintf(pc->note, pc->note_len, "layer %llu attention row [%llu] column %llu: off by %.7g (tolerance "
                     "%.3g), found by the device's attention check", (unsigned long long)l,
                     (unsigned long long)(at / x->ad), (unsigned long long)(at % x->ad), off, (double)report[2]);
    else
        n = snprintf(pc->note, pc->note_len, "layer %llu attention lse [head %llu][%llu]: off by %.7g (tolerance "
                     "%.3g), found by the device's attention check", (unsigned long long)l,
                     (unsigned long long)((at - o_n) / x->lse_head), (unsigned long long)((at - o_n) % x->lse_head),
                     off, (double)report[2]);
    if (n > 0 && (size_t)n < pc->note_len)
        snprintf(pc->note + n, pc->note_len - (size_t)n, "; %llu of %llu elements wrong", (unsigned long long)v->wrong,
                 (unsigned long long)(st->run_T * (st->ad + (x->has_lse ? st->heads : 0))));
}

gm_status model_attention_check(model_state *st, uint64_t l)
{
    model_pcheck *pc = st->pcheck;
    if (!pc || !pc->attn_on || pc->failed)
        return GM_OK;
    if (st->d > MAX_DIM) {
        char why[96];
        snprintf(why, sizeof why, "head dimension %llu exceeds the device check's %d", (unsigned long long)st->d,
                 MAX_DIM);
        attention_off(pc, why);
        return GM_OK;
    }
    gm_device *dev = st->dev;
    gm_status rc = st->k_attn_verify ? GM_OK
                                     : dev->backend->kernel_get(dev, st->p_attn, "model_attention_verify",
                                                                &st->k_attn_verify);
    if (rc != GM_OK)
        return rc;
    size_t global, local;
    gm_launch_geometry(dev, st->chunked, (size_t)(st->run_b * st->run_seq * st->heads), &global, &local);
    size_t groups = global / local, bytes = (groups + 3) * sizeof(float);
    gm_error before = dev->err;
    if (st->attn_worst.bytes < bytes) {
        gm_device_free(dev, &st->attn_worst);
        rc = gm_device_alloc(dev, GM_MEM_DEVICE, bytes, &st->attn_worst);
    }
    float *worst = malloc(bytes);
    if (rc == GM_OK && !worst)
        rc = gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    /* The output's rounding on either side, 2 gm_tolerance(p, want) <=
     * out_rel |want| + out_abs (as the attention workload's); the vendor
     * path's probabilities in p, its PV sums in fp32 or fp16. */
    bool integer = st->p == GM_INT8;
    verify_args x = {.run_b = (unsigned int)st->run_b, .run_seq = (unsigned int)st->run_seq,
                     .heads = (unsigned int)st->heads, .kv_group = (unsigned int)(st->heads / st->kv_heads),
                     .dim = (unsigned int)st->d, .has_lse = st->train, .gemm = st->attn_gemm, .seq = st->seq,
                     .ad = st->ad, .kd = st->kd, .lse_head = st->T, .scale = ACT,
                     .out_rel = integer ? 0.0f : (float)(2.0 * gm_tolerance(st->p, 1.0, ACT)),
                     .out_abs = (float)(2.0 * gm_tolerance(st->p, 0.0, ACT)),
                     .pv_u = st->attn_half_sums ? 0x1p-11f : 0x1p-24f, .p_u = (float)gm_unit_roundoff(st->p),
                     .p_abs = st->p == GM_FP16 ? 0x1p-24f : 0x1p-126f};
    x.report_at = x.lse_head * (x.ad + x.heads);
    layer_locs c = model_locs(st, l);
    gm_device_verdict v = {0};
    if (rc == GM_OK)
        rc = launch(st, &c, &x, &v, worst, groups);
    if (rc == GM_ERR_OOM) {
        /* No room for the verdicts (an oom probe at the edge of its cap). */
        dev->err = before;
        attention_off(pc, "no device memory for its verdicts");
        free(worst);
        return GM_OK;
    }
    for (size_t g = 0; rc == GM_OK && g < groups; g++)
        pc->attn_worst = worst[g] > pc->attn_worst ? worst[g] : pc->attn_worst;
    if (rc == GM_OK && v.wrong) {
        /* Again, to read the first wrong element's want, got and tolerance. */
        gm_device_verdict again;
        x.report_at = v.first;
        rc = launch(st, &c, &x, &again, worst, groups);
        if (rc == GM_OK) {
            pc->failed = true;
            wrong_note(st, l, &x, &v, worst + groups);
        }
    }
    if (rc == GM_OK)
        pc->attn_checked++;
    free(worst);
    return rc;
}
