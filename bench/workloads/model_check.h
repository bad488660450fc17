/*
 * The whole model's check (model_check.c, model_replay.c): the state of
 * one verification, and the device reads and CPU references of its stages.
 */
#ifndef GM_MODEL_CHECK_H
#define GM_MODEL_CHECK_H

#include "bench/workloads/model_private.h"

typedef struct {
    model_state *st;
    gm_buffer stage;                /* host staging */
    size_t stage_bytes;
    float *w;                       /* a norm's weights, or a matrix's checked columns: [k][n_cols] */
    uint64_t *cols, n_cols;         /* the checked columns of the last fetch_columns */
    uint64_t seed;                  /* of the column samples (the repetition's) */
    float *column;                  /* one row of the tied head's embedding (k floats) */
    float *in[CHECK_ROWS], *in2[CHECK_ROWS], *out[CHECK_ROWS], *out2[CHECK_ROWS], *out3[CHECK_ROWS];
    float *kseq, *vseq;
    double *want, *mag;
    gm_buffer codes, scales;        /* int4: one matrix as the device holds it */
    /* LoRA: the adapter's part of the next check_product, [row][checked
     * column], and its magnitude (check_lora_term). */
    double *lora_add, *lora_mag;
    bool lora_on;
    /* Training's q and k (check_fetch_columns): the next check_product
     * rotates each checked column with its partner's (partner[jj], the
     * index of column cols[jj] +- head_dim / 2 among the checked ones). */
    bool rope_on;
    uint64_t *partner;
    uint64_t rows[CHECK_ROWS];
    char *note;
    size_t note_len;
    bool ok;
} checker;

/* The token of row t (model.cl's model_token). */
uint32_t check_host_token(uint64_t t, uint32_t vocab);
/* v as precision p stores it at `scale`. */
double check_stored(gm_precision p, double v, float scale);
/* n elements of `at` from element `first` as floats. */
gm_status check_read(checker *c, loc at, uint64_t first, uint64_t n, size_t es, gm_precision p, float scale,
                     float *outp);
/* The sampled rows of `at` (rows `width` apart), in precision p or the activations'. */
gm_status check_read_rows_in(checker *c, loc at, uint64_t width, gm_precision p, float **outp);
gm_status check_read_rows(checker *c, loc at, uint64_t width, float **outp);
/* A norm's weights, or the checked columns of matrix m, into c->w. */
gm_status check_fetch_norm(checker *c, int m, uint64_t layer);
gm_status check_fetch_columns(checker *c, int m, uint64_t layer);
/* LoRA: where matrix m of `layer` is adapted, its kept (alpha / r) x A
 * on the sampled rows against the CPU's from their inputs `in` and A,
 * and (after check_fetch_columns) the adapter's part (x A) B of each
 * checked column, which the next check_product adds. */
gm_status check_lora_term(checker *c, int m, uint64_t layer, float **in);
/* Notes a difference and returns false. */
bool check_fail(checker *c, const char *what, uint64_t layer, uint64_t t, uint64_t j, double want, double got);
/* The CPU references of a product, a norm, attention and SwiGLU on the sampled rows. */
void check_product(checker *c, const char *what, uint64_t layer, uint64_t k, float **in, float **res, float **got,
                   bool fp32_out, bool kv);
void check_norm(checker *c, int m, uint64_t layer, float **x, float **y);
gm_status check_attention(checker *c, uint64_t l, float **q, float **o);
void check_swiglu(checker *c, uint64_t l, float **g, float **u, float **act);

/* model_train_check.c: after the replay and model_loss, the training
 * step's loss, gradients and an AdamW step against the CPU's; leaves the
 * gradients of the weights it ends with. */
gm_status model_train_check(checker *c, unsigned rep);

#endif
