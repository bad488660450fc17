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
static void emit_backend_calls(gm_json *j, const gm_device *d)
{
    gm_json_object(j, "backend_calls");
    for (int op = 0; op < GM_OP_COUNT; op++)
        gm_json_int(j, gm_backend_op_name((gm_backend_op)op), d->shim.calls[op]);
    gm_json_end(j);
}

static void emit_live(gm_json *j, const char *key, const gm_live_objects *l)
{
    gm_json_object(j, key);
    gm_json_uint(j, "buffers", l->buffers);
    gm_json_uint(j, "bytes", l->bytes);
    gm_json_uint(j, "views", l->views);
    gm_json_uint(j, "mappings", l->maps);
    gm_json_uint(j, "programs", l->programs);
    gm_json_uint(j, "kernels", l->kernels);
    gm_json_uint(j, "events", l->events);
    gm_json_end(j);
}

static void emit_leak_check(gm_json *j, const gm_leak_report *r)
{
    gm_json_object(j, "device_leak_check");
    if (!r || !r->checked) {
        gm_json_string(j, "result", "not-checked");
        gm_json_end(j);
        return;
    }
    gm_json_string(j, "result", r->leaked ? "leak" : "ok");
    gm_json_string(j, "detail", r->detail);
    emit_live(j, "live_at_start", &r->start.live);
    emit_live(j, "live_at_end", &r->end.live);
    if (r->start.driver_known && r->end.driver_known) {
        gm_json_uint(j, "driver_free_at_start_bytes", r->start.driver_free);
        gm_json_uint(j, "driver_free_at_end_bytes", r->end.driver_free);
    } else {
        gm_json_null(j, "driver_free_at_start_bytes");
        gm_json_null(j, "driver_free_at_end_bytes");
    }
    gm_json_bool(j, "driver_compared", r->driver_compared);
    gm_json_end(j);
}

static void emit_device(gm_json *j, const gm_device *d)
{
    const gm_device_info *i = &d->info;
    gm_json_object(j, "device");
    gm_json_string(j, "backend", d->backend->name);
    gm_json_int(j, "index", d->index);
    gm_json_string(j, "name", i->name);
    gm_json_string(j, "vendor", i->vendor);
    gm_json_string(j, "type", gm_device_type_name(i->type));
    gm_json_string(j, "platform", i->platform);
    gm_json_string(j, "uuid", i->uuid);
    gm_json_string(j, "driver_version", i->driver_version);
    gm_json_string(j, "runtime_version", i->runtime_version);
    gm_json_uint(j, "total_mem_bytes", i->total_mem);
    if (i->free_mem_known)
        gm_json_uint(j, "free_mem_bytes", i->free_mem);
    else
        gm_json_null(j, "free_mem_bytes");
    gm_json_uint(j, "max_alloc_bytes", i->max_alloc);
    gm_json_uint(j, "llc_bytes", i->llc_bytes);
    gm_json_int(j, "compute_units", i->compute_units);
    gm_json_int(j, "clock_mhz", i->clock_mhz);
    gm_json_int(j, "mem_clock_mhz", i->mem_clock_mhz);
    gm_json_int(j, "mem_bus_bits", i->mem_bus_bits);
    gm_json_bool(j, "managed_memory", i->has_managed);
    gm_json_uint(j, "mem_limit_bytes", d->mem_limit);
    gm_json_uint(j, "peak_allocated_bytes", d->peak_bytes);
    gm_json_end(j);
}

static void emit_meta(FILE *f, void *ctx)
{
    const gm_meta *m = ctx;
    gm_json j;
    char buf[256];
    gm_json_init(&j, f);
    gm_json_object(&j, NULL);
    gm_json_int(&j, "schema_version", GM_SCHEMA_VERSION);
    gm_json_string(&j, "run_id", m->run->run_id);
    gm_json_string(&j, "suite_version", gm_suite_version());
    gm_json_string(&j, "profile", m->profile);
    gm_json_array(&j, "command_line");
    for (int i = 0; i < m->argc; i++)
        gm_json_string(&j, NULL, m->argv[i]);
    gm_json_end(&j);
    iso_time(m->start, buf, sizeof buf);
    gm_json_string(&j, "start_time", buf);
    if (m->end) {
        iso_time(m->end, buf, sizeof buf);
        gm_json_string(&j, "end_time", buf);
    } else {
        gm_json_null(&j, "end_time");
    }
    gm_json_string(&j, "status", m->status);
    gm_json_int(&j, "rows", m->run->rows_written);

    gm_json_object(&j, "host");
    struct utsname u;
    if (uname(&u) == 0) {
        gm_json_string(&j, "hostname", u.nodename);
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        gm_json_string(&j, "os", buf);
    }
    cpu_model(buf, sizeof buf);
    gm_json_string(&j, "cpu", buf);
    gm_json_int(&j, "cpu_count", sysconf(_SC_NPROCESSORS_ONLN));
    gm_json_uint(&j, "mem_total_bytes", host_mem_total());
    gm_json_end(&j);

    if (m->device) {
        emit_device(&j, m->device);
        emit_backend_calls(&j, m->device);
    }
    emit_leak_check(&j, m->leak);
    gm_json_end(&j);
}

int gm_meta_write(const gm_meta *m, char *err, size_t err_len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", m->run->dir);
    return gm_write_file_atomic(path, emit_meta, (void *)m, err, err_len);
}
