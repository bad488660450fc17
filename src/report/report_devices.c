/*
 * The report of a multi-device run: a column per device. Each device's
 * report is collected from its own folder (gm_report_collect); the rows
 * are the union of their measures, in the order they first appear.
 */
#include "report/report_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The union of every device's labels of one table (facts or headline). */
typedef struct {
    const char *labels[GM_REPORT_MAX_ROWS + 32];
    int n;
} label_set;

static void add_labels(label_set *set, const gm_report_row *rows, int n)
{
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int k = 0; k < set->n && !seen; k++)
            seen = strcmp(set->labels[k], rows[i].label) == 0;
        if (!seen && set->n < (int)(sizeof set->labels / sizeof set->labels[0]))
            set->labels[set->n++] = rows[i].label;
    }
}

static const char *value_of(const gm_report_row *rows, int n, const char *label)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].label, label) == 0)
            return rows[i].value;
    return "";
}

typedef struct {
    const gm_run_device *devs;
    gm_report *reps;              /* one per device */
    int n;
} device_reports;

static void column_title(const gm_run_device *d, char *out, size_t len)
{
    snprintf(out, len, "device %d: %s (%s)", d->index, d->device, d->device_id);
}

/* One of a report's tables: its facts (facts != 0) or its headline. */
static const gm_report_row *table_rows(const gm_report *r, int facts, int *n)
{
    *n = facts ? r->n_facts : r->n_headline;
    return facts ? r->facts : r->headline;
}

/* The rows of a table across the devices: the union of their labels. */
static void union_labels(const device_reports *dr, int facts, label_set *set)
{
    set->n = 0;
    for (int k = 0; k < dr->n; k++) {
        int n;
        const gm_report_row *rows = table_rows(&dr->reps[k], facts, &n);
        add_labels(set, rows, n);
    }
}

/* Device k's value of the row `label` ("" where it has none). */
static const char *device_value(const device_reports *dr, int k, int facts, const char *label)
{
    int n;
    const gm_report_row *rows = table_rows(&dr->reps[k], facts, &n);
    return value_of(rows, n, label);
}

static void md_table(FILE *f, const char *head, const device_reports *dr, int facts)
{
    label_set set;
    union_labels(dr, facts, &set);
    fprintf(f, "%s\n\n| measure |", head);
    for (int k = 0; k < dr->n; k++) {
        char title[400];
        column_title(&dr->devs[k], title, sizeof title);
        fputc(' ', f);
        gm_md_cell(f, title);
        fputs(" |", f);
    }
    fputs("\n| --- |", f);
    for (int k = 0; k < dr->n; k++)
        fputs(" --- |", f);
    fputc('\n', f);
    for (int i = 0; i < set.n; i++) {
        fputs("| ", f);
        gm_md_cell(f, set.labels[i]);
        fputs(" |", f);
        for (int k = 0; k < dr->n; k++) {
            fputc(' ', f);
            gm_md_cell(f, device_value(dr, k, facts, set.labels[i]));
            fputs(" |", f);
        }
        fputc('\n', f);
    }
    fputc('\n', f);
}

static void html_table(FILE *f, const char *head, const char *id, const device_reports *dr, int facts)
{
    label_set set;
    union_labels(dr, facts, &set);
    fprintf(f, "<h2>%s</h2>\n<table id=\"%s\">\n<tr><th>measure</th>", head, id);
    for (int k = 0; k < dr->n; k++) {
        char title[400];
        column_title(&dr->devs[k], title, sizeof title);
        fputs("<th>", f);
        gm_html_text(f, title);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (int i = 0; i < set.n; i++) {
        fputs("<tr><td>", f);
        gm_html_text(f, set.labels[i]);
        fputs("</td>", f);
        for (int k = 0; k < dr->n; k++) {
            fputs("<td>", f);
            gm_html_text(f, device_value(dr, k, facts, set.labels[i]));
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* The three answers, a row each and a column per device (a question no
 * device answered is left out). Markdown, or HTML when html != 0. */
static void answers_table(FILE *f, const device_reports *dr, int html)
{
    int any = 0;
    for (int q = 0; q < GM_ANSWERS; q++)
        for (int k = 0; k < dr->n; k++)
            any |= dr->reps[k].answers[q].label[0] != 0;
    if (!any)
        return;
    fputs(html ? "<table id=\"answers\">\n<tr><th>question</th>" : "| question |", f);
    for (int k = 0; k < dr->n; k++) {
        char title[400];
        column_title(&dr->devs[k], title, sizeof title);
        fputs(html ? "<th>" : " ", f);
        html ? gm_html_text(f, title) : gm_md_cell(f, title);
        fputs(html ? "</th>" : " |", f);
    }
    fputs(html ? "</tr>\n" : "\n| --- |", f);
    for (int k = 0; k < dr->n && !html; k++)
        fputs(" --- |", f);
    fputs(html ? "" : "\n", f);
    for (int q = 0; q < GM_ANSWERS; q++) {
        const char *label = NULL;
        for (int k = 0; k < dr->n && !label; k++)
            if (dr->reps[k].answers[q].label[0])
                label = dr->reps[k].answers[q].label;
        if (!label)
            continue;
        fputs(html ? "<tr><td>" : "| ", f);
        html ? gm_html_text(f, label) : gm_md_cell(f, label);
        fputs(html ? "</td>" : " |", f);
        for (int k = 0; k < dr->n; k++) {
            fputs(html ? "<td>" : " ", f);
            html ? gm_html_text(f, dr->reps[k].answers[q].value) : gm_md_cell(f, dr->reps[k].answers[q].value);
            fputs(html ? "</td>" : " |", f);
        }
        fputs(html ? "</tr>\n" : "\n", f);
    }
    fputs(html ? "</table>\n" : "\n", f);
}

/* The plot kinds, in the order gpumem plot draws them: the results.csv
 * kinds, then memory over time. */
static const char *plot_kind(int p) { return p < GM_PLOT_KINDS ? gm_plot_kind_name(p) : "memory"; }

static int write_both(const char *run, const char *title, const device_reports *dr, char *err, size_t len)
{
    char md_path[4200], html_path[4200];
    snprintf(md_path, sizeof md_path, "%s/report.md", run);
    snprintf(html_path, sizeof html_path, "%s/report.html", run);
    FILE *md = fopen(md_path, "w"), *html = fopen(html_path, "w");
    int rc = 0;
    if (!md || !html) {
        snprintf(err, len, "cannot write %s", md ? html_path : md_path);
        rc = -1;
    } else {
        fprintf(md, "# %s\n\n%d devices, a column each.\n\n", title, dr->n);
        answers_table(md, dr, 0);
        md_table(md, "## Devices", dr, 1);
        md_table(md, "## Headline numbers", dr, 0);
        gm_html_head(html, title);
        fprintf(html, "<p>%d devices, a column each.</p>\n", dr->n);
        answers_table(html, dr, 1);
        html_table(html, "Devices", "facts", dr, 1);
        html_table(html, "Headline numbers", "headline", dr, 0);
        for (int k = 0; k < dr->n && rc == 0; k++) {
            char title_k[400];
            column_title(&dr->devs[k], title_k, sizeof title_k);
            fprintf(md, "## Plots of %s\n\n", title_k);
            fputs("<h2>Plots of ", html);
            gm_html_text(html, title_k);
            fputs("</h2>\n", html);
            for (int p = 0; p <= GM_PLOT_KINDS && rc == 0; p++) {
                const char *kind = plot_kind(p);
                char svg[4600], id[300];
                snprintf(svg, sizeof svg, "%s/%s/plots/%s.svg", run, dr->devs[k].folder, kind);
                FILE *probe = fopen(svg, "r");
                if (!probe)
                    continue;             /* the device has no plot of this kind */
                fclose(probe);
                fprintf(md, "![%s](%s/plots/%s.svg)\n\n", kind, dr->devs[k].folder, kind);
                snprintf(id, sizeof id, "%s-%d", kind, k);
                if (gm_html_plot(html, svg, id, kind) != 0) {
                    snprintf(err, len, "cannot read %s for the HTML report", svg);
                    rc = -1;
                }
            }
        }
        fputs("</body>\n</html>\n", html);
    }
    if (md && fclose(md) != 0 && rc == 0) {
        snprintf(err, len, "cannot write %s", md_path);
        rc = -1;
    }
    if (html && fclose(html) != 0 && rc == 0) {
        snprintf(err, len, "cannot write %s", html_path);
        rc = -1;
    }
    return rc;
}

int gm_report_write_devices(const char *run, const gm_run_device *devs, int n, char *err, size_t len)
{
    device_reports dr = {devs, calloc((size_t)n, sizeof(gm_report)), n};
    if (!dr.reps) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        char dir[4400], csv[4500];
        snprintf(dir, sizeof dir, "%s/%s", run, devs[k].folder);
        snprintf(csv, sizeof csv, "%s/results.csv", dir);
        gm_plot_data d;
        if (gm_plot_data_load(csv, &d, err, len) != 0) {
            rc = -1;
            break;
        }
        gm_report_collect(&d, dir, &dr.reps[k]);
        gm_plot_data_free(&d);
    }
    if (rc == 0) {
        const char *name = strrchr(run, '/') ? strrchr(run, '/') + 1 : run;
        char title[300];
        snprintf(title, sizeof title, "gpumem run %s", name);
        rc = write_both(run, title, &dr, err, len);
    }
    free(dr.reps);
    return rc;
}
