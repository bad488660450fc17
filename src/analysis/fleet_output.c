/* Printing a judged fleet (fleet_output.h). */
#include "analysis/fleet_output.h"

#include "lib/csv.h"

#include <stdlib.h>
#include <string.h>

/* A point's name: gm_point_label and its metric. */
static void point_label(const gm_fleet_point *p, char *buf, size_t len)
{
    gm_point_label((const char *const *)p->key, buf, len);
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, " %s", p->key[GM_POINT_KEY_FIELDS - 1]);
}

static const char *direction_name(int d)
{
    return d > 0 ? "higher" : d < 0 ? "lower" : "neither";
}

static void print_csv(const gm_fleet *f, FILE *out)
{
    fputs("gpu,host,device_id,device,run_dir", out);
    for (int k = 0; k < GM_POINT_KEY_FIELDS; k++)
        fprintf(out, ",%s", gm_point_key_columns[k]);
    fputs(",unit,value,fleet_median,scale,deviation,better,flagged\n", out);
    for (int i = 0; i < f->n_points; i++) {
        const gm_fleet_point *p = &f->points[i];
        for (int j = 0; j < p->n_obs; j++) {
            const gm_fleet_obs *o = &p->obs[j];
            const gm_fleet_gpu *g = &f->gpus[o->gpu];
            fprintf(out, "%d,", o->gpu + 1);
            const char *s[] = {g->host, g->device_id, g->device, g->dir};
            for (int k = 0; k < 4; k++) {
                gm_csv_field(out, s[k]);
                fputc(',', out);
            }
            for (int k = 0; k < GM_POINT_KEY_FIELDS; k++) {
                gm_csv_field(out, p->key[k]);
                fputc(',', out);
            }
            gm_csv_field(out, p->unit);
            fprintf(out, ",%.15g,%.15g,%.6g,", o->value, p->median, p->scale);
            if (p->n_obs >= 2)
                fprintf(out, "%.3f", o->deviation);
            fprintf(out, ",%s,%d\n", direction_name(p->direction), o->flagged ? 1 : 0);
        }
    }
}

/* One table row: cells separated for the format. */
static void row(FILE *out, bool md, const char *const *cells, const int *widths, int n)
{
    for (int i = 0; i < n; i++) {
        if (md)
            fprintf(out, "| %s ", cells[i]);
        else
            fprintf(out, "%s%-*s", i ? "  " : "", widths[i], cells[i]);
    }
    fputs(md ? "|\n" : "\n", out);
}

static void rule(FILE *out, bool md, int n)
{
    if (!md)
        return;
    for (int i = 0; i < n; i++)
        fputs("| --- ", out);
    fputs("|\n", out);
}

static void print_gpus(const gm_fleet *f, bool md, FILE *out)
{
    static const char *const head[] = {"gpu", "host", "device_id", "run", "points", "flagged", "worst deviation"};
    static const int w[] = {4, 12, 20, 36, 6, 7, 0};
    row(out, md, head, w, 7);
    rule(out, md, 7);
    for (int g = 0; g < f->n_gpus; g++) {
        const gm_fleet_gpu *gpu = &f->gpus[g];
        char id[16], points[16], flagged[16], worst[600] = "-", label[512];
        snprintf(id, sizeof id, "%d", g + 1);
        snprintf(points, sizeof points, "%d", gpu->points);
        snprintf(flagged, sizeof flagged, "%d", gpu->flagged);
        if (gpu->worst_point >= 0) {
            point_label(&f->points[gpu->worst_point], label, sizeof label);
            snprintf(worst, sizeof worst, "%.1f (%s)", gpu->worst, label);
        }
        const char *cells[] = {id, gpu->host, gpu->device_id[0] ? gpu->device_id : "-", gpu->dir, points, flagged,
                               worst};
        row(out, md, cells, w, 7);
    }
}

static void print_points(const gm_fleet *f, bool md, FILE *out)
{
    bool per_gpu = f->n_gpus <= GM_FLEET_GPU_COLUMNS;
    int n = 6 + (per_gpu ? f->n_gpus : 0);
    const char *head[6 + GM_FLEET_GPU_COLUMNS] = {"point", "unit", "better", "median", "scale", "flagged"};
    char names[GM_FLEET_GPU_COLUMNS][16];
    int w[6 + GM_FLEET_GPU_COLUMNS] = {56, 8, 7, 10, 9, 12};
    for (int g = 0; per_gpu && g < f->n_gpus; g++) {
        snprintf(names[g], sizeof names[g], "gpu %d", g + 1);
        head[6 + g] = names[g];
        w[6 + g] = 18;
    }
    row(out, md, head, w, n);
    rule(out, md, n);
    for (int i = 0; i < f->n_points; i++) {
        const gm_fleet_point *p = &f->points[i];
        char label[512], median[32], scale[32], flagged[2048] = "", vals[GM_FLEET_GPU_COLUMNS][48];
        const char *cells[6 + GM_FLEET_GPU_COLUMNS];
        point_label(p, label, sizeof label);
        snprintf(median, sizeof median, "%.4g", p->median);
        snprintf(scale, sizeof scale, p->n_obs >= 2 ? "%.3g" : "-", p->scale);
        size_t j = 0;
        for (int o = 0; o < p->n_obs; o++)
            if (p->obs[o].flagged && j < sizeof flagged)
                j += (size_t)snprintf(flagged + j, sizeof flagged - j, "%sgpu %d", j ? ", " : "", p->obs[o].gpu + 1);
        cells[0] = label;
        cells[1] = p->unit;
        cells[2] = direction_name(p->direction);
        cells[3] = median;
        cells[4] = scale;
        cells[5] = j ? flagged : "-";
        for (int g = 0; per_gpu && g < f->n_gpus; g++) {
            snprintf(vals[g], sizeof vals[g], "-");
            for (int o = 0; o < p->n_obs; o++)
                if (p->obs[o].gpu == g)
                    snprintf(vals[g], sizeof vals[g], p->n_obs >= 2 ? "%.4g (%+.1f)%s" : "%.4g", p->obs[o].value,
                             p->obs[o].deviation, p->obs[o].flagged ? " !" : "");
            cells[6 + g] = vals[g];
        }
        row(out, md, cells, w, n);
    }
}

void gm_fleet_print(const gm_fleet *f, const char *root, double k, gm_fleet_format format, const gm_fleet_extras *x,
                    FILE *out)
{
    if (format == GM_FLEET_CSV) {
        print_csv(f, out);
        return;
    }
    bool md = format == GM_FLEET_MARKDOWN;
    int flagged = 0;
    for (int g = 0; g < f->n_gpus; g++)
        flagged += f->gpus[g].flagged > 0;
    fprintf(out, "%sfleet %s: %d GPU%s, %d points, %d GPU%s flagged (worse than the fleet median by more than %g "
                 "scales)\n\n",
            md ? "# " : "", root, f->n_gpus, f->n_gpus == 1 ? "" : "s", f->n_points, flagged,
            flagged == 1 ? "" : "s", k);
    if (md)
        fputs("## GPUs\n\n", out);
    print_gpus(f, md, out);
    if (x && x->cards) {
        fputs(md ? "\n## Cards\n\n" : "\n", out);
        x->cards(out, md, x->ctx);
    }
    if (x && !x->points) {
        fprintf(out, "\n%d points, GPU by GPU: --points, or fleet.md of --out DIR\n", f->n_points);
        return;
    }
    fputs(md ? "\n## Points\n\n" : "\n", out);
    print_points(f, md, out);
    if (md)
        fputs("\nEach value's deviation is in scales from the fleet median: scale = max(1.4826 x MAD across GPUs "
              "(three or more), the median spread of the other GPUs' repetitions, 1% of the median); `!` marks a "
              "flagged value.\n",
              out);
}
