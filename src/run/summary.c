#include "run/summary.h"

#include "lib/precision.h"

#include <stdlib.h>
#include <string.h>

void gm_summary_init(gm_summary *s) { memset(s, 0, sizeof *s); }

void gm_summary_release(gm_summary *s)
{
    free(s->entries);
    memset(s, 0, sizeof *s);
}

void gm_summary_add(gm_summary *s, const gm_row *r)
{
    if (r->status != GM_ROW_OK || !r->has_value || !r->metric || !r->suite || !r->workload || !r->precision)
        return;
    /* The headline of each suite: bandwidth for stream, FLOP rate for workloads. */
    const char *headline = strcmp(r->suite, "stream") == 0 ? "bandwidth" : "throughput";
    if (strcmp(r->metric, headline) != 0)
        return;
    for (size_t i = 0; i < s->n; i++) {
        gm_summary_entry *e = &s->entries[i];
        if (!strcmp(e->suite, r->suite) && !strcmp(e->workload, r->workload)
            && !strcmp(e->precision, r->precision)) {
            if (r->value > e->best) {
                e->best = r->value;
                e->at_bytes = r->bytes;
            }
            return;
        }
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        gm_summary_entry *grown = realloc(s->entries, cap * sizeof *grown);
        if (!grown)
            return;
        s->entries = grown;
        s->cap = cap;
    }
    gm_summary_entry *e = &s->entries[s->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->suite, sizeof e->suite, "%s", r->suite);
    snprintf(e->workload, sizeof e->workload, "%s", r->workload);
    snprintf(e->precision, sizeof e->precision, "%s", r->precision);
    snprintf(e->unit, sizeof e->unit, "%s", r->unit);
    e->best = r->value;
    e->at_bytes = r->bytes;
}

/* One table per suite; rows: workloads in first-seen order; columns:
 * precisions. */
void gm_summary_print(const gm_summary *s, FILE *f)
{
    for (size_t t = 0; t < s->n; t++) {
        bool suite_seen = false;
        for (size_t j = 0; j < t && !suite_seen; j++)
            suite_seen = !strcmp(s->entries[j].suite, s->entries[t].suite);
        if (suite_seen)
            continue;
        fprintf(f, "\n%s: peak %s (best median over the points)\n%-16s", s->entries[t].suite, s->entries[t].unit,
                "workload");
        /* The default precisions always, the others where the suite has them. */
        unsigned shown = GM_PREC_DEFAULT_MASK;
        for (size_t j = t; j < s->n; j++)
            if (!strcmp(s->entries[j].suite, s->entries[t].suite) && gm_precision_parse(s->entries[j].precision) >= 0)
                shown |= 1u << gm_precision_parse(s->entries[j].precision);
        for (int p = 0; p < GM_PREC_COUNT; p++)
            if (shown & (1u << p))
                fprintf(f, " %9s", gm_precision_name((gm_precision)p));
        fputc('\n', f);
        for (size_t i = t; i < s->n; i++) {
            bool seen = strcmp(s->entries[i].suite, s->entries[t].suite) != 0;
            for (size_t j = t; j < i && !seen; j++)
                seen = !strcmp(s->entries[j].suite, s->entries[i].suite)
                       && !strcmp(s->entries[j].workload, s->entries[i].workload);
            if (seen)
                continue;
            fprintf(f, "%-16s", s->entries[i].workload);
            for (int p = 0; p < GM_PREC_COUNT; p++) {
                if (!(shown & (1u << p)))
                    continue;
                const gm_summary_entry *hit = NULL;
                for (size_t j = 0; j < s->n; j++)
                    if (!strcmp(s->entries[j].suite, s->entries[i].suite)
                        && !strcmp(s->entries[j].workload, s->entries[i].workload)
                        && !strcmp(s->entries[j].precision, gm_precision_name((gm_precision)p)))
                        hit = &s->entries[j];
                if (hit)
                    fprintf(f, " %9.2f", hit->best);
                else
                    fprintf(f, " %9s", "-");
            }
            fputc('\n', f);
        }
    }
}
