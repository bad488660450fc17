/* The report's device facts (meta.json) and stress verdicts (stress.tap). */
#include "report/report_parts.h"

#include "lib/json_read.h"
#include "lib/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fact(gm_report *r, const char *label, const char *fmt, const char *value)
{
    if (!value || !value[0] || r->n_facts == (int)(sizeof r->facts / sizeof r->facts[0]))
        return;
    gm_report_row *row = &r->facts[r->n_facts++];
    snprintf(row->label, sizeof row->label, "%s", label);
    snprintf(row->value, sizeof row->value, fmt, value);
}

static void size_fact(gm_report *r, const char *label, const char *bytes)
{
    char buf[32];
    if (bytes && strtoull(bytes, NULL, 10) > 0)
        fact(r, label, "%s", gm_format_size(strtoull(bytes, NULL, 10), buf, sizeof buf));
}

void gm_report_facts(const char *run, gm_report *r)
{
    char path[4200], err[400];
    snprintf(path, sizeof path, "%s/meta.json", run);
    gm_json_doc m;
    if (gm_json_load(path, &m, err, sizeof err) != 0) {
        snprintf(r->facts_note, sizeof r->facts_note, "No device facts: %.250s.", err);
        return;
    }
    const char *name = gm_json_get(&m, "device.name"), *backend = gm_json_get(&m, "device.backend");
    if (name)
        snprintf(r->device, sizeof r->device, "%s (%s, device %s)", name, backend ? backend : "?",
                 gm_json_get(&m, "device.index") ? gm_json_get(&m, "device.index") : "?");
    fact(r, "vendor", "%s", gm_json_get(&m, "device.vendor"));
    fact(r, "type", "%s", gm_json_get(&m, "device.type"));
    fact(r, "identity", "%s", gm_json_get(&m, "device.uuid"));
    fact(r, "driver", "%s", gm_json_get(&m, "device.driver_version"));
    fact(r, "runtime", "%s", gm_json_get(&m, "device.runtime_version"));
    size_fact(r, "memory", gm_json_get(&m, "device.total_mem_bytes"));
    size_fact(r, "largest allocation the driver allows", gm_json_get(&m, "device.max_alloc_bytes"));
    size_fact(r, "last-level cache", gm_json_get(&m, "device.llc_bytes"));
    size_fact(r, "run's memory cap", gm_json_get(&m, "device.mem_limit_bytes"));
    size_fact(r, "peak memory the run held", gm_json_get(&m, "device.peak_allocated_bytes"));
    fact(r, "compute units", "%s", gm_json_get(&m, "device.compute_units"));
    const char *clock = gm_json_get(&m, "device.clock_mhz"), *mem_clock = gm_json_get(&m, "device.mem_clock_mhz");
    if (clock && strcmp(clock, "0") != 0)
        fact(r, "clock", "%s MHz", clock);
    if (mem_clock && strcmp(mem_clock, "0") != 0)
        fact(r, "memory clock", "%s MHz", mem_clock);
    const char *bus = gm_json_get(&m, "device.mem_bus_bits");
    if (bus && strcmp(bus, "0") != 0)
        fact(r, "memory bus", "%s bits", bus);
    fact(r, "managed memory", "%s", gm_json_get(&m, "device.managed_memory"));
    fact(r, "host", "%s", gm_json_get(&m, "host.hostname"));
    fact(r, "host CPU", "%s", gm_json_get(&m, "host.cpu"));
    fact(r, "suite version", "%s", gm_json_get(&m, "suite_version"));
    fact(r, "profile", "%s", gm_json_get(&m, "profile"));
    fact(r, "started", "%s", gm_json_get(&m, "start_time"));
    fact(r, "ended", "%s", gm_json_get(&m, "end_time"));
    fact(r, "run status", "%s", gm_json_get(&m, "status"));
    gm_json_doc_free(&m);
}

int gm_report_meta_read(const char *run, gm_report_meta *out)
{
    char path[4200], err[400];
    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "%s/meta.json", run);
    gm_json_doc m;
    if (gm_json_load(path, &m, err, sizeof err) != 0)
        return -1;
    const char *v;
    if ((v = gm_json_get(&m, "device.total_mem_bytes")))
        out->total_mem = strtoull(v, NULL, 10);
    if ((v = gm_json_get(&m, "device.mem_limit_bytes")))
        out->mem_limit = strtoull(v, NULL, 10);
    if ((v = gm_json_get(&m, "device.llc_bytes")))
        out->llc = strtoull(v, NULL, 10);
    if ((v = gm_json_get(&m, "device.mem_clock_mhz")))
        out->mem_clock_mhz = atoi(v);
    if ((v = gm_json_get(&m, "device.mem_bus_bits")))
        out->mem_bus_bits = atoi(v);
    gm_json_doc_free(&m);
    return 0;
}

/* One headline row per stress check in the TAP stream at path: "ok" or
 * "FAILED". Returns the checks found (0: no such file). */
static int verdicts_from(const char *path, gm_report *r)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof line, f) && r->n_headline < GM_REPORT_MAX_ROWS) {
        int failed = strncmp(line, "not ok ", 7) == 0, used = 0;
        if (!failed && strncmp(line, "ok ", 3) != 0)
            continue;
        char name[64];
        if (sscanf(line + (failed ? 7 : 3), "%*d - %63[^ \n#]%n", name, &used) != 1)
            continue;
        char label[96];
        snprintf(label, sizeof label, "stress: %s", name);
        gm_report_headline(r, label, "%s", failed ? "FAILED" : "ok");
        found++;
    }
    fclose(f);
    return found;
}

void gm_report_stress(const char *run, gm_report *r)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/stress.tap", run);
    if (verdicts_from(path, r) == 0) {
        snprintf(path, sizeof path, "%s/stress/stress.tap", run);
        verdicts_from(path, r);
    }
}
