#include "run/meta.h"

#include "lib/json.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef GM_VERSION
#define GM_VERSION "unknown"
#endif

const char *gm_suite_version(void) { return GM_VERSION; }

static void iso_time(time_t t, char *buf, size_t len)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void cpu_model(char *out, size_t len)
{
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon += strspn(colon + 1, " \t") + 1;
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(out, len, "%s", colon);
            }
            break;
        }
    }
    fclose(f);
}

static uint64_t host_mem_total(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/* How often this process called each op of the backend (the shim's count;
 * the oom suite's probe workers count their own). */
static json_t *backend_calls(const gm_device *d)
{
    json_t *o = json_object();
    for (int op = 0; op < GM_OP_COUNT; op++)
        json_object_set_new(o, gm_backend_op_name((gm_backend_op)op), json_integer(d->shim.calls[op]));
    return o;
}

static json_t *live(const gm_live_objects *l)
{
    json_t *o = json_object();
    gm_json_set_uint(o, "buffers", l->buffers);
    gm_json_set_uint(o, "bytes", l->bytes);
    gm_json_set_uint(o, "views", l->views);
    gm_json_set_uint(o, "mappings", l->maps);
    gm_json_set_uint(o, "programs", l->programs);
    gm_json_set_uint(o, "kernels", l->kernels);
    gm_json_set_uint(o, "events", l->events);
    return o;
}

static json_t *leak_check(const gm_leak_report *r)
{
    json_t *o = json_object();
    if (!r || !r->checked) {
        gm_json_set_string(o, "result", "not-checked");
        return o;
    }
    gm_json_set_string(o, "result", r->leaked ? "leak" : "ok");
    gm_json_set_string(o, "detail", r->detail);
    json_object_set_new(o, "live_at_start", live(&r->start.live));
    json_object_set_new(o, "live_at_end", live(&r->end.live));
    if (r->start.driver_known && r->end.driver_known) {
        gm_json_set_uint(o, "driver_free_at_start_bytes", r->start.driver_free);
        gm_json_set_uint(o, "driver_free_at_end_bytes", r->end.driver_free);
    } else {
        json_object_set_new(o, "driver_free_at_start_bytes", json_null());
        json_object_set_new(o, "driver_free_at_end_bytes", json_null());
    }
    json_object_set_new(o, "driver_compared", json_boolean(r->driver_compared));
    return o;
}

static json_t *device(const gm_device *d)
{
    const gm_device_info *i = &d->info;
    json_t *o = json_object();
    gm_json_set_string(o, "backend", d->backend->name);
    json_object_set_new(o, "index", json_integer(d->index));
    gm_json_set_string(o, "name", i->name);
    gm_json_set_string(o, "vendor", i->vendor);
    gm_json_set_string(o, "type", gm_device_type_name(i->type));
    gm_json_set_string(o, "platform", i->platform);
    gm_json_set_string(o, "uuid", i->uuid);
    gm_json_set_string(o, "driver_version", i->driver_version);
    gm_json_set_string(o, "runtime_version", i->runtime_version);
    gm_json_set_uint(o, "total_mem_bytes", i->total_mem);
    if (i->free_mem_known)
        gm_json_set_uint(o, "free_mem_bytes", i->free_mem);
    else
        json_object_set_new(o, "free_mem_bytes", json_null());
    gm_json_set_uint(o, "max_alloc_bytes", i->max_alloc);
    gm_json_set_uint(o, "llc_bytes", i->llc_bytes);
    json_object_set_new(o, "compute_units", json_integer(i->compute_units));
    json_object_set_new(o, "clock_mhz", json_integer(i->clock_mhz));
    json_object_set_new(o, "mem_clock_mhz", json_integer(i->mem_clock_mhz));
    json_object_set_new(o, "mem_bus_bits", json_integer(i->mem_bus_bits));
    json_object_set_new(o, "managed_memory", json_boolean(i->has_managed));
    json_object_set_new(o, "fp16_arithmetic", json_boolean(i->has_fp16_native));
    gm_json_set_uint(o, "mem_limit_bytes", d->mem_limit);
    gm_json_set_uint(o, "peak_allocated_bytes", d->peak_bytes);
    return o;
}

/* meta.json's document; its keys in this order. */
static json_t *meta_doc(const gm_meta *m)
{
    char buf[256];
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(GM_SCHEMA_VERSION));
    gm_json_set_string(o, "run_id", m->run->run_id);
    gm_json_set_string(o, "suite_version", gm_suite_version());
    gm_json_set_string(o, "profile", m->profile);
    json_t *argv = json_array();
    for (int i = 0; i < m->argc; i++)
        json_array_append_new(argv, gm_json_text(m->argv[i]));
    json_object_set_new(o, "command_line", argv);
    iso_time(m->start, buf, sizeof buf);
    gm_json_set_string(o, "start_time", buf);
    if (m->end) {
        iso_time(m->end, buf, sizeof buf);
        gm_json_set_string(o, "end_time", buf);
    } else {
        json_object_set_new(o, "end_time", json_null());
    }
    gm_json_set_string(o, "status", m->status);
    json_object_set_new(o, "rows", json_integer(m->run->rows_written));

    json_t *host = json_object();
    struct utsname u;
    if (uname(&u) == 0) {
        gm_json_set_string(host, "hostname", u.nodename);
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        gm_json_set_string(host, "os", buf);
    }
    cpu_model(buf, sizeof buf);
    gm_json_set_string(host, "cpu", buf);
    json_object_set_new(host, "cpu_count", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    gm_json_set_uint(host, "mem_total_bytes", host_mem_total());
    json_object_set_new(o, "host", host);

    if (m->device) {
        json_object_set_new(o, "device", device(m->device));
        json_object_set_new(o, "backend_calls", backend_calls(m->device));
    }
    json_object_set_new(o, "device_leak_check", leak_check(m->leak));
    return o;
}

/* A failed write shows in f's error indicator (gm_write_file_atomic). */
static void emit_meta(FILE *f, void *ctx)
{
    json_t *doc = meta_doc(ctx);
    gm_json_dump(doc, f);
    json_decref(doc);
}

int gm_meta_write(const gm_meta *m, char *err, size_t err_len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", m->run->dir);
    return gm_write_file_atomic(path, emit_meta, (void *)m, err, err_len);
}
