/* The card sheet (card_sheet.h). */
#include "report/card_sheet.h"

#include "lib/units.h"
#include "report/report_figures.h"
#include "report/report_parts.h"
#include "run/point_key.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CARDS 16
#define MAX_FAMILIES 64
#define MAX_NAMES 64

/* A row named `label`, its cards' cells "-" (a group's head: empty). */
static int add_row(gm_grid *g, const char *label, int head)
{
    int row = gm_grid_add_row(g);
    if (row < 0)
        return -1;
    gm_grid_set(g, row, 0, "%s%s", head ? "" : "  ", label);
    for (int k = 1; k < g->cols && !head; k++)
        gm_grid_set(g, row, k, "-");
    return row;
}

static void memory_cells(gm_grid *g, int row, int k, const gm_report_figures *f)
{
    char a[32], b[32];
    if (!f->has_usable)
        return;
    gm_format_size(f->usable, a, sizeof a);
    if (f->cap)
        gm_grid_set(g, row, k, "%s, %.0f%% of its %s cap", a, 100.0 * (double)f->usable / (double)f->cap,
                    gm_format_size(f->cap, b, sizeof b));
    else if (f->advertised)
        gm_grid_set(g, row, k, "%s, %.1f%% of %s", a, 100.0 * (double)f->usable / (double)f->advertised,
                    gm_format_size(f->advertised, b, sizeof b));
    else
        gm_grid_set(g, row, k, "%s", a);
    if (f->has_block)
        gm_grid_set(g, row + 1, k, "%s", gm_format_size(f->block, a, sizeof a));
}

static void speed_cells(gm_grid *g, int row, int k, const gm_report_figures *f)
{
    if (f->mem.has && f->peak_gbs > 0)
        gm_grid_set(g, row, k, "%.1f GB/s, %.0f%% of %.0f peak", f->mem.gbs, 100.0 * f->mem.gbs / f->peak_gbs,
                    f->peak_gbs);
    else if (f->mem.has)
        gm_grid_set(g, row, k, "%.1f GB/s", f->mem.gbs);
    else if (f->largest_stream)
        gm_grid_set(g, row, k, "arrays under 4x the cache");
    if (f->cache.has)
        gm_grid_set(g, row + 1, k, "%.1f GB/s", f->cache.gbs);
    if (!f->n_transfers)
        return;
    static const char *const directions[] = {"h2d", "d2h", "bidir"};
    char *cell = gm_grid_cell(g, row + 2, k), sz[32];
    size_t used = 0;
    for (int d = 0; d < 3; d++) {
        int i = 0;
        while (i < f->n_transfers && strcmp(f->transfers[i].direction, directions[d]) != 0)
            i++;
        used += (size_t)snprintf(cell + used, GM_GRID_CELL - used, i < f->n_transfers ? "%s%.1f" : "%s-",
                                 d ? " / " : "", i < f->n_transfers ? f->transfers[i].gbs : 0.0);
    }
    snprintf(cell + used, GM_GRID_CELL - used, " GB/s (%s)", gm_format_size(f->transfer_bytes, sz, sizeof sz));
}

/* The names of rows across the cards (a vendor GEMM's precision, a search's
 * name), each once, in the order the cards meet them. */
typedef struct {
    const char *names[MAX_NAMES];
    int n;
} name_set;

static void add_name(name_set *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return;
    if (s->n < MAX_NAMES)
        s->names[s->n++] = name;
}

static void gemm_cell(gm_grid *g, int row, int k, const gm_report_figures *f, const char *precision)
{
    char t[48];
    for (int i = 0; i < f->n_gemm; i++)
        if (strcmp(f->gemm[i].precision, precision) == 0)
            gm_grid_set(g, row, k, "%s %s", gm_fig_throughput(f->gemm[i].value, f->gemm[i].unit, t, sizeof t),
                        f->gemm[i].impl);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* "seq 512: 648, 2048: 162": the search `name`'s largest batch at each
 * sequence length, the best over its patterns (0: not even batch 1). */
static void search_cell(gm_grid *g, int row, int k, const gm_report_figures *f, const char *name)
{
    double seqs[GM_FIG_MAX_SEARCHES];
    int n = 0;
    for (int i = 0; i < f->n_searches; i++) {
        double s = atof(f->searches[i].seq);
        int j = 0;
        while (j < n && seqs[j] != s)
            j++;
        if (!strcmp(f->searches[i].name, name) && j == n)
            seqs[n++] = s;
    }
    if (!n)
        return;
    qsort(seqs, (size_t)n, sizeof *seqs, by_value);
    char *cell = gm_grid_cell(g, row, k);
    size_t used = 0;
    double any = 0;
    for (int j = 0; j < n && used < GM_GRID_CELL; j++) {
        double best = 0;
        for (int i = 0; i < f->n_searches; i++)
            if (!strcmp(f->searches[i].name, name) && atof(f->searches[i].seq) == seqs[j]
                && !f->searches[i].fits_nothing && atof(f->searches[i].batch) > best)
                best = atof(f->searches[i].batch);
        any = fmax(any, best);
        used += (size_t)snprintf(cell + used, GM_GRID_CELL - used, "%s%g: %g", j ? ", " : "seq ", seqs[j], best);
    }
    if (!any)
        gm_grid_set(g, row, k, "batch 1 does not fit (seq %g-%g)", seqs[0], seqs[n - 1]);
}

static void stress_cell(gm_grid *g, int row, int k, const gm_report_figures *f)
{
    if (!f->n_stress)
        return;
    char *cell = gm_grid_cell(g, row, k);
    size_t used = (size_t)snprintf(cell, GM_GRID_CELL, "%d of %d ok", f->n_stress - f->n_stress_failed, f->n_stress);
    for (int i = 0, named = 0; i < f->n_stress && used < GM_GRID_CELL; i++)
        if (!f->stress[i].ok)
            used += (size_t)snprintf(cell + used, GM_GRID_CELL - used, "%s%s", named++ ? ", " : " (FAILED: ",
                                     f->stress[i].name);
    if (f->n_stress_failed && used < GM_GRID_CELL)
        snprintf(cell + used, GM_GRID_CELL - used, ")");
}

/* A suite's kernel family, for people: "stream read-write", "workloads
 * linear (vendor GEMM)", "swap transfer". */
static void family_of(const gm_cmp_point *p, char *out, size_t len)
{
    int dashed;
    const char *role = gm_point_card_role(p->suite, p->workload, p->variant);
    if (!strcmp(p->suite, "stream"))
        snprintf(out, len, "stream %s", gm_plot_stream_family(p->workload, &dashed));
    else if (!strcmp(role, "ours") || !strcmp(role, "vendor"))
        snprintf(out, len, "%s %s (%s)", p->suite, p->workload, strcmp(role, "ours") ? "vendor GEMM" : "our kernel");
    else if (!strcmp(p->suite, "workloads"))
        snprintf(out, len, "%s %s %s", p->suite, p->workload, p->variant);
    else
        snprintf(out, len, "%s %s", p->suite, p->workload);
}

typedef struct {
    char name[96];
    double sum[MAX_CARDS], lo[MAX_CARDS], hi[MAX_CARDS];
    int n[MAX_CARDS];
} family;

/* The family rows: each run's ratios to BASE, oriented so that above 1 is
 * better, summed up by family as a geometric mean with its range. */
static int family_rows(gm_grid *g, const gm_comparison *c)
{
    family *fam = calloc(MAX_FAMILIES, sizeof *fam);
    int n_fam = 0, rc = 0;
    if (!fam)
        return -1;
    for (int i = 0; i < c->n_results; i++) {
        const gm_cmp_result *r = &c->results[i];
        double better = r->direction > 0 ? 1 / r->ratio : r->ratio;
        if (!r->direction || r->run >= MAX_CARDS || !(better > 0) || !isfinite(better))
            continue;
        char name[96];
        family_of(r->base, name, sizeof name);
        int j = 0;
        while (j < n_fam && strcmp(fam[j].name, name) != 0)
            j++;
        if (j == n_fam && n_fam == MAX_FAMILIES)
            continue;
        if (j == n_fam)
            snprintf(fam[n_fam++].name, sizeof fam[0].name, "%s", name);
        family *f = &fam[j];
        f->lo[r->run] = f->n[r->run] ? fmin(f->lo[r->run], better) : better;
        f->hi[r->run] = f->n[r->run] ? fmax(f->hi[r->run], better) : better;
        f->sum[r->run] += log(better);
        f->n[r->run]++;
    }
    char head[300];
    snprintf(head, sizeof head, "Against %.100s: geometric mean of the ratios, above 1 better [range] points",
             c->runs[0].label);
    if (n_fam && add_row(g, head, 1) < 0)
        rc = -1;
    for (int j = 0; j < n_fam && rc == 0; j++) {
        int row = add_row(g, fam[j].name, 0);
        if (row < 0) {
            rc = -1;
            break;
        }
        gm_grid_set(g, row, 1, "1 (BASE)");
        for (int k = 1; k < c->n_runs && k < g->cols - 1; k++)
            if (fam[j].n[k])
                gm_grid_set(g, row, k + 1, "%.3gx [%.2g-%.2g] %d", exp(fam[j].sum[k] / fam[j].n[k]), fam[j].lo[k],
                            fam[j].hi[k], fam[j].n[k]);
    }
    free(fam);
    return rc;
}

/* The sheet's rows but the family ones, from the cards' figures. */
static int figure_rows(gm_grid *g, const gm_report_figures *fig, int n)
{
    int row = add_row(g, "device", 0);
    for (int k = 0; k < n && row >= 0; k++)
        if (fig[k].device[0])
            gm_grid_set(g, row, k + 1, "%s (%s)", fig[k].device, fig[k].backend);
    if (row < 0 || add_row(g, "How much memory is usable?", 1) < 0 || (row = add_row(g, "largest total", 0)) < 0
        || add_row(g, "largest block", 0) < 0)
        return -1;
    for (int k = 0; k < n; k++)
        memory_cells(g, row, k + 1, &fig[k]);
    if (add_row(g, "How fast is it?", 1) < 0 || (row = add_row(g, "device memory (stream)", 0)) < 0
        || add_row(g, "cache (stream)", 0) < 0 || add_row(g, "pinned h2d / d2h / bidir", 0) < 0)
        return -1;
    for (int k = 0; k < n; k++)
        speed_cells(g, row, k + 1, &fig[k]);
    name_set gemms = {0}, searches = {0};
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < fig[k].n_gemm; i++)
            add_name(&gemms, fig[k].gemm[i].precision);
        for (int i = 0; i < fig[k].n_searches; i++)
            add_name(&searches, fig[k].searches[i].name);
    }
    for (int i = 0; i < gemms.n; i++) {
        char label[80];
        snprintf(label, sizeof label, "vendor GEMM %s, best point", gemms.names[i]);
        if ((row = add_row(g, label, 0)) < 0)
            return -1;
        for (int k = 0; k < n; k++)
            gemm_cell(g, row, k + 1, &fig[k], gemms.names[i]);
    }
    if (searches.n && add_row(g, "Where do the models stop fitting? Largest batch, best pattern", 1) < 0)
        return -1;
    for (int i = 0; i < searches.n; i++) {
        if ((row = add_row(g, searches.names[i], 0)) < 0)
            return -1;
        for (int k = 0; k < n; k++)
            search_cell(g, row, k + 1, &fig[k], searches.names[i]);
    }
    if ((row = add_row(g, "Stress checks", 0)) < 0)
        return -1;
    gm_grid_set(g, row, 0, "Stress checks");
    for (int k = 0; k < n; k++)
        stress_cell(g, row, k + 1, &fig[k]);
    return 0;
}

int gm_card_sheet(gm_grid *g, const gm_card *cards, int n, const gm_comparison *c, char *err, size_t len)
{
    if (n > MAX_CARDS)
        n = MAX_CARDS;
    gm_report_figures *fig = calloc((size_t)n + 1, sizeof *fig);
    int rc = fig && gm_grid_init(g, n + 1) == 0 && gm_grid_add_row(g) == 0 ? 0 : -1;
    if (rc != 0)
        snprintf(err, len, "out of memory");
    for (int k = 0; k < n && rc == 0; k++) {
        char csv[4200];
        gm_plot_data d;
        snprintf(csv, sizeof csv, "%s/results.csv", cards[k].dir);
        if (gm_plot_data_load(csv, &d, err, len) != 0) {
            rc = -1;
            break;
        }
        gm_report_figures_collect(&d, cards[k].dir, &fig[k]);
        gm_plot_data_free(&d);
        gm_grid_set(g, 0, k + 1, "%.150s", cards[k].label);
    }
    if (rc == 0 && (figure_rows(g, fig, n) != 0 || (c && family_rows(g, c) != 0))) {
        snprintf(err, len, "out of memory");
        rc = -1;
    }
    free(fig);
    if (rc != 0)
        gm_grid_free(g);
    return rc;
}

void gm_card_sheet_html(FILE *f, const gm_grid *g)
{
    fputs("<table id=\"cards\">\n", f);
    for (int i = 0; i < g->rows; i++) {
        if (gm_grid_heading(g, i)) {
            fprintf(f, "<tr><th colspan=\"%d\">", g->cols);
            gm_html_text(f, gm_grid_cell(g, i, 0));
            fputs("</th></tr>\n", f);
            continue;
        }
        fputs("<tr>", f);
        for (int k = 0; k < g->cols; k++) {
            fputs(i ? "<td>" : "<th>", f);
            gm_html_text(f, gm_grid_cell(g, i, k) + (k == 0 && i ? strspn(gm_grid_cell(g, i, k), " ") : 0));
            fputs(i ? "</td>" : "</th>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}
