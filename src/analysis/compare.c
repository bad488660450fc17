/* Joining runs on their point keys and judging each change (src/compare.h). */
#include "analysis/compare.h"
#include "analysis/stats_compare.h"
#include "run/point_key.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CI_LEVEL 0.95
#define CI_RESAMPLES 2000
#define CI_SEED 0x6770756d656dULL

__attribute__((format(printf, 4, 5)))
static int add_left_out(gm_comparison *c, const gm_cmp_point *p, int run, const char *fmt, ...)
{
    gm_cmp_left_out *l = realloc(c->left_out, (size_t)(c->n_left_out + 1) * sizeof *l);
    if (!l)
        return -1;
    c->left_out = l;
    l = &c->left_out[c->n_left_out++];
    l->point = p;
    l->run = run;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->reason, sizeof l->reason, fmt, ap);
    va_end(ap);
    return 0;
}

#define MDE_POWER 0.8

/* The units of p's test: the median of each round of each member run
 * (by_run: of each member run), as their logarithms in out[]. Returns
 * their count, or 0 when a unit is not positive (no logarithm). */
static size_t units(const gm_cmp_point *p, int by_run, double *out, double *scratch)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_samples; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = p->member[j] == p->member[i] && (by_run || p->round[j] == p->round[i]);
        if (seen)
            continue;
        size_t m = 0;
        for (size_t j = i; j < p->n_samples; j++)
            if (p->member[j] == p->member[i] && (by_run || p->round[j] == p->round[i]))
                scratch[m++] = p->samples[j];
        double median = gm_median(scratch, m);
        if (!(median > 0))
            return 0;
        out[n++] = log(median);
    }
    return n;
}

/* The t test of r's units (GM_TEST_T; by_run: a side is a group of
 * runs, whose units are runs) when there are enough, else nothing
 * (r->test unchanged). Returns -1 out of memory. */
static int t_on_units(gm_cmp_result *r, int by_run)
{
    const gm_cmp_point *b = r->base, *o = r->other;
    size_t nb = b->n_samples, no = o->n_samples, big = nb > no ? nb : no;
    double *ub = malloc((nb + 1) * sizeof *ub), *uo = malloc((no + 1) * sizeof *uo),
           *scratch = malloc((big + 1) * sizeof *scratch);
    int rc = ub && uo && scratch ? 0 : -1;
    if (rc == 0) {
        nb = units(b, by_run, ub, scratch);
        no = units(o, by_run, uo, scratch);
        gm_t_result t;
        if (nb && no && (by_run || nb >= 2 || no >= 2) && gm_t_test(ub, nb, uo, no, &t) == 0) {
            r->test = GM_TEST_T;
            r->basis = by_run ? GM_BASIS_RUNS : GM_BASIS_ROUNDS;
            r->units_base = (int)nb;
            r->units = (int)no;
            r->p = t.p;
            r->se = t.se;
            r->df = t.df;
            r->ratio = exp(t.diff);
            double q = gm_t_quantile((1 + CI_LEVEL) / 2, t.df);
            r->ci_lo = exp(t.diff - q * t.se);
            r->ci_hi = exp(t.diff + q * t.se);
        }
    }
    free(ub);
    free(uo);
    free(scratch);
    return rc;
}

/* Were b (of base) and o (of run) timed alike? A rep of one short launch
 * includes the launch's fixed cost on the device, which launches back to
 * back share out (run/results.h, GM_LAUNCHES_NOTE): a single launch is not
 * compared with back-to-back ones from a run that never launched back to
 * back (a run from before the stream suite did, whose short kernels had one
 * launch a rep, or one of large arrays only). Where both runs did, one
 * launch a rep means that launch filled the rep alone, and it is compared
 * with a count above one as two counts above one are (a point at the edge
 * where one launch just fills a rep gets 1 in one run and 2 in the next):
 * each rep then lasts about as long, and the fixed cost is a like share. */
static bool timed_alike(const gm_cmp_run *base, const gm_cmp_point *b, const gm_cmp_run *run,
                        const gm_cmp_point *o, unsigned *nb, unsigned *no)
{
    *nb = gm_point_note_launches(b->note);
    *no = gm_point_note_launches(o->note);
    return (*nb == 1) == (*no == 1) || (base->back_to_back && run->back_to_back);
}

/* Fills r's ratio, test and interval (the verdict comes after Holm).
 * Returns -1 out of memory. */
static int measure(gm_cmp_result *r, int by_run)
{
    const gm_cmp_point *b = r->base, *o = r->other;
    r->ratio = b->value != 0 ? o->value / b->value : o->value == 0 ? 1.0 : INFINITY;
    r->ci_lo = r->ci_hi = r->ratio;
    r->p = r->p_holm = r->se = r->df = r->mde = NAN;
    r->basis = GM_BASIS_NONE;
    if (b->n_samples >= 2 && o->n_samples >= 2) {
        r->test = GM_TEST_MANN_WHITNEY;
        if (t_on_units(r, by_run) != 0)
            return -1;
        if (r->test == GM_TEST_T)
            return 0;
        /* One run a side, one round each: only the repetitions. */
        r->basis = GM_BASIS_REPS;
        r->units_base = (int)b->n_samples;
        r->units = (int)o->n_samples;
        r->p = gm_mann_whitney(b->samples, b->n_samples, o->samples, o->n_samples, NULL);
        if (gm_ratio_ci(b->samples, b->n_samples, o->samples, o->n_samples, CI_LEVEL, CI_RESAMPLES, CI_SEED,
                        &r->ci_lo, &r->ci_hi) != 0)
            r->ci_lo = r->ci_hi = NAN;
        /* Its detectable change, as a t test on the repetitions would see it. */
        double *lb = malloc(b->n_samples * sizeof *lb), *lo = malloc(o->n_samples * sizeof *lo);
        int positive = lb && lo;
        for (size_t i = 0; positive && i < b->n_samples; i++)
            positive = b->samples[i] > 0 && (lb[i] = log(b->samples[i]), 1);
        for (size_t i = 0; positive && i < o->n_samples; i++)
            positive = o->samples[i] > 0 && (lo[i] = log(o->samples[i]), 1);
        gm_t_result t;
        if (positive && gm_t_test(lb, b->n_samples, lo, o->n_samples, &t) == 0) {
            r->se = t.se;
            r->df = t.df;
        }
        free(lb);
        free(lo);
    } else if (b->reps <= 1 && o->reps <= 1) {
        r->test = GM_TEST_EXACT;      /* one exact measurement a side (a largest batch, a count) */
    } else {
        r->test = GM_TEST_NONE;       /* repetitions whose samples the run does not keep */
    }
    return 0;
}

/* A change in the worse direction beyond the threshold. */
static int worse(const gm_cmp_result *r, double threshold)
{
    if (r->direction > 0)
        return r->ratio > 1 + threshold;
    if (r->direction < 0)
        return r->ratio < 1 - threshold;
    return 0;
}

static int better(const gm_cmp_result *r, double threshold)
{
    if (r->direction > 0)
        return r->ratio < 1 - threshold;
    if (r->direction < 0)
        return r->ratio > 1 + threshold;
    return 0;
}

static void judge(gm_cmp_result *r, double threshold, double alpha, bool gate)
{
    int tested = r->test == GM_TEST_MANN_WHITNEY || r->test == GM_TEST_T;
    int significant = r->test == GM_TEST_EXACT || (tested && r->p_holm < alpha);
    if (r->direction == 0)
        r->verdict = GM_VERDICT_INFO;
    else if (r->test == GM_TEST_NONE)
        r->verdict = GM_VERDICT_UNTESTED;
    else if (gate && r->basis == GM_BASIS_REPS)
        r->verdict = GM_VERDICT_NOT_GATED;
    else if (significant && worse(r, threshold))
        r->verdict = GM_VERDICT_REGRESSION;
    else if (significant && better(r, threshold))
        r->verdict = GM_VERDICT_IMPROVEMENT;
    else
        r->verdict = GM_VERDICT_SAME;
}

static int is_test(const gm_cmp_result *r, int run)
{
    return r->run == run && (r->test == GM_TEST_MANN_WHITNEY || r->test == GM_TEST_T) && r->direction;
}

/* Holm over the tests of one run against BASE, and each test's minimum
 * detectable effect at Holm's first step (alpha over the tests). */
static int adjust(gm_comparison *c, int run)
{
    double *p = malloc((size_t)(c->n_results + 1) * sizeof *p);
    if (!p)
        return -1;
    size_t n = 0;
    for (int i = 0; i < c->n_results; i++)
        if (is_test(&c->results[i], run))
            p[n++] = c->results[i].p;
    int rc = gm_holm(p, n, p);
    size_t family = n;
    n = 0;
    for (int i = 0; rc == 0 && i < c->n_results; i++) {
        gm_cmp_result *r = &c->results[i];
        if (!is_test(r, run))
            continue;
        r->p_holm = p[n++];
        double d = gm_t_mde(r->se, r->df, c->alpha / (double)family, MDE_POWER);
        r->mde = isnan(d) ? NAN : expm1(d);
    }
    free(p);
    return rc;
}

/* Whether o is b's point on another card: the same key but for the
 * variant, whose card role is the same (gm_point_card_role). */
static bool card_alike(const gm_cmp_point *b, const gm_cmp_point *o)
{
    const char *bf[] = {b->suite, b->workload, b->pattern, b->precision, b->mode, b->batch, b->seq_len, b->bytes,
                        b->metric};
    const char *of[] = {o->suite, o->workload, o->pattern, o->precision, o->mode, o->batch, o->seq_len, o->bytes,
                        o->metric};
    for (size_t i = 0; i < sizeof bf / sizeof bf[0]; i++)
        if (strcmp(bf[i], of[i]) != 0)
            return false;
    return strcmp(gm_point_card_role(b->suite, b->workload, b->variant),
                  gm_point_card_role(o->suite, o->workload, o->variant)) == 0;
}

/* b's point in run: under its own key, else for cards the first point of
 * the same card role; NULL where there is none. */
static const gm_cmp_point *counterpart(const gm_comparison *c, const gm_cmp_run *run, const gm_cmp_point *b)
{
    const gm_cmp_point *o = gm_cmp_run_find(run, b->key);
    for (int i = 0; c->cards && !o && i < run->n_points; i++)
        if (card_alike(b, &run->points[i]) && !gm_cmp_run_find(c->runs, run->points[i].key))
            o = &run->points[i];
    return o;
}

/* Whether run's point p was joined with a point of BASE (counterpart). */
static bool joined(const gm_comparison *c, const gm_cmp_run *run, const gm_cmp_point *p)
{
    const gm_cmp_run *base = &c->runs[0];
    if (gm_cmp_run_find(base, p->key))
        return true;
    for (int i = 0; c->cards && i < base->n_points; i++)
        if (card_alike(&base->points[i], p) && !gm_cmp_run_find(run, base->points[i].key)
            && counterpart(c, run, &base->points[i]) == p)
            return true;
    return false;
}

int gm_compare(gm_comparison *c)
{
    const gm_cmp_run *base = &c->runs[0];
    c->results = calloc((size_t)base->n_points * (size_t)c->n_runs + 1, sizeof *c->results);
    if (!c->results)
        return -1;
    for (int i = 0; i < base->n_points; i++) {
        const gm_cmp_point *b = &base->points[i];
        for (int k = 1; k < c->n_runs; k++) {
            const gm_cmp_run *run = &c->runs[k];
            const gm_cmp_point *o = counterpart(c, run, b);
            unsigned nb = 1, no = 1;
            int rc = 0;
            if (b->repeated)
                rc = add_left_out(c, b, 0, "repeated in %s", base->label);
            else if (strcmp(b->status, "ok") != 0)
                rc = add_left_out(c, b, 0, "status %s in %s", b->status, base->label);
            else if (!o)
                rc = add_left_out(c, b, k, "not in %s", run->label);
            else if (o->repeated)
                rc = add_left_out(c, b, k, "repeated in %s", run->label);
            else if (strcmp(o->status, "ok") != 0)
                rc = add_left_out(c, b, k, "status %s in %s", o->status, run->label);
            else if (strcmp(b->suite, "oom") != 0 && strcmp(b->model_bytes, o->model_bytes) != 0)
                rc = add_left_out(c, b, k, "model_bytes %s in %s, %s in %s: another shape or model",
                                  b->model_bytes, base->label, o->model_bytes, run->label);
            else if (!timed_alike(base, b, run, o, &nb, &no))
                rc = add_left_out(c, b, k,
                                  "%u launch%s a rep in %s, %u in %s: timed another way (one short launch includes "
                                  "its fixed cost)",
                                  nb, nb == 1 ? "" : "es", base->label, no, run->label);
            else {
                gm_cmp_result *r = &c->results[c->n_results++];
                r->base = b;
                r->other = o;
                r->run = k;
                r->direction = gm_cmp_worse_direction(b->metric);
                rc = measure(r, base->n_members > 1 || run->n_members > 1);
            }
            if (rc != 0)
                return -1;
            if (b->repeated || strcmp(b->status, "ok") != 0)
                break;                 /* said once, not once per run */
        }
    }
    for (int k = 1; k < c->n_runs; k++) {
        const gm_cmp_run *run = &c->runs[k];
        for (int i = 0; i < run->n_points; i++)
            if (!joined(c, run, &run->points[i])
                && add_left_out(c, &run->points[i], k, "not in %s (only in %s)", base->label, run->label) != 0)
                return -1;
        if (adjust(c, k) != 0)
            return -1;
    }
    for (int i = 0; i < c->n_results; i++) {
        int v = (judge(&c->results[i], c->threshold, c->alpha, c->gate), c->results[i].verdict);
        c->n_regressions += v == GM_VERDICT_REGRESSION;
        c->n_not_gated += v == GM_VERDICT_NOT_GATED;
        c->n_gated += v == GM_VERDICT_SAME || v == GM_VERDICT_REGRESSION || v == GM_VERDICT_IMPROVEMENT;
    }
    return 0;
}

void gm_comparison_free(gm_comparison *c)
{
    free(c->results);
    free(c->left_out);
    c->results = NULL;
    c->left_out = NULL;
    c->n_results = c->n_left_out = 0;
}
