#include "analysis/compare_output.h"
#include "lib/csv.h"
#include "lib/text_grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CELL GM_GRID_CELL

static const char *const verdict_words[] = {"same", "REGRESSION", "improved", "info", "untested", "not gated"};
static const char *const verdict_csv[] = {"same", "regression", "improvement", "informational", "untested",
                                          "not-gated"};
static const char *const test_words[] = {"mann-whitney", "exact", "none", "t"};
static const char *const basis_words[] = {"", "reps", "rounds", "runs"};

/* The test's units for people: "rounds 5:5", "runs 3:1", "reps only". */
static void basis_cell(char *out, size_t len, const gm_cmp_result *r)
{
    if (r->basis == GM_BASIS_REPS)
        snprintf(out, len, "reps only");
    else if (r->basis == GM_BASIS_ROUNDS || r->basis == GM_BASIS_RUNS)
        snprintf(out, len, "%s %d:%d", basis_words[r->basis], r->units_base, r->units);
    else
        snprintf(out, len, "-");
}

static void mde_cell(char *out, size_t len, double mde)
{
    if (isnan(mde))
        snprintf(out, len, "-");
    else if (isinf(mde) || mde > 99.99)
        snprintf(out, len, ">9999%%");
    else
        snprintf(out, len, "%.1f%%", mde * 100);
}

/* Tests of one run a side with no rounds: they see no run-to-run noise. */
static int reps_only(const gm_comparison *c)
{
    int n = 0;
    for (int i = 0; i < c->n_results; i++)
        n += c->results[i].basis == GM_BASIS_REPS && c->results[i].direction;
    return n;
}

static const char *direction_word(int d)
{
    return d > 0 ? "higher-is-worse" : d < 0 ? "lower-is-worse" : "informational";
}

static void num(char *out, size_t len, double v)
{
    if (isnan(v))
        snprintf(out, len, "-");
    else if (isinf(v))
        snprintf(out, len, "inf");
    else
        snprintf(out, len, "%.4g", v);
}

static void change(char *out, size_t len, double ratio)
{
    if (isinf(ratio))
        snprintf(out, len, "+inf");
    else
        snprintf(out, len, "%+.1f%%", (ratio - 1) * 100);
}

/* Columns: point, metric, unit, BASE, then per other run: its median,
 * the ratio with its interval, p after Holm, the minimum detectable
 * change, the test's units, the verdict. */
enum { PER_RUN = 6 };

static int build(gm_grid *g, const gm_comparison *c)
{
    if (gm_grid_init(g, 4 + PER_RUN * (c->n_runs - 1)) != 0 || gm_grid_add_row(g) < 0)
        return -1;
    snprintf(gm_grid_cell(g, 0, 0), CELL, "point");
    snprintf(gm_grid_cell(g, 0, 1), CELL, "metric");
    snprintf(gm_grid_cell(g, 0, 2), CELL, "unit");
    snprintf(gm_grid_cell(g, 0, 3), CELL, "%.100s", c->runs[0].label);
    for (int k = 1; k < c->n_runs; k++) {
        int at = 4 + PER_RUN * (k - 1);
        snprintf(gm_grid_cell(g, 0, at), CELL, "%.100s", c->runs[k].label);
        snprintf(gm_grid_cell(g, 0, at + 1), CELL, "ratio [95%% CI]");
        snprintf(gm_grid_cell(g, 0, at + 2), CELL, "p (Holm)");
        snprintf(gm_grid_cell(g, 0, at + 3), CELL, "MDE");
        snprintf(gm_grid_cell(g, 0, at + 4), CELL, "units");
        snprintf(gm_grid_cell(g, 0, at + 5), CELL, "verdict");
    }
    for (int i = 0; i < c->n_results;) {
        const gm_cmp_point *b = c->results[i].base;
        if (gm_grid_add_row(g) < 0)
            return -1;
        int row = g->rows - 1;
        char label[300], v[40], lo[40], hi[40];
        gm_cmp_point_label(b, label, sizeof label);
        snprintf(gm_grid_cell(g, row, 0), CELL, "%.150s", label);
        snprintf(gm_grid_cell(g, row, 1), CELL, "%.150s", b->metric);
        snprintf(gm_grid_cell(g, row, 2), CELL, "%.150s", b->unit);
        num(gm_grid_cell(g, row, 3), CELL, b->value);
        for (int k = 1; k < c->n_runs; k++)
            for (int j = 0; j < PER_RUN; j++)
                snprintf(gm_grid_cell(g, row, 4 + PER_RUN * (k - 1) + j), CELL, "-");
        for (; i < c->n_results && c->results[i].base == b; i++) {
            const gm_cmp_result *r = &c->results[i];
            int at = 4 + PER_RUN * (r->run - 1);
            int tested = r->test == GM_TEST_MANN_WHITNEY || r->test == GM_TEST_T;
            num(gm_grid_cell(g, row, at), CELL, r->other->value);
            num(v, sizeof v, r->ratio);
            num(lo, sizeof lo, r->ci_lo);
            num(hi, sizeof hi, r->ci_hi);
            if (tested)
                snprintf(gm_grid_cell(g, row, at + 1), CELL, "%s [%s, %s]", v, lo, hi);
            else
                snprintf(gm_grid_cell(g, row, at + 1), CELL, "%s", v);
            if (tested && !isnan(r->p_holm))
                snprintf(gm_grid_cell(g, row, at + 2), CELL, "%.2g", r->p_holm);
            else
                snprintf(gm_grid_cell(g, row, at + 2), CELL, "%s", r->test == GM_TEST_EXACT ? "exact" : "-");
            mde_cell(gm_grid_cell(g, row, at + 3), CELL, r->mde);
            basis_cell(gm_grid_cell(g, row, at + 4), CELL, r);
            snprintf(gm_grid_cell(g, row, at + 5), CELL, "%s", verdict_words[r->verdict]);
        }
    }
    return 0;
}

void gm_compare_print_regressions(FILE *f, const gm_comparison *c, const char *prefix)
{
    for (int i = 0; i < c->n_results; i++) {
        const gm_cmp_result *r = &c->results[i];
        if (r->verdict != GM_VERDICT_REGRESSION)
            continue;
        char label[300], a[40], b[40], ch[40];
        gm_cmp_point_label(r->base, label, sizeof label);
        num(a, sizeof a, r->base->value);
        num(b, sizeof b, r->other->value);
        change(ch, sizeof ch, r->ratio);
        fprintf(f, "%s%s: %s %s: %s -> %s %s (%s, ", prefix, c->runs[r->run].label, label, r->base->metric, a, b,
                r->base->unit, ch);
        if (r->test == GM_TEST_MANN_WHITNEY || r->test == GM_TEST_T)
            fprintf(f, "p=%.2g after Holm, %s)\n", r->p_holm,
                    r->basis == GM_BASIS_REPS ? "repetitions of one run only" : r->basis == GM_BASIS_RUNS
                        ? "t test on run medians" : "t test on round medians");
        else
            fprintf(f, "exact values)\n");
    }
}

/* A gated test whose MDE exceeds the threshold: it could not have seen a
 * change of that size. */
static int blind(const gm_comparison *c, const gm_cmp_result *r)
{
    int gated = r->verdict == GM_VERDICT_SAME || r->verdict == GM_VERDICT_REGRESSION
                || r->verdict == GM_VERDICT_IMPROVEMENT;
    return gated && (r->test == GM_TEST_T || r->test == GM_TEST_MANN_WHITNEY) && r->mde > c->threshold;
}

int gm_compare_print_blind(FILE *f, const gm_comparison *c, const char *prefix)
{
    int n = 0, gated = 0;
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < c->n_results; i++) {
        const gm_cmp_result *r = &c->results[i];
        gated += r->verdict == GM_VERDICT_SAME || r->verdict == GM_VERDICT_REGRESSION
                 || r->verdict == GM_VERDICT_IMPROVEMENT;
        if (blind(c, r)) {
            n++;
            lo = fmin(lo, r->mde);
            hi = fmax(hi, r->mde);
        }
    }
    if (!n)
        return 0;
    char a[32], b[32];
    mde_cell(a, sizeof a, lo);
    mde_cell(b, sizeof b, hi);
    fprintf(f, "%scannot see a %g%% change in %d of %d gated point%s (MDE %s-%s): ", prefix, c->threshold * 100, n,
            gated, gated == 1 ? "" : "s", a, b);
    for (int i = 0, named = 0; i < c->n_results && named < 3; i++)
        if (blind(c, &c->results[i])) {
            char label[300];
            gm_cmp_point_label(c->results[i].base, label, sizeof label);
            fprintf(f, "%s%s %s", named++ ? ", " : "", label, c->results[i].base->metric);
        }
    fprintf(f, "%s; bench with more rounds (--rounds 10 or more) or longer points\n", n > 3 ? ", ..." : "");
    return n;
}

static void print_header(FILE *f, const gm_comparison *c, int markdown)
{
    const char *b = markdown ? "- " : "";
    if (markdown)
        fprintf(f, "# gpumem compare\n\n## Runs\n\n| run | role | device | backend | driver | suite |\n"
                   "| --- | --- | --- | --- | --- | --- |\n");
    for (int k = 0; k < c->n_runs; k++) {
        const gm_cmp_run *r = &c->runs[k];
        if (markdown)
            fprintf(f, "| %s | %s | %s | %s | %s | %s |\n", r->label, k ? "compared" : "BASE", r->device, r->backend,
                    r->driver, r->version);
        else
            fprintf(f, "%-4s %s: %s (%s, driver %s), suite %s\n", k ? "NEW" : "BASE", r->label, r->device,
                    r->backend, r->driver, r->version);
    }
    if (markdown)
        fprintf(f, "\n");
    for (int k = 1; k < c->n_runs; k++) {
        const gm_cmp_run *r = &c->runs[k], *base = &c->runs[0];
        if (strcmp(r->device, base->device) != 0)
            fprintf(f, "%snote: devices differ (%s: %s; %s: %s)\n", b, base->label, base->device, r->label, r->device);
        if (strcmp(r->driver, base->driver) != 0)
            fprintf(f, "%snote: drivers differ (%s: %s; %s: %s)\n", b, base->label, base->driver, r->label, r->driver);
    }
    int tests[64] = {0};
    for (int i = 0; i < c->n_results; i++)
        if ((c->results[i].test == GM_TEST_MANN_WHITNEY || c->results[i].test == GM_TEST_T) && c->results[i].direction
            && c->results[i].run < 64)
            tests[c->results[i].run]++;
    fprintf(f, "%sregression: worse by more than %g%% and significant at alpha %g after Holm over the %d tests per run "
               "(Welch's t on the logarithms of the round medians, or of the run medians when a side is a group "
               "of runs; exact single values: the change alone); ratio = run / %s with its 95%% interval; MDE: the "
               "smallest change the test detects with power 0.8\n",
            b, c->threshold * 100, c->alpha, c->n_runs > 1 ? tests[1] : 0, c->runs[0].label);
    int only = reps_only(c);
    if (only)
        fprintf(f, "%sWARNING: %d test%s compare%s one run a side without rounds (units \"reps only\", Mann-Whitney U "
                   "on the repetitions): %s cannot separate run-to-run noise from a real change; bench with "
                   "--rounds 5 or more, or compare several baseline runs (BASE1,BASE2,BASE3 NEW)\n",
                b, only, only == 1 ? "" : "s", only == 1 ? "s" : "", only == 1 ? "it" : "they");
    if (markdown)
        fprintf(f, "\n## Verdict\n\n");
    if (c->n_not_gated)
        fprintf(f, "%snot gated: %d test%s of one run a side without rounds\n", b, c->n_not_gated,
                c->n_not_gated == 1 ? "" : "s");
    if (c->gate && !c->n_gated) {
        if (!c->n_not_gated)
            fprintf(f, "%sno point gated\n", b);
    } else if (!c->n_regressions)
        fprintf(f, "%sno regression\n", b);
    else {
        fprintf(f, "%s%d regression%s:\n", markdown ? "" : "", c->n_regressions, c->n_regressions == 1 ? "" : "s");
        gm_compare_print_regressions(f, c, markdown ? "- " : "  ");
    }
    fprintf(f, "\n");
}

int gm_compare_print_report(FILE *f, const gm_comparison *c, int markdown)
{
    print_header(f, c, markdown);
    gm_grid g;
    int rc = build(&g, c);
    if (rc == 0) {
        if (markdown)
            fprintf(f, "## Results\n\n");
        gm_grid_print(f, &g, markdown);
    }
    gm_grid_free(&g);
    if (c->n_left_out) {
        fprintf(f, markdown ? "\n## Left out\n\n" : "\nleft out (%d):\n", c->n_left_out);
        for (int i = 0; i < c->n_left_out; i++) {
            char label[300];
            gm_cmp_point_label(c->left_out[i].point, label, sizeof label);
            fprintf(f, "%s%s %s: %s\n", markdown ? "- " : "  ", label, c->left_out[i].point->metric,
                    c->left_out[i].reason);
        }
    }
    return rc != 0 || ferror(f) ? -1 : 0;
}

static void csv_num(char *out, size_t len, double v)
{
    if (isnan(v))
        out[0] = '\0';
    else if (isinf(v))
        snprintf(out, len, "inf");
    else
        snprintf(out, len, "%.15g", v);
}

int gm_compare_print_csv(FILE *f, const gm_comparison *c)
{
    static const char *const head[] = {"base_run", "run", "suite", "workload", "variant", "pattern", "precision",
                                       "mode", "batch", "seq_len", "bytes", "metric", "unit", "direction", "base_median",
                                       "median", "ratio", "ci_low", "ci_high", "p_value", "p_holm", "n_base", "n",
                                       "test", "verdict", "note", "basis", "units_base", "units", "mde",
                                       "run_noise_seen"};
    enum { N = 31 };
    if (gm_csv_row(f, head, N) != 0)
        return -1;
    for (int i = 0; i < c->n_results + c->n_left_out; i++) {
        int result = i < c->n_results;
        const gm_cmp_result *r = result ? &c->results[i] : NULL;
        const gm_cmp_left_out *l = result ? NULL : &c->left_out[i - c->n_results];
        const gm_cmp_point *p = result ? r->base : l->point;
        char nums[12][40] = {{0}};
        if (result) {
            csv_num(nums[0], 40, r->base->value);
            csv_num(nums[1], 40, r->other->value);
            csv_num(nums[2], 40, r->ratio);
            csv_num(nums[3], 40, r->ci_lo);
            csv_num(nums[4], 40, r->ci_hi);
            csv_num(nums[5], 40, r->p);
            csv_num(nums[6], 40, r->p_holm);
            snprintf(nums[7], 40, "%zu", r->base->n_samples);
            snprintf(nums[8], 40, "%zu", r->other->n_samples);
            if (r->basis != GM_BASIS_NONE) {
                snprintf(nums[9], 40, "%d", r->units_base);
                snprintf(nums[10], 40, "%d", r->units);
            }
            csv_num(nums[11], 40, r->mde);
        }
        int tested = result && (r->test == GM_TEST_MANN_WHITNEY || r->test == GM_TEST_T);
        const char *run = c->runs[result ? r->run : l->run].label;
        const char *row[N] = {c->runs[0].label, run, p->suite, p->workload, p->variant, p->pattern, p->precision,
                              p->mode, p->batch, p->seq_len, p->bytes, p->metric, p->unit,
                              direction_word(gm_cmp_worse_direction(p->metric)), nums[0], nums[1], nums[2], nums[3],
                              nums[4], nums[5], nums[6], nums[7], nums[8], result ? test_words[r->test] : "",
                              result ? verdict_csv[r->verdict] : "left-out", result ? "" : l->reason,
                              result ? basis_words[r->basis] : "", nums[9], nums[10], nums[11],
                              tested ? (r->basis == GM_BASIS_REPS ? "0" : "1") : ""};
        if (gm_csv_row(f, row, N) != 0)
            return -1;
    }
    return 0;
}
