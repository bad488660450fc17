/* The card sheet and the written files of gpumem compare (compare_files.h). */
#include "report/compare_files.h"

#include "analysis/compare_output.h"
#include "report/card_sheet.h"
#include "report/plot_data.h"
#include "report/report_parts.h"
#include "run/results.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The sheet of c's runs: a card a run, labelled as the run. */
static int sheet(gm_grid *g, const gm_comparison *c, char *err, size_t len)
{
    gm_card cards[64];
    int n = c->n_runs < 64 ? c->n_runs : 64;
    for (int k = 0; k < n; k++)
        cards[k] = (gm_card){c->runs[k].dir, c->runs[k].label};
    return gm_card_sheet(g, cards, n, c, err, len);
}

int gm_compare_print_cards(FILE *f, const gm_comparison *c, int markdown, char *err, size_t len)
{
    gm_grid g;
    if (sheet(&g, c, err, len) != 0)
        return -1;
    gm_grid_print(f, &g, markdown);
    gm_grid_free(&g);
    return ferror(f) ? -1 : 0;
}

/* One overlay plot: kind k of every run, series prefixed with the run's
 * label; a colour a run (cards) or a run and series. Draws nothing where
 * no run has a point of the kind. */
static int overlay(const gm_comparison *c, int k, const char *dir, char *made, char *err, size_t len)
{
    gm_plot_set all = {0};
    int rc = 0;
    for (int r = 0; r < c->n_runs && rc == 0; r++) {
        gm_plot_data d;
        gm_plot_set set;
        char csv[4200];
        snprintf(csv, sizeof csv, "%s/results.csv", c->runs[r].dir);
        if (gm_plot_data_load(csv, &d, err, len) != 0)
            return -1;
        if (gm_plot_select(&d, k, &set) != 0) {
            gm_plot_data_free(&d);
            snprintf(err, len, "out of memory");
            return -1;
        }
        all.kind = set.kind;
        gm_plot_point *p = realloc(all.points, (size_t)(all.n_points + set.n_points + 1) * sizeof *p);
        if (!p) {
            snprintf(err, len, "out of memory");
            rc = -1;
        } else {
            all.points = p;
            for (int i = 0; i < set.n_points; i++) {
                gm_plot_point *q = &all.points[all.n_points++];
                *q = set.points[i];
                snprintf(q->series, sizeof q->series, "%.60s: %.60s", c->runs[r].label, set.points[i].series);
                snprintf(q->band, sizeof q->band, "%.40s: %.40s", c->runs[r].label, set.points[i].band);
                if (c->cards)
                    snprintf(q->colour, sizeof q->colour, "%.100s", c->runs[r].label);
                else
                    snprintf(q->colour, sizeof q->colour, "%.60s: %.60s", c->runs[r].label, set.points[i].colour);
                int j = 0;
                while (j < all.n_panels && strcmp(all.panels[j], q->panel) != 0)
                    j++;
                if (j == all.n_panels && all.n_panels < GM_PLOT_MAX_PANELS)
                    snprintf(all.panels[all.n_panels++], sizeof all.panels[0], "%s", q->panel);
            }
        }
        gm_plot_set_free(&set);
        gm_plot_data_free(&d);
    }
    /* Cards differ by orders of magnitude: bandwidth on a logarithmic axis. */
    if (c->cards && k == 0)
        snprintf(all.vars, sizeof all.vars, "logy=1; ");
    if (rc == 0 && all.n_points > 0) {
        char base[4300];
        if (gm_plot_data_base(dir, all.kind, base, sizeof base, err, len) != 0 || gm_plot_write(&all, base, err, len) != 0
            || gm_plot_render(&all, dir, err, len) != 0)
            rc = -1;
        else
            snprintf(made, 32, "%s", all.kind);
    }
    gm_plot_set_free(&all);
    return rc;
}

static void emit_md(FILE *f, void *ctx)
{
    const gm_comparison *c = ctx;
    char err[600];
    fputs("# gpumem compare\n\n## Cards\n\n", f);
    if (gm_compare_print_cards(f, c, 1, err, sizeof err) != 0)
        fprintf(f, "No card sheet: %s.\n", err);
    fputs("\n", f);
    gm_compare_print_report(f, c, 1);
}

static void emit_csv(FILE *f, void *ctx) { gm_compare_print_csv(f, ctx); }

typedef struct {
    const gm_comparison *c;
    const char *dir;
    char (*plots)[32];
    int n_plots;
    int failed;        /* an SVG could not be read */
} html_ctx;

static void emit_html(FILE *f, void *ctx)
{
    html_ctx *h = ctx;
    char err[600];
    gm_grid g;
    gm_html_head(f, "gpumem compare");
    fputs("<h2>Cards</h2>\n", f);
    if (sheet(&g, h->c, err, sizeof err) == 0) {
        gm_card_sheet_html(f, &g);
        gm_grid_free(&g);
    } else {
        fputs("<p>No card sheet: ", f);
        gm_html_text(f, err);
        fputs(".</p>\n", f);
    }
    fputs("<p>The point-by-point comparison is in compare.md and compare.csv.</p>\n", f);
    if (h->n_plots)
        fputs("<h2>Overlay plots</h2>\n", f);
    for (int i = 0; i < h->n_plots; i++) {
        char svg[4400];
        snprintf(svg, sizeof svg, "%s/%s.svg", h->dir, h->plots[i]);
        h->failed |= gm_html_plot(f, svg, h->plots[i], h->plots[i]) != 0;
    }
    fputs("</body>\n</html>\n", f);
}

int gm_compare_write(const gm_comparison *c, const char *dir, char *err, size_t len)
{
    char path[4200], plots[4][32] = {{0}};
    if (gm_make_dirs(dir) != 0) {
        snprintf(err, len, "--out: cannot create %.1000s: %s", dir, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/compare.md", dir);
    if (gm_write_file_atomic(path, emit_md, (void *)c, err, len) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/compare.csv", dir);
    if (gm_write_file_atomic(path, emit_csv, (void *)c, err, len) != 0)
        return -1;
    /* bandwidth by size, throughput by batch; for cards the OOM frontiers and swap latency too */
    static const int kinds[] = {0, 1, 2, 3};
    int n_plots = 0;
    for (int i = 0; i < (c->cards ? 4 : 2); i++) {
        if (overlay(c, kinds[i], dir, plots[n_plots], err, len) != 0)
            return -1;
        n_plots += plots[n_plots][0] != 0;
    }
    html_ctx h = {c, dir, plots, n_plots, 0};
    snprintf(path, sizeof path, "%s/compare.html", dir);
    if (gm_write_file_atomic(path, emit_html, &h, err, len) != 0)
        return -1;
    if (h.failed) {
        snprintf(err, len, "cannot read an overlay plot's SVG in %.1000s for compare.html", dir);
        return -1;
    }
    return 0;
}
