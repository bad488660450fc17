/* The whole model's check: the replay stage by stage and the AdamW sample
 * (bench/workloads/model_private.h, "Checks"). */
#include "bench/workloads/model_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs stage s of layer l, checking it when `check`. */
static gm_status checked_stage(checker *c, uint64_t l, int s, bool check)
{
    model_state *st = c->st;
    layer_locs lc = model_locs(st, l);
    gm_status rc = GM_OK;
    uint64_t h = st->h;
    if (check) {   /* the stage's inputs, before it overwrites any */
        switch (s) {
        case S_NORM1: rc = check_read_rows(c, lc.x_in, h, c->in); break;
        case S_QKV: rc = check_read_rows(c, lc.attn_in, h, c->in); break;
        case S_ATTN: rc = check_read_rows(c, lc.q, st->ad, c->in); break;
        case S_OPROJ:
            rc = check_read_rows(c, lc.o, st->ad, c->in);
            if (rc == GM_OK)
                rc = check_read_rows(c, lc.x_in, h, c->in2);
            break;
        case S_NORM2: rc = check_read_rows(c, lc.mid, h, c->in); break;
        case S_GATEUP: rc = check_read_rows(c, lc.mlp_in, h, c->in); break;
        case S_SWIGLU:
            rc = check_read_rows(c, lc.gate, st->I, c->in);
            if (rc == GM_OK)
                rc = check_read_rows(c, lc.up, st->I, c->in2);
            break;
        case S_DOWN:
            rc = check_read_rows(c, lc.act, st->I, c->in);
            if (rc == GM_OK)
                rc = check_read_rows(c, lc.mid, h, c->in2);
            break;
        }
    }
    if (rc == GM_OK)
        rc = model_stage(st, l, s);
    if (rc == GM_OK)
        rc = st->dev->backend->synchronize(st->dev, 0);
    if (rc == GM_OK && s == S_ATTN)     /* every layer's, before the sampled rows' check */
        rc = model_attention_check(st, l);
    /* a product's checksums or the attention's device check failed: its note stands */
    if (st->pcheck && st->pcheck->failed)
        c->ok = false;
    if (rc != GM_OK || !check || !c->ok)
        return rc;
    switch (s) {
    case S_NORM1:
        rc = check_read_rows(c, lc.attn_in, h, c->out);
        if (rc == GM_OK)
            rc = check_fetch_norm(c, M_NORM1, l);
        if (rc == GM_OK)
            check_norm(c, M_NORM1, l, c->in, c->out);
        break;
    case S_QKV: {
        static const int ms[] = {M_Q, M_K, M_V};
        const loc outs[] = {lc.q, lc.k, lc.v};
        static const char *const names[] = {"q", "k", "v"};
        for (int i = 0; i < 3 && rc == GM_OK && c->ok; i++) {
            rc = check_read_rows_in(c, outs[i], model_out(st, ms[i]), i ? st->kp : st->p, c->out);
            if (rc == GM_OK)
                rc = check_fetch_columns(c, ms[i], l);
            if (rc == GM_OK)
                rc = check_lora_term(c, ms[i], l, c->in);
            if (rc == GM_OK && c->ok)
                check_product(c, names[i], l, h, c->in, NULL, c->out, false, i && st->kp != st->p);
        }
        break;
    }
    case S_ATTN:
        rc = check_read_rows(c, lc.o, st->ad, c->out);
        if (rc == GM_OK)
            rc = check_attention(c, l, c->in, c->out);
        break;
    case S_OPROJ:
        rc = check_read_rows(c, lc.mid, h, c->out);
        if (rc == GM_OK)
            rc = check_fetch_columns(c, M_O, l);
        if (rc == GM_OK)
            rc = check_lora_term(c, M_O, l, c->in);
        if (rc == GM_OK && c->ok)
            check_product(c, "attn_resid", l, st->ad, c->in, c->in2, c->out, false, false);
        break;
    case S_NORM2:
        rc = check_read_rows(c, lc.mlp_in, h, c->out);
        if (rc == GM_OK)
            rc = check_fetch_norm(c, M_NORM2, l);
        if (rc == GM_OK)
            check_norm(c, M_NORM2, l, c->in, c->out);
        break;
    case S_GATEUP:
        rc = check_read_rows(c, lc.gate, st->I, c->out);
        if (rc == GM_OK)
            rc = check_fetch_columns(c, M_GATE, l);
        if (rc == GM_OK)
            rc = check_lora_term(c, M_GATE, l, c->in);
        if (rc == GM_OK && c->ok)
            check_product(c, "gate", l, h, c->in, NULL, c->out, false, false);
        if (rc == GM_OK && c->ok)
            rc = check_read_rows(c, lc.up, st->I, c->out);
        if (rc == GM_OK && c->ok)
            rc = check_fetch_columns(c, M_UP, l);
        if (rc == GM_OK && c->ok)
            rc = check_lora_term(c, M_UP, l, c->in);
        if (rc == GM_OK && c->ok)
            check_product(c, "up", l, h, c->in, NULL, c->out, false, false);
        break;
    case S_SWIGLU:
        rc = check_read_rows(c, lc.act, st->I, c->out);
        if (rc == GM_OK)
            check_swiglu(c, l, c->in, c->in2, c->out);
        break;
    case S_DOWN:
        rc = check_read_rows(c, lc.out, h, c->out);
        if (rc == GM_OK)
            rc = check_fetch_columns(c, M_DOWN, l);
        if (rc == GM_OK)
            rc = check_lora_term(c, M_DOWN, l, c->in);
        if (rc == GM_OK && c->ok)
            check_product(c, "block_output", l, st->I, c->in, c->in2, c->out, false, false);
        break;
    }
    return rc;
}

static void check_pick_rows(checker *c, uint64_t n, uint64_t *x)
{
    c->rows[0] = 0;
    c->rows[1] = n - 1;
    for (int r = 2; r < CHECK_ROWS; r++)
        c->rows[r] = gm_xorshift(x) % n;
}

/* The embedding of the sampled rows, the layers (every stage of the
 * checked ones), the final norm and the logits. */
static gm_status replay(checker *c, unsigned rep)
{
    model_state *st = c->st;
    uint64_t x = 0x9e3779b97f4a7c15ull ^ rep, h = st->h;
    check_pick_rows(c, st->run_T, &x);
    gm_status rc = model_embed(st);
    if (rc == GM_OK)
        rc = st->dev->backend->synchronize(st->dev, 0);
    if (rc == GM_OK)
        rc = check_read_rows(c, model_locs(st, 0).x_in, h, c->out);
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK && c->ok; r++) {
        uint64_t tok = check_host_token(c->rows[r], (uint32_t)st->V);
        rc = check_read(c, model_loc(st, M_EMB, 0), tok * h, h, st->es, st->p, model_scale(st, M_EMB), c->in[r]);
        for (uint64_t j = 0; j < h && rc == GM_OK && c->ok; j++) {
            double want = check_stored(st->p, c->in[r][j], ACT);
            if (!(fabs(c->out[r][j] - want) <= gm_tolerance(st->p, want, ACT)))
                check_fail(c, "embedding", 0, c->rows[r], j, want, c->out[r][j]);
        }
    }
    uint64_t L = st->L, picks[MAX_CHECKED_LAYERS] = {L - 1, 0, 0, 0};
    for (int i = 1; i < MAX_CHECKED_LAYERS; i++)
        picks[i] = L <= MAX_CHECKED_LAYERS ? (uint64_t)i - 1 : gm_xorshift(&x) % L;
    for (uint64_t l = 0; l < L && rc == GM_OK && c->ok; l++) {
        bool check = false;
        for (int i = 0; i < MAX_CHECKED_LAYERS; i++)
            check = check || picks[i] == l || L <= MAX_CHECKED_LAYERS;
        check_pick_rows(c, st->run_T, &x);
        for (int s = 0; s < N_STAGES && rc == GM_OK && c->ok; s++)
            rc = checked_stage(c, l, s, check);
    }
    if (rc != GM_OK || !c->ok)
        return rc;
    /* The final norm and the LM head, on sampled head rows. */
    uint64_t rows = model_head_rows(st);
    check_pick_rows(c, rows, &x);
    uint64_t src[CHECK_ROWS];
    for (int r = 0; r < CHECK_ROWS; r++)
        src[r] = st->train ? c->rows[r] : c->rows[r] * st->seq + st->run_seq - 1;
    loc fin = st->train ? (loc){&st->buf[B_FIN], 0} : (loc){&st->buf[B_RES], 0};
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK; r++)
        rc = check_read(c, fin, src[r] * h, h, st->es, st->p, ACT, c->in[r]);
    if (rc == GM_OK)
        rc = model_final_norm(st);
    if (rc == GM_OK)
        rc = model_lm_head(st);
    if (rc == GM_OK)
        rc = st->dev->backend->synchronize(st->dev, 0);
    if (st->pcheck && st->pcheck->failed)
        c->ok = false;
    if (rc == GM_OK && c->ok)
        rc = check_read_rows(c, model_head_in(st), h, c->out);
    if (rc == GM_OK && c->ok)
        rc = check_fetch_norm(c, M_FINAL, 0);
    if (rc == GM_OK && c->ok)
        check_norm(c, M_FINAL, L, c->in, c->out);
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK && c->ok; r++)
        rc = check_read(c, (loc){&st->buf[B_LOGITS], 0}, c->rows[r] * st->V, st->V, 4, GM_FP32, 1.0f, c->out2[r]);
    if (rc == GM_OK && c->ok)
        rc = check_fetch_columns(c, M_LM, 0);
    if (rc == GM_OK && c->ok)
        check_product(c, "logits", L, h, c->out, NULL, c->out2, true, false);
    return rc;
}

/* The iteration's head output compared whole, bit for bit, with its
 * replay up to this many bytes (every inference run's logits but the
 * largest batches'); beyond, on the sampled rows. */
#define WHOLE_HEAD_MAX ((size_t)64 << 20)

/* Reads `bytes` of `at` raw into host memory p. */
static gm_status read_raw(model_state *st, loc at, void *p, size_t bytes)
{
    gm_buffer host = {.kind = GM_MEM_HOST, .bytes = bytes, .host = p};
    return st->dev->backend->copy(st->dev, 0, &host, 0, at.buf, (size_t)at.off, bytes, false);
}

/* The first element in which two raw copies of n elements of es bytes
 * differ, or n. */
static size_t first_difference(const unsigned char *a, const unsigned char *b, size_t n, size_t es)
{
    size_t lo = 0;
    /* Whole megabytes first: memcmp is fast where nothing differs. */
    while (lo < n) {
        size_t span = n - lo < ((size_t)1 << 18) ? n - lo : (size_t)1 << 18;
        if (memcmp(a + lo * es, b + lo * es, span * es) != 0)
            break;
        lo += span;
    }
    while (lo < n && memcmp(a + lo * es, b + lo * es, es) == 0)
        lo++;
    return lo;
}

gm_status block_model_verify(void *state, unsigned rep, bool *correct, char *note, size_t len)
{
    model_state *st = state;
    uint64_t wide = st->ad > st->I ? st->ad : st->I;
    wide = wide > st->V ? wide : st->V;
    wide = wide > st->seq * st->kd ? wide : st->seq * st->kd;
    /* c.w: a norm (h), or the checked columns of a product (at most h, ad or I inputs) */
    uint64_t inputs = st->h > st->ad ? st->h : st->ad;
    inputs = inputs > st->I ? inputs : st->I;
    uint64_t mat = inputs * CHECK_COLS, int4_mat = 0;
    /* int4: one whole matrix's codes and scales (fetch_int4_columns) */
    for (int m = 0; m < N_M && st->int4; m++)
        if (model_is_int4(st, m) && model_in(st, m) * model_out(st, m) > int4_mat)
            int4_mat = model_in(st, m) * model_out(st, m);
    checker c = {.st = st, .note = note, .note_len = len, .ok = true, .seed = 0x3c6ef372fe94f82bull ^ rep};
    c.stage_bytes = (size_t)(wide < (1u << 20) ? (1u << 20) : wide) * 4;
    gm_status rc = gm_device_alloc(st->dev, GM_MEM_HOST, c.stage_bytes, &c.stage);
    bool have = true;
    float **sets[] = {c.in, c.in2, c.out, c.out2, c.out3};
    for (size_t s = 0; s < 5; s++)
        for (int r = 0; r < CHECK_ROWS; r++)
            have = (sets[s][r] = malloc((size_t)wide * sizeof(float))) && have;
    c.w = malloc((size_t)mat * sizeof(float));
    c.cols = malloc(CHECK_COLS * sizeof *c.cols);
    c.partner = malloc(CHECK_COLS * sizeof *c.partner);
    c.column = malloc((size_t)wide * sizeof(float));
    c.kseq = malloc((size_t)(st->seq * st->kd) * sizeof(float));
    c.vseq = malloc((size_t)(st->seq * st->kd) * sizeof(float));
    c.want = malloc((size_t)(wide > st->seq ? wide : st->seq) * sizeof(double));
    c.mag = malloc((size_t)wide * sizeof(double));
    c.lora_add = malloc(CHECK_ROWS * CHECK_COLS * sizeof(double));
    c.lora_mag = malloc(CHECK_ROWS * CHECK_COLS * sizeof(double));
    have = have && c.w && c.cols && c.partner && c.column && c.kseq && c.vseq && c.want && c.mag && c.lora_add && c.lora_mag;
    if (rc == GM_OK && st->int4)
        rc = gm_device_alloc(st->dev, GM_MEM_HOST, (size_t)(int4_mat / 2), &c.codes);
    if (rc == GM_OK && st->int4)
        rc = gm_device_alloc(st->dev, GM_MEM_HOST, (size_t)(int4_mat / st->group * 2), &c.scales);
    if (rc == GM_OK && !have)
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    /* The iteration's logits (training: the loss's gradient, which the
     * fp32 model writes over them) on sampled rows, before the replay. */
    uint64_t x = 0x51ed270b27f4a7c1ull ^ rep;
    check_pick_rows(&c, model_head_rows(st), &x);
    uint64_t kept[CHECK_ROWS];
    memcpy(kept, c.rows, sizeof kept);
    bool dl16 = st->train && st->es < 4;
    loc out = {&st->buf[dl16 ? B_DLOGITS : B_LOGITS], 0};
    size_t oes = dl16 ? st->es : 4;
    gm_precision op = dl16 ? st->p : GM_FP32;
    size_t head_n = (size_t)(model_head_rows(st) * st->V), whole_bytes = head_n * oes;
    unsigned char *iter = NULL, *again = NULL;
    bool whole = rc == GM_OK && whole_bytes <= WHOLE_HEAD_MAX;
    if (whole) {
        iter = malloc(whole_bytes);
        again = malloc(whole_bytes);
        if (!iter || !again)
            rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
        if (rc == GM_OK)
            rc = read_raw(st, out, iter, whole_bytes);
    }
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK && !whole; r++)
        rc = check_read(&c, out, kept[r] * st->V, st->V, oes, op, 1.0f, c.out3[r]);
    model_pcheck pc;
    model_pcheck_begin(st, &pc, note, len, false);
    if (rc == GM_OK && c.ok)
        rc = replay(&c, rep);
    model_pcheck_end(st, &pc);
    if (rc == GM_OK && c.ok && st->train)
        rc = model_loss(st);
    if (rc == GM_OK && c.ok && whole) {
        rc = read_raw(st, out, again, whole_bytes);
        size_t at = rc == GM_OK ? first_difference(iter, again, head_n, oes) : head_n;
        if (at < head_n) {
            snprintf(note, len, "%s[%llu][%llu] of the iteration (%.7g) differ from its checked replay (%.7g)",
                     st->train ? "dlogits" : "logits", (unsigned long long)(at / st->V),
                     (unsigned long long)(at % st->V), (double)gm_load(op, iter, at, 1.0f),
                     (double)gm_load(op, again, at, 1.0f));
            c.ok = false;
        }
    }
    free(iter);
    free(again);
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK && c.ok && !whole; r++) {
        rc = check_read(&c, out, kept[r] * st->V, st->V, oes, op, 1.0f, c.out2[r]);
        for (uint64_t j = 0; j < st->V && rc == GM_OK && c.ok; j++)
            if (memcmp(&c.out2[r][j], &c.out3[r][j], sizeof(float)) != 0) {
                snprintf(note, len, "%s[%llu][%llu] of the iteration (%.7g) differ from its checked replay (%.7g)",
                         st->train ? "dlogits" : "logits", (unsigned long long)kept[r], (unsigned long long)j,
                         (double)c.out3[r][j], (double)c.out2[r][j]);
                c.ok = false;
            }
    }
    if (rc == GM_OK && c.ok && st->train)
        rc = model_train_check(&c, rep);
    *correct = c.ok;
    for (size_t s = 0; s < 5; s++)
        for (int r = 0; r < CHECK_ROWS; r++)
            free(sets[s][r]);
    free(c.w);
    free(c.cols);
    free(c.partner);
    free(c.column);
    free(c.kseq);
    free(c.vseq);
    free(c.want);
    free(c.mag);
    free(c.lora_add);
    free(c.lora_mag);
    gm_device_free(st->dev, &c.codes);
    gm_device_free(st->dev, &c.scales);
    gm_device_free(st->dev, &c.stage);
    return rc;
}

