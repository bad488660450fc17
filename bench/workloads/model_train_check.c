/*
 * The check of the whole model's training step (bench/workloads/
 * model_private.h, "Checks"), after the forward replay and the loss: the
 * backward pass once more, its loss and every parameter's gradient against
 * the double-precision step of model_train_ref.c (models small enough for
 * the CPU: MODEL_REF_WORK), then one AdamW step on a seeded sample of
 * parameters against train_ref.h's, and a fresh forward and backward so
 * that the next iteration's AdamW takes the gradients of the weights it
 * updates. Every product of both backward passes is checked whole on the
 * device as it runs (model_product_check.c).
 */
#include "bench/workloads/model_check.h"
#include "bench/workloads/train_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reference runs where tokens x parameters is at most this (about 6
 * times as many multiply-adds in double: a second or two). */
#define MODEL_REF_WORK ((uint64_t)1 << 28)

/* Tolerances of a gradient against the reference: |got - want| <= rel
 * |want| + abs rms(want) over the matrix. The device stores activations
 * and gradients in its precision and sums in fp32. */
static void tolerance(gm_precision p, double *rel, double *abs)
{
    *rel = p == GM_FP32 ? 2e-3 : p == GM_FP16 ? 3e-2 : 8e-2;
    *abs = p == GM_FP32 ? 2e-3 : p == GM_FP16 ? 3e-2 : 8e-2;
}

static const char *matrix_name(int m)
{
    static const char *const names[] = {"norm1", "q", "k", "v", "o", "norm2", "gate", "up", "down",
                                        "embedding", "final_norm", "lm_head"};
    return names[m];
}

/* QLoRA: every parameter in the model's order, the projections
 * dequantised here from the device's NF4 codes, the others as stored. */
static gm_status read_nf4_params(checker *c, double *w, float *tmp)
{
    model_state *st = c->st;
    gm_status rc = GM_OK;
    /* the layers' matrices, then (l == L) the embedding, final norm and head */
    for (uint64_t l = 0; l <= st->L && rc == GM_OK; l++)
        for (int m = l < st->L ? 0 : N_LAYER_M; m < (l < st->L ? N_LAYER_M : N_M) && rc == GM_OK; m++) {
            if (m == M_LM && st->tied)
                continue;
            uint64_t at = model_param(st, m, l), n = model_in(st, m) * model_out(st, m);
            if (model_is_nf4(st, m)) {
                rc = model_nf4_host(st, m, l, w + at);
                continue;
            }
            rc = check_read(c, model_loc(st, m, l), 0, n, st->es, st->p, 1.0f, tmp);
            for (uint64_t i = 0; rc == GM_OK && i < n; i++)
                w[at + i] = tmp[i];
        }
    return rc;
}

/* Every parameter of the device as doubles, in the model's order. */
static gm_status read_params(checker *c, double *w, float *tmp)
{
    model_state *st = c->st;
    if (st->nf4)
        return read_nf4_params(c, w, tmp);
    gm_status rc = check_read(c, (loc){&st->buf[B_W], 0}, 0, st->p_main, st->es, st->p, 1.0f, tmp);
    if (rc == GM_OK && !st->tied)
        rc = check_read(c, (loc){&st->buf[B_LM], 0}, 0, st->p_total - st->p_main, st->es, st->p, 1.0f,
                        tmp + st->p_main);
    for (uint64_t i = 0; rc == GM_OK && i < st->p_total; i++)
        w[i] = tmp[i];
    return rc;
}

/* An untied embedding's gradient is zero but in the rows of the tokens
 * that occur: those rows must be exactly zero on the device (else notes
 * the first and returns 0), and the others are moved to the front of got
 * and want (an rms over the zero rows would make the tolerance
 * meaningless). Returns how many values are at the front. */
static uint64_t pack_embedding_rows(checker *c, float *got, double *want)
{
    model_state *st = c->st;
    uint64_t h = st->h, kept = 0;
    for (uint64_t r = 0; r < st->V && c->ok; r++) {
        bool occurs = false;
        for (uint64_t j = 0; j < h; j++)
            occurs = occurs || want[r * h + j] != 0.0;
        for (uint64_t j = 0; j < h && !occurs && c->ok; j++)
            if (got[r * h + j] != 0.0f) {
                snprintf(c->note, c->note_len, "gradient of embedding row %llu (a token that does not occur): "
                         "[%llu] is %.6g, not 0", (unsigned long long)r, (unsigned long long)j,
                         (double)got[r * h + j]);
                c->ok = false;
            }
        if (occurs) {
            memmove(got + kept, got + r * h, h * sizeof *got);
            memmove(want + kept, want + r * h, h * sizeof *want);
            kept += h;
        }
    }
    return c->ok ? kept : 0;
}

/* LoRA: each adapter's A and B gradients against the reference's, in the
 * backward's order (the first off names the stage that went wrong). */
static void check_adapter_gradients(checker *c, const float *got, const double *want, double rel, double abs)
{
    model_state *st = c->st;
    static const int order[] = {M_DOWN, M_UP, M_GATE, M_O, M_V, M_K, M_Q};
    for (uint64_t l = st->L; l-- > 0 && c->ok;)
        for (int i = 0; i < 7 && c->ok; i++) {
            int m = order[i];
            if (!model_lora_adapted(st, m))
                continue;
            uint64_t p = model_lora_param(st, m, l), na = model_in(st, m) * st->rank;
            for (int part = 0; part < 2 && c->ok; part++) {
                uint64_t at = part ? p + na : p, len = part ? st->rank * model_out(st, m) : na;
                gm_ref_diff d;
                gm_ref_compare(got + at, want + at, (size_t)len, rel, abs, &d);
                if (d.off > (st->p == GM_FP32 ? 0 : len / 1000)) {
                    snprintf(c->note, c->note_len, "gradient of LoRA %s of %s (layer %llu): %zu of %llu elements off "
                             "the double-precision step, worst [%zu] expected %.6g got %.6g (rms %.3g)",
                             part ? "B" : "A", matrix_name(m), (unsigned long long)l, d.off, (unsigned long long)len,
                             d.worst_at, want[at + d.worst_at], (double)got[at + d.worst_at], d.rms);
                    c->ok = false;
                }
            }
        }
}

/* The device's loss and gradients (grads in tmp) against the reference. */
static gm_status check_gradients(checker *c, double device_loss)
{
    model_state *st = c->st;
    size_t n = (size_t)st->run_T, P = (size_t)st->p_total;
    double *w = malloc(P * sizeof *w), *want = calloc(P, sizeof *want);
    float *got = malloc(P * sizeof *got);
    uint32_t *tokens = malloc(n * 4), *targets = malloc(n * 4);
    gm_status rc = w && want && got && tokens && targets ? GM_OK : gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    if (rc == GM_OK)
        rc = read_params(c, w, got);
    if (rc == GM_OK)
        rc = st->dev->backend->copy(st->dev, 0, &c->stage, 0, &st->buf[B_TGT], 0, n * 4, false);
    if (rc == GM_OK) {
        memcpy(targets, c->stage.host, n * 4);
        for (size_t t = 0; t < n; t++)
            tokens[t] = check_host_token(t, (uint32_t)st->V);
        if (!st->lora)
            rc = check_read(c, (loc){model_grads(st), 0}, 0, P, st->es, st->p, 1.0f, got);
    }
    /* LoRA: the adapters and their gradients besides (the base's
     * gradients the reference computes are not the device's). */
    size_t Pa = st->lora ? (size_t)st->lora_p : 0;
    double *ad = Pa ? malloc(Pa * sizeof *ad) : NULL, *ad_want = Pa ? calloc(Pa, sizeof *ad_want) : NULL;
    float *ad_got = Pa ? malloc(Pa * sizeof *ad_got) : NULL;
    if (rc == GM_OK && Pa && !(ad && ad_want && ad_got))
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    if (rc == GM_OK && Pa)
        rc = check_read(c, (loc){&st->buf[B_AD], 0}, 0, Pa, st->es, st->p, 1.0f, ad_got);
    for (size_t i = 0; rc == GM_OK && i < Pa; i++)
        ad[i] = ad_got[i];
    if (rc == GM_OK && Pa)
        rc = check_read(c, (loc){model_grads(st), 0}, 0, Pa, st->es, st->p, 1.0f, ad_got);
    double loss = rc == GM_OK ? model_train_ref(st, w, ad, tokens, targets, want, ad_want) : 0.0;
    if (rc == GM_OK && loss < 0)
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    double rel, abs;
    tolerance(st->p, &rel, &abs);
    if (rc == GM_OK && !(fabs(device_loss - loss) <= rel * 0.1 * fabs(loss) + 1e-6)) {
        snprintf(c->note, c->note_len, "training loss: expected %.9g (double-precision step), got %.9g", loss,
                 device_loss);
        c->ok = false;
    }
    /* In the backward's order, so that the first gradient off names the
     * stage that went wrong (the error flows on to every one after it). */
    static const int layer_order[] = {M_DOWN, M_UP, M_GATE, M_NORM2, M_O, M_V, M_K, M_Q, M_NORM1};
    if (st->lora)
        check_adapter_gradients(c, ad_got, ad_want, rel, abs);
    uint64_t n_checks = st->lora ? 0 : 2 + st->L * N_LAYER_M + 1;
    for (uint64_t i = 0; i < n_checks && rc == GM_OK && c->ok; i++) {
        uint64_t l = i < 2 || i + 1 == n_checks ? 0 : st->L - 1 - (i - 2) / N_LAYER_M;
        int m = i == 0 ? M_LM : i == 1 ? M_FINAL : i + 1 == n_checks ? M_EMB : layer_order[(i - 2) % N_LAYER_M];
        if (m == M_LM && st->tied)
            continue;
        uint64_t at = model_param(st, m, l), len = model_in(st, m) * model_out(st, m);
        if (m == M_EMB && !st->tied)
            len = pack_embedding_rows(c, got, want);
        gm_ref_diff d;
        gm_ref_compare(got + at, want + at, (size_t)len, rel, abs, &d);
        /* 16-bit: a gradient summed from parts stored in 16 bits that
         * cancel (a tied embedding's head and lookup parts) may leave a few
         * elements off; one in a thousand at most. */
        if (d.off > (st->p == GM_FP32 ? 0 : len / 1000) && c->ok) {
            snprintf(c->note, c->note_len, "gradient of %s (layer %llu): %zu of %llu elements off the "
                     "double-precision step, worst [%zu] expected %.6g got %.6g (rms %.3g)", matrix_name(m),
                     (unsigned long long)l, d.off, (unsigned long long)len, d.worst_at, want[at + d.worst_at],
                     (double)got[at + d.worst_at], d.rms);
            c->ok = false;
        }
    }
    free(w);
    free(want);
    free(got);
    free(tokens);
    free(targets);
    free(ad);
    free(ad_want);
    free(ad_got);
    return rc;
}

/* One AdamW step on a seeded sample of parameters against the reference. */
static gm_status check_adamw_step(checker *c, unsigned rep)
{
    model_state *st = c->st;
    uint64_t x = 0x2545f4914f6cdd1dull ^ ((uint64_t)rep << 20), idx[CHECK_PARAMS];
    /* before: weight, gradient, m, v, master; after: weight, m, v, master */
    float before[CHECK_PARAMS][5] = {{0}}, after[CHECK_PARAMS][4] = {{0}};
    /* LoRA: the adapters' step (the base does not move). */
    const uint64_t np = st->lora ? st->lora_p : st->p_total;
    const int grad = st->lora ? B_AGRAD : B_GRAD, mom = st->lora ? B_AMOM : B_MOM,
              mst = st->lora ? B_AMASTER : B_MASTER;
    gm_status rc = GM_OK;
    for (int pass = 0; pass < 2 && rc == GM_OK; pass++) {
        if (pass == 1)
            rc = model_adamw(st);
        for (int i = 0; i < CHECK_PARAMS && rc == GM_OK; i++) {
            uint64_t p = pass ? idx[i] : i == 0 ? 0 : i == 1 ? np - 1 : gm_xorshift(&x) % np;
            idx[i] = p;
            bool in_lm = !st->lora && p >= st->p_main;
            loc wl = in_lm ? (loc){&st->buf[B_LM], 0} : (loc){&st->buf[st->lora ? B_AD : B_W], 0};
            uint64_t wi = in_lm ? p - st->p_main : p;
            float *o = pass ? after[i] : before[i];
            float *mv = pass ? &o[1] : &o[2], *master = pass ? &o[3] : &o[4];
            rc = check_read(c, wl, wi, 1, st->es, st->p, 1.0f, &o[0]);
            if (rc == GM_OK && !pass)
                rc = check_read(c, (loc){st->zoff ? model_grads(st) : &st->buf[grad], 0}, p, 1, st->es, st->p, 1.0f,
                                &o[1]);
            if (rc == GM_OK)
                rc = check_read(c, (loc){&st->buf[mom], 0}, p, 1, 4, GM_FP32, 1.0f, &mv[0]);
            if (rc == GM_OK)
                rc = check_read(c, (loc){&st->buf[mom], 0}, np + p, 1, 4, GM_FP32, 1.0f, &mv[1]);
            if (rc == GM_OK && st->master)
                rc = check_read(c, (loc){&st->buf[mst], 0}, p, 1, 4, GM_FP32, 1.0f, master);
        }
    }
    /* --zero-offload: the device's weights are the host's master weights
     * rounded to the compute precision, bit for bit (the upload). */
    for (int i = 0; i < CHECK_PARAMS && rc == GM_OK && c->ok && st->zoff; i++) {
        float want = (float)check_stored(st->p, after[i][3], 1.0f);
        if (after[i][0] != want) {
            snprintf(c->note, c->note_len, "weight of %sparameter %llu on the device after the host's AdamW step %u: "
                     "expected %.9g (the host's master weight %.9g rounded), got %.9g", st->lora ? "adapter " : "",
                     (unsigned long long)idx[i], st->steps, (double)want, (double)after[i][3], (double)after[i][0]);
            c->ok = false;
        }
    }
    for (int i = 0; i < CHECK_PARAMS && rc == GM_OK && c->ok; i++) {
        double w = before[i][0], g = before[i][1], m = before[i][2], v = before[i][3], mw = before[i][4];
        gm_ref_adamw(&w, &g, st->master ? &mw : NULL, &m, &v, 1, st->steps, LR, BETA1, BETA2, ADAM_EPS, WEIGHT_DECAY);
        double want[4] = {check_stored(st->p, w, 1.0f), m, v, mw};
        static const char *const what[] = {"weight", "adamw_m", "adamw_v", "master_weight"};
        for (int k = 0; k < (st->master ? 4 : 3) && c->ok; k++) {
            /* fp32's bias corrections (1 - beta2^t to about 1e-5 at small t)
             * move the update by that fraction of LR. */
            double tol = 1e-5 * fabs(want[k]) + 2e-5 * LR + 1e-12 + (k == 0 ? gm_tolerance(st->p, want[k], 1.0f) : 0.0);
            if (!(fabs(after[i][k] - want[k]) <= tol)) {
                snprintf(c->note, c->note_len, "%s of %sparameter %llu after AdamW step %u: expected %.9g, got %.9g",
                         what[k], st->lora ? "adapter " : "", (unsigned long long)idx[i], st->steps, want[k], (double)after[i][k]);
                c->ok = false;
            }
        }
    }
    return rc;
}

/* The backward pass, waited for, every product of it checked whole on
 * the device as it runs (model_product_check.c) where the check has found
 * nothing wrong yet: a product that fails leaves c->ok false and its note
 * in c->note. The timed step's backward is not checked. */
static gm_status checked_backward(checker *c)
{
    model_state *st = c->st;
    model_pcheck pc;
    bool check = c->ok;
    if (check)
        model_pcheck_begin(st, &pc, c->note, c->note_len, true);
    gm_status rc = model_backward(st);
    if (rc == GM_OK)
        rc = st->dev->backend->synchronize(st->dev, 0);
    if (check) {
        model_pcheck_end(st, &pc);
        c->ok = !pc.failed;
    }
    return rc;
}

gm_status model_train_check(checker *c, unsigned rep)
{
    model_state *st = c->st;
    /* The loss of each row, where train_xent left it (the workspace's
     * start, which the backward's 1/rms takes next). */
    float *loss = malloc((size_t)st->run_T * sizeof *loss);
    gm_status rc = loss ? st->dev->backend->synchronize(st->dev, 0)
                        : gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    if (rc == GM_OK)
        rc = check_read(c, (loc){&st->buf[B_BWS], 0}, 0, st->run_T, 4, GM_FP32, 1.0f, loss);
    double sum = 0;
    for (uint64_t t = 0; rc == GM_OK && t < st->run_T; t++)
        sum += loss[t];
    free(loss);
    if (rc == GM_OK)
        rc = checked_backward(c);
    if (rc == GM_OK && c->ok && st->run_T * st->p_total <= MODEL_REF_WORK)
        rc = check_gradients(c, st->counted ? sum / (double)st->counted : 0.0);
    if (rc == GM_OK && c->ok)
        rc = check_adamw_step(c, rep);
    /* The gradients of the weights AdamW just wrote, for the next iteration. */
    if (rc == GM_OK)
        rc = model_forward_pass(st);
    if (rc == GM_OK)
        rc = model_loss(st);
    return rc == GM_OK ? checked_backward(c) : rc;
}
