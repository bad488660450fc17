/* The fleet's outlier rule (fleet.h): per point and device model the
 * median, the scale and each GPU's deviation, flagged in the metric's
 * worse direction; then each GPU's summary. */
#include "analysis/fleet.h"

#include "analysis/metric_direction.h"
#include "lib/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RELATIVE_FLOOR 0.01   /* no scale below 1% of the median */

/* The median of sorted[0..n) without its element at rank `skip`. */
static double median_without(const double *sorted, int n, int skip)
{
    int m = n - 1;
    int lo = (m - 1) / 2, hi = m / 2;
    double a = sorted[lo < skip ? lo : lo + 1], b = sorted[hi < skip ? hi : hi + 1];
    return (a + b) / 2;
}

typedef struct {
    double key;
    int obs;
} ranked;

static int by_key(const void *a, const void *b)
{
    double x = ((const ranked *)a)->key, y = ((const ranked *)b)->key;
    return (x > y) - (x < y);
}

/* Sorts rk[0..n) by key and writes each observation's rank into rank[obs]
 * and the sorted keys into sorted. */
static void rank_keys(ranked *rk, int n, int *rank, double *sorted)
{
    qsort(rk, (size_t)n, sizeof *rk, by_key);
    for (int r = 0; r < n; r++) {
        rank[rk[r].obs] = r;
        sorted[r] = rk[r].key;
    }
}

/* Judges one point; work holds 2 x n_obs doubles, rk n_obs entries and
 * spread_rank n_obs ints. */
static void judge_point(gm_fleet_point *p, double k, double *work, ranked *rk, int *spread_rank)
{
    int n = p->n_obs;
    double *values = work, *spreads = work + n;
    p->direction = gm_metric_direction_of(p->key[GM_POINT_KEY_FIELDS - 1]);
    p->n_flagged = 0;
    for (int i = 0; i < n; i++)
        values[i] = p->obs[i].value;
    p->median = gm_median_in_place(values, (size_t)n);
    p->scale = 0;
    if (n < 2) {
        p->obs[0].deviation = 0;
        p->obs[0].flagged = false;
        return;
    }
    /* Two GPUs sit exactly one MAD from their median: no spread across
     * GPUs can be measured, so the repetitions' spread alone scales. */
    double across = n >= 3 ? GM_MAD_TO_SIGMA * gm_mad_in_place(values, (size_t)n, p->median) : 0;
    for (int i = 0; i < n; i++)
        rk[i] = (ranked){p->obs[i].spread, i};
    rank_keys(rk, n, spread_rank, spreads);
    /* Each GPU's tolerance comes from the other GPUs' repetitions, so that
     * a bad (and often noisy) GPU does not widen its own. */
    for (int i = 0; i < n; i++) {
        gm_fleet_obs *o = &p->obs[i];
        double scale = fmax(fmax(across, median_without(spreads, n, spread_rank[i])), RELATIVE_FLOOR * fabs(p->median));
        double diff = o->value - p->median;
        o->deviation = scale > 0 ? diff / scale : diff == 0 ? 0 : copysign(INFINITY, diff);
        /* Positive `worse` is a deviation in the direction bad for the metric. */
        double worse = p->direction == 0 ? 0 : -(double)p->direction * o->deviation;
        o->flagged = worse > k;
        p->n_flagged += o->flagged;
    }
    p->scale = fmax(fmax(across, gm_quantile_sorted(spreads, (size_t)n, 0.5)), RELATIVE_FLOOR * fabs(p->median));
}

/* Orders p's observations by their GPU's device name, then GPU. */
static void sort_by_model(const gm_fleet *f, gm_fleet_point *p)
{
    for (int i = 1; i < p->n_obs; i++) {
        gm_fleet_obs o = p->obs[i];
        int j = i;
        for (; j > 0; j--) {
            const gm_fleet_obs *q = &p->obs[j - 1];
            int c = strcmp(f->gpus[q->gpu].device, f->gpus[o.gpu].device);
            if (c < 0 || (c == 0 && q->gpu < o.gpu))
                break;
            p->obs[j] = p->obs[j - 1];
        }
        p->obs[j] = o;
    }
}

int gm_fleet_judge(gm_fleet *f, double k)
{
    int most = 1;
    for (int i = 0; i < f->n_points; i++)
        if (f->points[i].n_obs > most)
            most = f->points[i].n_obs;
    double *work = malloc(2 * (size_t)most * sizeof *work);
    ranked *rk = malloc((size_t)most * sizeof *rk);
    int *ranks = malloc((size_t)most * sizeof *ranks);
    if (!work || !rk || !ranks) {
        free(work);
        free(rk);
        free(ranks);
        return -1;
    }
    for (int g = 0; g < f->n_gpus; g++) {
        f->gpus[g].points = f->gpus[g].flagged = 0;
        f->gpus[g].worst = 0;
        f->gpus[g].worst_point = -1;
    }
    for (int i = 0; i < f->n_points; i++) {
        gm_fleet_point *p = &f->points[i];
        sort_by_model(f, p);
        int flagged = 0, largest = 0;
        for (int start = 0, end; start < p->n_obs; start = end) {
            for (end = start + 1; end < p->n_obs; end++)
                if (strcmp(f->gpus[p->obs[end].gpu].device, f->gpus[p->obs[start].gpu].device) != 0)
                    break;
            gm_fleet_point model = *p;          /* the GPUs of one device model */
            model.obs = p->obs + start;
            model.n_obs = end - start;
            judge_point(&model, k, work, rk, ranks);
            flagged += model.n_flagged;
            if (model.n_obs > largest) {
                largest = model.n_obs;
                p->median = model.median;
                p->scale = model.scale;
                p->direction = model.direction;
            }
            if (model.n_obs < 2 || model.direction == 0)
                continue;
            for (int j = 0; j < model.n_obs; j++) {
                gm_fleet_gpu *g = &f->gpus[model.obs[j].gpu];
                double worse = -(double)model.direction * model.obs[j].deviation;
                g->points++;
                g->flagged += model.obs[j].flagged;
                if (worse > g->worst) {
                    g->worst = worse;
                    g->worst_point = i;
                }
            }
        }
        p->n_flagged = flagged;
    }
    free(work);
    free(rk);
    free(ranks);
    int flagged = 0;
    for (int g = 0; g < f->n_gpus; g++)
        flagged += f->gpus[g].flagged > 0;
    return flagged;
}
