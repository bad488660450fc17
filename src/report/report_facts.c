/* The report's rows (gm_report_headline), its device facts (meta.json) and
 * the stress verdicts of its figures (stress.tap). */
#include "report/report_figures.h"
#include "report/report_parts.h"

#include "lib/json.h"
#include "lib/units.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void gm_report_headline(gm_report *r, const char *label, const char *fmt, ...)
{
    if (r->n_headline == GM_REPORT_MAX_ROWS)
        return;
    gm_report_row *row = &r->headline[r->n_headline++];
    snprintf(row->label, sizeof row->label, "%s", label);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->value, sizeof row->value, fmt, ap);
    va_end(ap);
}

static void fact(gm_report *r, const char *label, const char *fmt, const char *value)
{
    if (!value || !value[0] || r->n_facts == (int)(sizeof r->facts / sizeof r->facts[0]))
        return;
    gm_report_row *row = &r->facts[r->n_facts++];
    snprintf(row->label, sizeof row->label, "%s", label);
    snprintf(row->value, sizeof row->value, fmt, value);
}

/* A number or true/false at path as text in buf, or NULL where there is none. */
static const char *scalar(const json_t *m, const char *path, char *buf, size_t len)
{
    const json_t *v = gm_json_at(m, path);
    if (json_is_integer(v))
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
    else
        return NULL;
    return buf;
}

static void size_fact(gm_report *r, const char *label, const json_t *m, const char *path)
{
    char buf[32];
    json_int_t bytes = json_integer_value(gm_json_at(m, path));
    if (bytes > 0)
        fact(r, label, "%s", gm_format_size((uint64_t)bytes, buf, sizeof buf));
}

void gm_report_facts(const char *run, gm_report *r)
{
    char path[4200], err[400], buf[32];
    snprintf(path, sizeof path, "%s/meta.json", run);
    json_t *m = gm_json_load(path, err, sizeof err);
    if (!m) {
        snprintf(r->facts_note, sizeof r->facts_note, "No device facts: %.250s.", err);
        return;
    }
    const char *name = gm_json_str(m, "device.name"), *backend = gm_json_str(m, "device.backend");
    const char *index = scalar(m, "device.index", buf, sizeof buf);
    if (name)
        snprintf(r->device, sizeof r->device, "%s (%s, device %s)", name, backend ? backend : "?",
                 index ? index : "?");
    fact(r, "vendor", "%s", gm_json_str(m, "device.vendor"));
    fact(r, "type", "%s", gm_json_str(m, "device.type"));
    fact(r, "identity", "%s", gm_json_str(m, "device.uuid"));
    fact(r, "driver", "%s", gm_json_str(m, "device.driver_version"));
    fact(r, "runtime", "%s", gm_json_str(m, "device.runtime_version"));
    size_fact(r, "memory", m, "device.total_mem_bytes");
    size_fact(r, "largest allocation the driver allows", m, "device.max_alloc_bytes");
    size_fact(r, "last-level cache", m, "device.llc_bytes");
    size_fact(r, "run's memory cap", m, "device.mem_limit_bytes");
    size_fact(r, "peak memory the run held", m, "device.peak_allocated_bytes");
    fact(r, "compute units", "%s", scalar(m, "device.compute_units", buf, sizeof buf));
    if (json_integer_value(gm_json_at(m, "device.clock_mhz")) != 0)
        fact(r, "clock", "%s MHz", scalar(m, "device.clock_mhz", buf, sizeof buf));
    if (json_integer_value(gm_json_at(m, "device.mem_clock_mhz")) != 0)
        fact(r, "memory clock", "%s MHz", scalar(m, "device.mem_clock_mhz", buf, sizeof buf));
    if (json_integer_value(gm_json_at(m, "device.mem_bus_bits")) != 0)
        fact(r, "memory bus", "%s bits", scalar(m, "device.mem_bus_bits", buf, sizeof buf));
    fact(r, "managed memory", "%s", scalar(m, "device.managed_memory", buf, sizeof buf));
    fact(r, "host", "%s", gm_json_str(m, "host.hostname"));
    fact(r, "host CPU", "%s", gm_json_str(m, "host.cpu"));
    fact(r, "suite version", "%s", gm_json_str(m, "suite_version"));
    fact(r, "profile", "%s", gm_json_str(m, "profile"));
    fact(r, "started", "%s", gm_json_str(m, "start_time"));
    fact(r, "ended", "%s", gm_json_str(m, "end_time"));
    fact(r, "run status", "%s", gm_json_str(m, "status"));
    json_decref(m);
}

/* An ISO 8601 UTC time ("2026-11-29T04:15:35Z") as seconds, or -1. */
static double iso_seconds(const char *s)
{
    struct tm tm = {0};
    if (!s || sscanf(s, "%d-%d-%dT%d:%d:%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                     &tm.tm_sec) != 6)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm);
}

void gm_report_verify(gm_report *r, const gm_plot_data *d, const char *run)
{
    int col_reps = gm_csv_table_column(&d->table, "reps");
    double ms = 0;
    int rows = 0;
    for (int i = 0; i < d->n_rows; i++) {
        char *const *f = d->fields[i];
        if (strcmp(f[d->col_metric], "verify_time") != 0 || (d->col_unit >= 0 && strcmp(f[d->col_unit], "ms") != 0))
            continue;
        double reps = col_reps >= 0 ? strtod(f[col_reps], NULL) : 1;
        ms += strtod(f[d->col_value], NULL) * (reps > 0 ? reps : 1);
        rows++;
    }
    if (rows == 0)
        return;
    char path[4200], err[400];
    snprintf(path, sizeof path, "%s/meta.json", run);
    json_t *m = gm_json_load(path, err, sizeof err);
    double start = m ? iso_seconds(gm_json_str(m, "start_time")) : -1;
    double end = m ? iso_seconds(gm_json_str(m, "end_time")) : -1;
    json_decref(m);
    const char *what = "the verify_time rows summed, each a point's median check times its repetitions";
    if (start >= 0 && end > start)
        gm_report_headline(r, "verification time", "%.1f s of the run's %.0f s wall time (%.1f%%; %s)", ms / 1e3,
                           end - start, 100.0 * ms / 1e3 / (end - start), what);
    else if (start >= 0 && end == start)
        gm_report_headline(r, "verification time", "%.1f s of a run that took under a second (%s)", ms / 1e3, what);
    else
        gm_report_headline(r, "verification time", "%.1f s (%s; the run's wall time is not in meta.json)", ms / 1e3,
                           what);
}

int gm_report_meta_read(const char *run, gm_report_meta *out)
{
    char path[4200], err[400];
    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "%s/meta.json", run);
    json_t *m = gm_json_load(path, err, sizeof err);
    if (!m)
        return -1;
    out->total_mem = (uint64_t)json_integer_value(gm_json_at(m, "device.total_mem_bytes"));
    out->mem_limit = (uint64_t)json_integer_value(gm_json_at(m, "device.mem_limit_bytes"));
    out->llc = (uint64_t)json_integer_value(gm_json_at(m, "device.llc_bytes"));
    out->mem_clock_mhz = (int)json_integer_value(gm_json_at(m, "device.mem_clock_mhz"));
    out->mem_bus_bits = (int)json_integer_value(gm_json_at(m, "device.mem_bus_bits"));
    const char *type = gm_json_str(m, "device.type");
    out->cpu = type && strcmp(type, "cpu") == 0;
    json_decref(m);
    return 0;
}

/* The verdict of each stress check in the TAP stream at path ("ok" or
 * "not ok" lines). Returns the checks found (0: no such file). */
static int verdicts_from(const char *path, gm_report_figures *f)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return 0;
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof line, in) && f->n_stress < GM_FIG_MAX_STRESS) {
        int failed = strncmp(line, "not ok ", 7) == 0, used = 0;
        if (!failed && strncmp(line, "ok ", 3) != 0)
            continue;
        char name[64];
        if (sscanf(line + (failed ? 7 : 3), "%*d - %63[^ \n#]%n", name, &used) != 1)
            continue;
        snprintf(f->stress[f->n_stress].name, sizeof f->stress[0].name, "%s", name);
        f->stress[f->n_stress++].ok = !failed;
        f->n_stress_failed += failed;
        found++;
    }
    fclose(in);
    return found;
}

void gm_report_figures_stress(const char *run, gm_report_figures *f)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/stress.tap", run);
    if (verdicts_from(path, f) == 0) {
        snprintf(path, sizeof path, "%s/stress/stress.tap", run);
        verdicts_from(path, f);
    }
}
