#include "run/summary.h"

#include "lib/precision.h"

#include "lib/units.h"

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
    if (s->llc_bytes && !strcmp(r->suite, "stream")) {
        if (r->bytes > s->largest_stream)
            s->largest_stream = r->bytes;
        if (r->bytes < s->llc_bytes && r->value > s->cache.best) {
            snprintf(s->cache.workload, sizeof s->cache.workload, "%s", r->workload);
            snprintf(s->cache.precision, sizeof s->cache.precision, "%s", r->precision);
            s->cache.best = r->value;
            s->cache.at_bytes = r->bytes;
        }
        if (r->bytes < 4 * s->llc_bytes)
            return;                 /* cache, not device memory */
    }
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

/* The stream lines beside its table: cache bandwidth, and why device
 * memory has no table when no array reached 4x the cache. */
static void stream_notes(const gm_summary *s, FILE *f)
{
    char llc[32], sz[32];
    gm_format_size(s->llc_bytes, llc, sizeof llc);
    if (s->llc_bytes && s->largest_stream && s->largest_stream < 4 * s->llc_bytes)
        fprintf(f, "\nstream: device-memory bandwidth not measured: the largest array, %s, is under 4x the %s "
                   "last-level cache\n", gm_format_size(s->largest_stream, sz, sizeof sz), llc);
    if (s->cache.best > 0)
        fprintf(f, "stream: cache bandwidth (arrays below the %s last-level cache): %.2f GB/s (%s %s, %s arrays)\n",
                llc, s->cache.best, s->cache.workload, s->cache.precision,
                gm_format_size(s->cache.at_bytes, sz, sizeof sz));
}

/* One table per suite; rows: workloads in first-seen order; columns:
 * precisions. */
void gm_summary_print(const gm_summary *s, FILE *f)
{
    bool stream_table = false;
    for (size_t t = 0; t < s->n && !stream_table; t++)
        stream_table = !strcmp(s->entries[t].suite, "stream");
    if (!stream_table)
        stream_notes(s, f);
    for (size_t t = 0; t < s->n; t++) {
        bool suite_seen = false;
        for (size_t j = 0; j < t && !suite_seen; j++)
            suite_seen = !strcmp(s->entries[j].suite, s->entries[t].suite);
        if (suite_seen)
            continue;
        char llc[32], from[32];
        if (s->llc_bytes && !strcmp(s->entries[t].suite, "stream"))
            fprintf(f, "\nstream: device-memory %s (best median over arrays >= %s, 4x the %s last-level cache)\n%-16s",
                    s->entries[t].unit, gm_format_size(4 * s->llc_bytes, from, sizeof from),
                    gm_format_size(s->llc_bytes, llc, sizeof llc), "workload");
        else
            fprintf(f, "\n%s: peak %s (best median over the points)\n%-16s", s->entries[t].suite,
                    s->entries[t].unit, "workload");
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
        if (!strcmp(s->entries[t].suite, "stream"))
            stream_notes(s, f);
    }
}
