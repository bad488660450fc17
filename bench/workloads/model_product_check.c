/*
 * The whole model's products checked whole on the device during the
 * verify's replay and, in training, the verify's backward
 * (product_device_check.h: column checksums over blocks of rows; int8
 * products: product_device_check_int8.h), and the product faults that
 * prove it (output_fault.h: corrupt-product, flip-product-bit).
 * bench/workloads/model_private.h.
 */
#include "bench/workloads/model_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The matrices of gm_output_fault_products, in its order. */
static const int fault_matrix[GM_OUTPUT_FAULT_PRODUCTS] = {M_Q, M_K, M_V, M_O, M_GATE, M_UP, M_DOWN, M_LM};

/* Scratch of the checksums: 1/64 of what the workload holds, within
 * [1 MiB, 64 MiB] (but one block of rows, product_device_check.h). */
#define SCRATCH_MIN ((uint64_t)1 << 20)
#define SCRATCH_MAX ((uint64_t)64 << 20)

const char *model_product_name(int m)
{
    for (int i = 0; i < GM_OUTPUT_FAULT_PRODUCTS; i++)
        if (fault_matrix[i] == m)
            return gm_output_fault_products[i];
    return "product";
}

gm_status model_product_fault_setup(model_state *st)
{
    gm_output_fault f;
    st->pfault.kind = GM_OUTPUT_FAULT_NONE;
    if (gm_output_fault_parse(getenv("GPUMEM_FAULT"), getenv("GPUMEM_FAULT_SEED"), &f) != 0
        || f.site != GM_OUTPUT_FAULT_SITE_PRODUCT || f.kind == GM_OUTPUT_FAULT_NONE)
        return GM_OK;
    /* attn (the attention's output) is named, never drawn. */
    bool attn = f.product == GM_OUTPUT_FAULT_ATTN;
    int product = f.product >= 0 ? f.product
                                 : (int)gm_output_fault_index(&f, gm_output_fault_salt("model product"), 0,
                                                              GM_OUTPUT_FAULT_PRODUCTS);
    uint64_t layer = f.layer >= 0 ? (uint64_t)f.layer
                                  : (uint64_t)gm_output_fault_index(&f, gm_output_fault_salt("model layer"), 0,
                                                                    (size_t)st->L);
    if ((attn || fault_matrix[product] != M_LM) && layer >= st->L)
        return gm_device_fail(st->dev, GM_ERR_INVALID, 0, "GPUMEM_FAULT names layer %llu of a %llu-layer model",
                              (unsigned long long)layer, (unsigned long long)st->L);
    const char *missing = f.role == R_FWD || attn           ? NULL
                          : !st->train                      ? "a backward product, and the run has no training step"
                          : f.role == R_DW && st->lora      ? "a dW of LoRA's frozen base"
                          : f.role < R_LORA_DB              ? NULL
                          : !st->lora                       ? "a LoRA product, and the run has no adapters"
                          : fault_matrix[product] == M_LM
                                  || !model_lora_adapted(st, fault_matrix[product])
                                                            ? "a LoRA product of a matrix without an adapter"
                                                            : NULL;
    if (missing)
        return gm_device_fail(st->dev, GM_ERR_INVALID, 0, "GPUMEM_FAULT names %s", missing);
    st->pfault = f;
    st->pfault_role = f.role;
    st->pfault_m = attn ? MODEL_ATTN_SITE : fault_matrix[product];
    st->pfault_layer = !attn && fault_matrix[product] == M_LM ? st->L : layer;
    return GM_OK;
}

/* "layer L ROLE NAME", or the head's ROLE NAME (ROLE output_fault.h's
 * prefix, "lora_" for LoRA's forward terms). */
static void product_label(model_site s, char *buf, size_t len)
{
    const char *role = s.role == R_LORA_FWD ? "lora_" : gm_output_fault_roles[s.role];
    if (s.m == M_LM)
        snprintf(buf, len, "%s%s", role, model_product_name(s.m));
    else
        snprintf(buf, len, "layer %llu %s%s", (unsigned long long)s.layer, role, model_product_name(s.m));
}

/* Scratch for the checksums of a product in weights' precision: the kernels built at the first. */
static gm_status abft_for(model_state *st, const gm_mm *op, gm_abft **x)
{
    *x = op->b_scales ? &st->abft4 : &st->abft;
    if ((*x)->dev)
        return GM_OK;
    return gm_abft_init(*x, st->dev, st->p, op->b_scales ? GM_INT4 : st->p, st->chunked, st->pcheck->limit);
}

/* The checksums cannot run (no scratch, a product they do not cover):
 * the sampled checks stand alone from here, and the note says why. */
static void checks_off(model_pcheck *pc, const char *why)
{
    pc->on = false;
    snprintf(pc->off, sizeof pc->off, "%s", why);
}

gm_status model_product_before(model_state *st, const gm_mm *op)
{
    model_pcheck *pc = st->pcheck;
    if (!pc || !pc->on || pc->failed)
        return GM_OK;
    gm_abft *x;
    gm_status rc = abft_for(st, op, &x);
    gm_error before = st->dev->err;
    if (rc == GM_OK)
        rc = gm_abft_before(x, op);
    if (rc == GM_ERR_OOM) {
        st->dev->err = before;
        checks_off(pc, "no device memory for the checksums' sums before a product added in place");
        return GM_OK;
    }
    return rc;
}

gm_status model_product_done(model_state *st, model_site site, const gm_mm *op, bool half_sums, bool b_rounded)
{
    gm_status rc = GM_OK;
    /* The product's name, formatted only for a strike or a failure: this
     * runs after every product of the timed forward and backward too. */
    char label[64];
    int m = site.m;
    uint64_t layer = site.layer;
    if (st->pfault.kind != GM_OUTPUT_FAULT_NONE && m == st->pfault_m && site.role == st->pfault_role
        && (m == M_LM || layer == st->pfault_layer)) {
        product_label(site, label, sizeof label);
        size_t es = op->c_fp32 ? 4 : st->es;
        rc = gm_output_fault_strike_product(&st->pfault, st->dev, (gm_buffer *)op->c.buf, (size_t)op->c.off * es,
                                            (size_t)(op->m * op->n), es, op->c_fp32 ? GM_FP32 : st->p,
                                            gm_output_fault_salt(label), label, NULL);
    }
    model_pcheck *pc = st->pcheck;
    if (rc != GM_OK || !pc || !pc->on || pc->failed)
        return rc;
    gm_abft_finding f;
    gm_error before = st->dev->err;
    if (op->prec == GM_INT8) {
        rc = st->abft8.dev ? GM_OK : gm_abft_i8_init(&st->abft8, st->dev, st->chunked, pc->limit);
        if (rc != GM_OK)
            return rc;
        rc = gm_abft_i8_check(&st->abft8, op, &f);
    } else {
        gm_abft *x;
        rc = abft_for(st, op, &x);
        if (rc != GM_OK)
            return rc;
        rc = gm_abft_check(x, &st->mm, op, half_sums, b_rounded, &f);
    }
    if (rc == GM_ERR_OOM) {
        /* No room for the scratch (an oom probe at the edge): the sampled
         * checks stand alone for the rest of the replay. */
        st->dev->err = before;
        checks_off(pc, f.why);
        return GM_OK;
    }
    if (rc != GM_OK)
        return rc;
    if (!f.checked) {
        checks_off(pc, f.why);
        return GM_OK;
    }
    pc->checked++;
    if (f.ok)
        return GM_OK;
    pc->failed = true;
    product_label(site, label, sizeof label);
    int n = snprintf(pc->note, pc->note_len,
                     "%s rows [%llu, %llu) column %llu: block sum off by %.7g (tolerance %.3g), found by the device "
                     "checksums", label, (unsigned long long)f.row_first, (unsigned long long)f.row_last + 1,
                     (unsigned long long)f.col, f.diff, f.tol);
    if (f.located && n > 0 && (size_t)n < pc->note_len)
        snprintf(pc->note + n, pc->note_len - (size_t)n, "; element [%llu][%llu] is wrong",
                 (unsigned long long)f.row, (unsigned long long)f.col);
    else if (f.in_place && n > 0 && (size_t)n < pc->note_len)
        snprintf(pc->note + n, pc->note_len - (size_t)n, " (added in place: the element is not located)");
    return GM_OK;
}

void model_pcheck_begin(model_state *st, model_pcheck *pc, char *note, size_t len, bool backward)
{
    uint64_t held = 0;
    for (int i = 0; i < N_B; i++)
        held += st->buf[i].bytes;
    uint64_t limit = held / 64;
    limit = limit < SCRATCH_MIN ? SCRATCH_MIN : limit > SCRATCH_MAX ? SCRATCH_MAX : limit;
    *pc = (model_pcheck){.on = true, .note = note, .note_len = len, .limit = limit, .backward = backward,
                         .attn_on = !backward};
    const char *mode = getenv("GPUMEM_PRODUCT_CHECK");
    if (mode && strcmp(mode, "sampled") == 0 && !backward) {
        pc->attn_on = false;
        snprintf(pc->attn_off, sizeof pc->attn_off, "GPUMEM_PRODUCT_CHECK=sampled");
    }
    if (st->p != GM_FP32 && st->p != GM_FP16 && st->p != GM_BF16 && st->p != GM_INT8 && !GM_PREC_IS_FP8(st->p)) {
        pc->on = false;
        snprintf(pc->off, sizeof pc->off, "no device checksums for %s products", gm_precision_name(st->p));
    } else if (mode && strcmp(mode, "sampled") == 0) {
        pc->on = false;
        snprintf(pc->off, sizeof pc->off, "GPUMEM_PRODUCT_CHECK=sampled");
    }
    st->abft.limit = st->abft4.limit = st->abft8.limit = limit;
    st->pcheck = pc;
}

void model_pcheck_end(model_state *st, model_pcheck *pc)
{
    st->pcheck = NULL;
    if (st->abft.dev)
        gm_abft_free_scratch(&st->abft);
    if (st->abft4.dev)
        gm_abft_free_scratch(&st->abft4);
    if (st->abft8.dev)
        gm_abft_i8_free_scratch(&st->abft8);
    gm_device_free(st->dev, &st->attn_verdict);
    gm_device_free(st->dev, &st->attn_worst);
    if (pc->backward && pc->off[0])
        snprintf(st->pcheck_bwd_note, sizeof st->pcheck_bwd_note, "not checked whole (%s)", pc->off);
    else if (pc->backward)
        snprintf(st->pcheck_bwd_note, sizeof st->pcheck_bwd_note, "%llu checked whole on the device",
                 (unsigned long long)pc->checked);
    else if (pc->off[0])
        snprintf(st->pcheck_note, sizeof st->pcheck_note, "products checked on sampled rows (%s)", pc->off);
    else
        snprintf(st->pcheck_note, sizeof st->pcheck_note,
                 "every product checked whole on the device (%llu: column checksums over blocks of rows)",
                 (unsigned long long)pc->checked);
    if (pc->backward)
        return;
    /* The attention's part after the products'. */
    size_t n = strlen(st->pcheck_note), left = sizeof st->pcheck_note - n;
    if (pc->attn_off[0])
        snprintf(st->pcheck_note + n, left, "; attention checked on sampled rows (%s)", pc->attn_off);
    else if (pc->attn_checked < st->L)      /* the replay stopped early (a failure) */
        snprintf(st->pcheck_note + n, left, "; the attention of %llu of %llu layers checked whole on the device",
                 (unsigned long long)pc->attn_checked, (unsigned long long)st->L);
    else
        snprintf(st->pcheck_note + n, left,
                 "; the attention of every layer checked whole on the device (%llu: recomputed row by row, largest "
                 "difference %.2g of its tolerance)", (unsigned long long)pc->attn_checked, pc->attn_worst);
}

void model_pcheck_release(model_state *st)
{
    gm_abft_release(&st->abft);
    gm_abft_release(&st->abft4);
    gm_abft_i8_release(&st->abft8);
}
