/* Whole-output checksums of a matrix product (bench/workloads/product_check.h). */
#include "bench/workloads/product_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Relative error of the checksums' own double sums, per term (2^-50: a
 * few units of double rounding). */
#define SUM_EPS 0x1p-50

void gm_product_expect_release(gm_product_expect *e)
{
    free(e->want_col);
    free(e->mag_col);
    free(e->want_row);
    free(e->mag_row);
    *e = (gm_product_expect){0};
}

static size_t group_of(const gm_product_sums *p) { return p->group && p->group < p->m ? p->group : p->m; }

int gm_product_expect_init(gm_product_expect *e, const gm_product_sums *p)
{
    size_t m = p->m, n = p->n, k = p->k, g = group_of(p), blocks = (m + g - 1) / g;
    *e = (gm_product_expect){.m = m, .n = n, .group = g};
    e->want_col = calloc(blocks * n, sizeof(double));
    e->mag_col = calloc(blocks * n, sizeof(double));
    e->want_row = calloc(m, sizeof(double));
    e->mag_row = calloc(m, sizeof(double));
    double *row_b = calloc(k, sizeof(double)), *row_b_abs = calloc(k, sizeof(double));
    double *col_a = calloc(blocks * k, sizeof(double)), *col_a_abs = calloc(blocks * k, sizeof(double));
    double *row = malloc((k > n ? k : n) * sizeof(double));
    int rc = e->want_col && e->mag_col && e->want_row && e->mag_row && row_b && row_b_abs && col_a && col_a_abs
                     && row
                 ? 0
                 : -1;
    /* B e and |B| e. */
    for (size_t kk = 0; kk < k && rc == 0; kk++) {
        p->b_row(p->ctx, kk, row);
        double s = 0, sa = 0;
        for (size_t j = 0; j < n; j++) {
            s += row[j];
            sa += fabs(row[j]);
        }
        row_b[kk] = s;
        row_b_abs[kk] = sa;
    }
    /* One pass over A: A (B e), |A| (|B| e), and each block's e_b^T A, e_b^T |A|. */
    for (size_t i = 0; i < m && rc == 0; i++) {
        p->a_row(p->ctx, i, row);
        double s = 0, sa = 0, *ca = col_a + i / g * k, *caa = col_a_abs + i / g * k;
        for (size_t kk = 0; kk < k; kk++) {
            double a = row[kk];
            s += a * row_b[kk];
            sa += fabs(a) * row_b_abs[kk];
            ca[kk] += a;
            caa[kk] += fabs(a);
        }
        e->want_row[i] = s;
        e->mag_row[i] = sa;
    }
    /* Each block's (e_b^T A) B and (e_b^T |A|) |B|: B read once more. */
    for (size_t kk = 0; kk < k && rc == 0; kk++) {
        p->b_row(p->ctx, kk, row);
        for (size_t b = 0; b < blocks; b++) {
            double ca = col_a[b * k + kk], caa = col_a_abs[b * k + kk];
            double *want = e->want_col + b * n, *mag = e->mag_col + b * n;
            for (size_t j = 0; j < n; j++) {
                want[j] += ca * row[j];
                mag[j] += caa * fabs(row[j]);
            }
        }
    }
    free(row_b);
    free(row_b_abs);
    free(col_a);
    free(col_a_abs);
    free(row);
    if (rc != 0)
        gm_product_expect_release(e);
    return rc;
}

/* The worst of a set of sums: its index, difference and tolerance, and
 * whether it fails (NaN fails). */
typedef struct {
    size_t at, block;
    double diff, tol, ratio;
    bool failed;
} worst;

static void consider(worst *w, size_t at, size_t block, double got, double want, double tol)
{
    double diff = got - want;
    bool fails = !(fabs(diff) <= tol);
    double ratio = fails ? (tol > 0 && !isnan(diff) ? fabs(diff) / tol : INFINITY) : fabs(diff) / (tol > 0 ? tol : 1);
    if ((fails && !w->failed) || (fails == w->failed && ratio > w->ratio))
        *w = (worst){at, block, diff, tol, ratio, fails};
}

size_t gm_product_group(size_t m, size_t k, size_t n, double u_out, int int8_steps)
{
    size_t g = m;
    if (int8_steps)
        g = 32;
    else if (u_out > 0)
        g = u_out >= 0x1p-4 ? 1 : (size_t)(0x1p-4 / u_out);
    double wide = (double)(k > n ? k : n);
    double budget = fmin(0x1p31 / ((double)k * (double)n), 0x1p22 / wide);
    while (g < m && (double)m / (double)g > budget)
        g *= 2;
    return g < m ? g : m;
}

int gm_product_sums_check(const gm_product_sums *p, const gm_product_expect *e, char *note, size_t len)
{
    return gm_product_sums_check_at(p, e, note, len, NULL);
}

int gm_product_sums_check_at(const gm_product_sums *p, const gm_product_expect *e, char *note, size_t len,
                             gm_product_where *where)
{
    size_t m = p->m, n = p->n, k = p->k, g = e->group;
    double *got_col = calloc(n, sizeof(double)), *tol_col = calloc(n, sizeof(double));
    double *abs_col = calloc(n, sizeof(double)), *row = malloc(n * sizeof(double));
    double *res = p->r_row ? malloc(n * sizeof(double)) : NULL;
    int rc = -1;
    if (!got_col || !tol_col || !abs_col || !row || (p->r_row && !res)) {
        snprintf(note, len, "%s: out of host memory for its checksums", p->name);
        goto out;
    }
    double gamma = 2.0 * (double)k * p->u_acc, eps = SUM_EPS * (double)(m + n + k);
    worst wc = {0}, wr = {0};
    for (size_t i = 0; i < m; i++) {
        p->c_row(p->ctx, i, row);
        if (res)
            p->r_row(p->ctx, i, res);
        double s = 0, t = 0, sa = 0;
        for (size_t j = 0; j < n; j++) {
            double c = row[j], a = fabs(c);
            double r = p->u_out * a > p->out_abs ? p->u_out * a : p->out_abs;
            if (p->sat > 0 && a >= p->sat)
                r = p->saturated(p->ctx, i, j, c);
            if (res) {
                c -= res[j];
                r += p->u_acc * fabs(res[j]);
                a = fabs(c) + fabs(res[j]);
            }
            s += c;
            t += r;
            sa += a;
            got_col[j] += c;
            tol_col[j] += r;
            abs_col[j] += a;
        }
        consider(&wr, i, 0, s, e->want_row[i],
                 t + gamma * e->mag_row[i] + (double)n * p->acc_abs + eps * (e->mag_row[i] + sa));
        if ((i + 1) % g != 0 && i + 1 != m)
            continue;
        /* The end of a block of rows: its column sums. */
        size_t b = i / g, rows = i + 1 - b * g;
        const double *want = e->want_col + b * n, *mag = e->mag_col + b * n;
        for (size_t j = 0; j < n; j++) {
            consider(&wc, j, b, got_col[j], want[j],
                     tol_col[j] + gamma * mag[j] + (double)rows * p->acc_abs + eps * (mag[j] + abs_col[j]));
            got_col[j] = tol_col[j] = abs_col[j] = 0;
        }
    }
    rc = !wc.failed && !wr.failed;
    if (!rc && where) {
        if (wc.failed) {
            size_t last = (wc.block + 1) * g < m ? (wc.block + 1) * g - 1 : m - 1;
            *where = wr.failed ? (gm_product_where){wc.at, wr.at, wr.at}
                               : (gm_product_where){wc.at, wc.block * g, last};
        } else {
            *where = (gm_product_where){n, wr.at, wr.at};
        }
    }
    if (!rc) {
        const worst *w = wc.failed ? &wc : &wr;
        int at = wc.failed && g == 1
                     ? snprintf(note, len, "%s: checksums: element [%zu][%zu] is off by %.7g (tolerance %.3g)", p->name,
                                w->block, w->at, w->diff, w->tol)
                 : wc.failed && g < m
                     ? snprintf(note, len, "%s: checksums: column %zu's sum over rows %zu-%zu is off by %.7g (tolerance %.3g)",
                                p->name, w->at, w->block * g, (w->block + 1) * g < m ? (w->block + 1) * g - 1 : m - 1,
                                w->diff, w->tol)
                     : snprintf(note, len, "%s: checksums: %s %zu's sum is off by %.7g (tolerance %.3g)", p->name,
                                wc.failed ? "column" : "row", w->at, w->diff, w->tol);
        if (wc.failed && wr.failed && g > 1 && at > 0 && (size_t)at < len)
            snprintf(note + at, len - (size_t)at, ", row %zu's by %.7g (tolerance %.3g): element [%zu][%zu]", wr.at,
                     wr.diff, wr.tol, wr.at, wc.at);
    }
out:
    free(got_col);
    free(tol_col);
    free(abs_col);
    free(row);
    free(res);
    return rc;
}
