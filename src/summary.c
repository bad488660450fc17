#include "summary.h"

#include "precision.h"

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
    if (r->status != GM_ROW_OK || !r->has_value || !r->metric || strcmp(r->metric, "bandwidth") != 0)
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

/* Rows: workloads in first-seen order; columns: precisions. */
void gm_summary_print(const gm_summary *s, FILE *f)
{
    if (s->n == 0)
        return;
    fprintf(f, "\npeak bandwidth (GB/s, best median over sizes)\n%-16s", "kernel");
    for (int p = 0; p < GM_PREC_COUNT; p++)
        fprintf(f, " %9s", gm_precision_name((gm_precision)p));
    fputc('\n', f);
    for (size_t i = 0; i < s->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(s->entries[j].suite, s->entries[i].suite)
                   && !strcmp(s->entries[j].workload, s->entries[i].workload);
        if (seen)
            continue;
        char label[48];
        snprintf(label, sizeof label, "%s %s", s->entries[i].suite, s->entries[i].workload);
        fprintf(f, "%-16s", label);
        for (int p = 0; p < GM_PREC_COUNT; p++) {
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
