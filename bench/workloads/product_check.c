/* Whole-output checksums of a matrix product (bench/workloads/product_check.h). */
#include "bench/workloads/product_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Relative error of the checksums' own double sums, per term (2^-50: a
 * few units of double rounding). */
#define SUM_EPS 0x1p-50

/* The worst of a set of sums: its index and its excess over the tolerance
 * (difference / tolerance; > 1 fails, NaN counts as failing). */
typedef struct {
    size_t at;
    double diff, tol, ratio;
    bool failed;
} worst;

static void consider(worst *w, size_t at, double got, double want, double tol)
{
    double diff = got - want;
    bool fails = !(fabs(diff) <= tol);
    double ratio = tol > 0 ? fabs(diff) / tol : (diff != 0 ? INFINITY : 0);
    if (fails && isnan(ratio))
        ratio = INFINITY;
    if ((fails && !w->failed) || (fails == w->failed && ratio > w->ratio)) {
        *w = (worst){at, diff, tol, ratio, fails};
    }
}

int gm_product_sums_check(const gm_product_sums *p, char *note, size_t len)
{
    size_t m = p->m, n = p->n, k = p->k;
    double *col_a = calloc(k, sizeof(double)), *col_a_abs = calloc(k, sizeof(double));
    double *row_b = calloc(k, sizeof(double)), *row_b_abs = calloc(k, sizeof(double));
    double *want_col = calloc(n, sizeof(double)), *mag_col = calloc(n, sizeof(double));
    double *got_col = calloc(n, sizeof(double)), *tol_col = calloc(n, sizeof(double));
    double *want_row = calloc(m, sizeof(double)), *mag_row = calloc(m, sizeof(double));
    double *got_row = calloc(m, sizeof(double)), *tol_row = calloc(m, sizeof(double));
    double *abs_col = calloc(n, sizeof(double)), *abs_row = calloc(m, sizeof(double));
    int rc = -1;
    if (!col_a || !col_a_abs || !row_b || !row_b_abs || !want_col || !mag_col || !got_col || !tol_col || !want_row
        || !mag_row || !got_row || !tol_row || !abs_col || !abs_row) {
        snprintf(note, len, "%s: out of host memory for its checksums", p->name);
        goto out;
    }
    /* e^T A and e^T |A|. */
    for (size_t i = 0; i < m; i++)
        for (size_t kk = 0; kk < k; kk++) {
            double a = p->a(p->ctx, i, kk);
            col_a[kk] += a;
            col_a_abs[kk] += fabs(a);
        }
    /* (e^T A) B and (e^T |A|) |B| by column; B e and |B| e by row of B. */
    for (size_t kk = 0; kk < k; kk++)
        for (size_t j = 0; j < n; j++) {
            double b = p->b(p->ctx, kk, j);
            want_col[j] += col_a[kk] * b;
            mag_col[j] += col_a_abs[kk] * fabs(b);
            row_b[kk] += b;
            row_b_abs[kk] += fabs(b);
        }
    /* A (B e) and |A| (|B| e). */
    for (size_t i = 0; i < m; i++)
        for (size_t kk = 0; kk < k; kk++) {
            double a = p->a(p->ctx, i, kk);
            want_row[i] += a * row_b[kk];
            mag_row[i] += fabs(a) * row_b_abs[kk];
        }
    /* C's sums and the rounding its stored values may carry. */
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double c = p->c(p->ctx, i, j), r = p->round_bound(p->ctx, i, j, c);
            got_col[j] += c;
            got_row[i] += c;
            tol_col[j] += r;
            tol_row[i] += r;
            abs_col[j] += fabs(c);
            abs_row[i] += fabs(c);
        }
    double gamma = 2.0 * (double)k * p->u_acc, eps = SUM_EPS * (double)(m + n + k);
    worst wc = {0}, wr = {0};
    for (size_t j = 0; j < n; j++)
        consider(&wc, j, got_col[j], want_col[j],
                 tol_col[j] + gamma * mag_col[j] + (double)m * p->acc_abs + eps * (mag_col[j] + abs_col[j]));
    for (size_t i = 0; i < m; i++)
        consider(&wr, i, got_row[i], want_row[i],
                 tol_row[i] + gamma * mag_row[i] + (double)n * p->acc_abs + eps * (mag_row[i] + abs_row[i]));
    rc = !wc.failed && !wr.failed;
    if (!rc) {
        const worst *w = wc.failed ? &wc : &wr;
        int at = snprintf(note, len, "%s: checksums: %s %zu's sum is off by %.7g (tolerance %.3g)", p->name,
                          wc.failed ? "column" : "row", w->at, w->diff, w->tol);
        if (wc.failed && wr.failed && at > 0 && (size_t)at < len)
            snprintf(note + at, len - (size_t)at, ", row %zu's by %.7g (tolerance %.3g): element [%zu][%zu]", wr.at,
                     wr.diff, wr.tol, wr.at, wc.at);
    }
out:
    free(col_a);
    free(col_a_abs);
    free(row_b);
    free(row_b_abs);
    free(want_col);
    free(mag_col);
    free(got_col);
    free(tol_col);
    free(want_row);
    free(mag_row);
    free(got_row);
    free(tol_row);
    free(abs_col);
    free(abs_row);
    return rc;
}
