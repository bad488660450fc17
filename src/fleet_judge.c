/* The fleet's outlier rule (fleet.h): per point the median, the scale and
 * each GPU's deviation, flagged in the metric's worse direction; then each
 * GPU's summary. */
#include "fleet.h"

#include "metric_direction.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>

#define MAD_TO_SIGMA 1.4826   /* MAD of a normal sample to its standard deviation */
#define RELATIVE_FLOOR 0.01   /* no scale below 1% of the median */

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), which it sorts. */
static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return gm_quantile_sorted(v, (size_t)n, 0.5);
}

static void judge_point(gm_fleet_point *p, double k, double *tmp)
{
    p->direction = gm_metric_direction_of(p->key[GM_FLEET_KEY_FIELDS - 1]);
    p->n_flagged = 0;
    for (int i = 0; i < p->n_obs; i++)
        tmp[i] = p->obs[i].value;
    p->median = median_of(tmp, p->n_obs);
    if (p->n_obs < 2) {
        p->scale = 0;
        p->obs[0].deviation = 0;
        p->obs[0].flagged = false;
        return;
    }
    for (int i = 0; i < p->n_obs; i++)
        tmp[i] = fabs(p->obs[i].value - p->median);
    double mad = median_of(tmp, p->n_obs);
    for (int i = 0; i < p->n_obs; i++)
        tmp[i] = p->obs[i].spread;
    double spread = median_of(tmp, p->n_obs);
    /* Two GPUs sit exactly one MAD from their median: no spread across
     * GPUs can be measured, so their repetitions' spread alone scales. */
    double across = p->n_obs >= 3 ? MAD_TO_SIGMA * mad : 0;
    p->scale = fmax(fmax(across, spread), RELATIVE_FLOOR * fabs(p->median));
    for (int i = 0; i < p->n_obs; i++) {
        gm_fleet_obs *o = &p->obs[i];
        double diff = o->value - p->median;
        o->deviation = p->scale > 0 ? diff / p->scale : diff == 0 ? 0 : copysign(INFINITY, diff);
        /* Positive `worse` is a deviation in the direction bad for the metric. */
        double worse = p->direction == 0 ? 0 : -(double)p->direction * o->deviation;
        o->flagged = worse > k;
        p->n_flagged += o->flagged;
    }
}

int gm_fleet_judge(gm_fleet *f, double k)
{
    int most = 1;
    for (int i = 0; i < f->n_points; i++)
        if (f->points[i].n_obs > most)
            most = f->points[i].n_obs;
    double *tmp = malloc((size_t)most * sizeof *tmp);
    if (!tmp)
        return -1;
    for (int g = 0; g < f->n_gpus; g++) {
        f->gpus[g].points = f->gpus[g].flagged = 0;
        f->gpus[g].worst = 0;
        f->gpus[g].worst_point = -1;
    }
    for (int i = 0; i < f->n_points; i++) {
        gm_fleet_point *p = &f->points[i];
        judge_point(p, k, tmp);
        if (p->n_obs < 2 || p->direction == 0)
            continue;
        for (int j = 0; j < p->n_obs; j++) {
            gm_fleet_gpu *g = &f->gpus[p->obs[j].gpu];
            double worse = -(double)p->direction * p->obs[j].deviation;
            g->points++;
            g->flagged += p->obs[j].flagged;
            if (worse > g->worst) {
                g->worst = worse;
                g->worst_point = i;
            }
        }
    }
    free(tmp);
    int flagged = 0;
    for (int g = 0; g < f->n_gpus; g++)
        flagged += f->gpus[g].flagged > 0;
    return flagged;
}
