#include "stress/stress.h"
#include "device/leak_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gm_stress_diag(gm_stress_result *r, const char *key, const char *fmt, ...)
{
    size_t used = strlen(r->diag);
    if (used + 2 >= sizeof r->diag)
        return;
    int n = snprintf(r->diag + used, sizeof r->diag - used, "%s: ", key);
    if (n < 0 || used + (size_t)n >= sizeof r->diag)
        return;
    used += (size_t)n;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->diag + used, sizeof r->diag - used, fmt, ap);
    va_end(ap);
    used = strlen(r->diag);
    if (used + 1 < sizeof r->diag)
        strcat(r->diag, "\n");
}

void gm_stress_fail(gm_stress_result *r, const char *fmt, ...)
{
    char why[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    /* YAML: one line, quoted. */
    for (char *c = why; *c; c++)
        if (*c == '"' || *c == '\n')
            *c = '\'';
    /* The first reason is the one reported. */
    if (strncmp(r->diag, "failure: ", 9) != 0 && !strstr(r->diag, "\nfailure: "))
        gm_stress_diag(r, "failure", "\"%s\"", why);
    r->ok = false;
}

int gm_stress_row(gm_stress *s, const char *check, const char *metric, const char *unit, double value,
                  uint64_t bytes)
{
    gm_row row = {0};
    row.suite = "stress";
    row.workload = check;
    row.bytes = bytes;
    gm_row_single(&row, metric, unit, value);
    if (gm_run_write(s->run, &row, NULL, 0, s->error, sizeof s->error) != 0) {
        s->output_failed = true;
        return -1;
    }
    return 0;
}

int gm_stress_fault_parse(const char *value, gm_stress_fault *fault)
{
    static const char *const names[] = {"flip-bits", "drop-free", "corrupt-swap", "throttle"};
    static const gm_stress_fault faults[] = {GM_STRESS_FAULT_FLIP_BITS, GM_STRESS_FAULT_DROP_FREE,
                                             GM_STRESS_FAULT_CORRUPT_SWAP, GM_STRESS_FAULT_THROTTLE};
    *fault = GM_STRESS_FAULT_NONE;
    if (!value || !*value)
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(value, names[i]) == 0) {
            *fault = faults[i];
            return 0;
        }
    return -1;
}

uint64_t gm_stress_free_memory(gm_device *dev, const char **source)
{
    uint64_t drv = 0;
    bool known = gm_driver_free_memory(dev, &drv);
    gm_free_source src;
    uint64_t free_b = gm_free_under_cap(dev, known, drv, GM_FREE_UNKNOWN_TOTAL_LIVE, &src);
    *source = src == GM_FREE_FROM_DRIVER ? "driver" : src == GM_FREE_FROM_CAP ? "cap" : "device total";
    return free_b;
}

void gm_stress_mem_now(gm_device *dev, gm_stress_mem *m)
{
    m->live = dev->live_bytes;
    m->driver_known = gm_driver_free_memory(dev, &m->driver_free);
}

uint64_t gm_stress_mem_missing(const gm_stress_mem *before, const gm_stress_mem *now)
{
    if (now->live != before->live)
        return now->live > before->live ? now->live - before->live : before->live - now->live;
    if (before->driver_known && now->driver_known && now->driver_free + GM_STRESS_DRIVER_SLACK < before->driver_free)
        return before->driver_free - now->driver_free;
    return 0;
}

void gm_stress_mem_diag(gm_stress_result *r, const gm_stress_mem *before, const gm_stress_mem *now)
{
    bool driver = before->driver_known && now->driver_known;
    gm_stress_diag(r, "leak_check", "%s", driver ? "accounting and driver (driver within 2MiB)"
                                                 : "accounting (no driver figure for this device's free memory)");
    gm_stress_diag(r, "live_bytes_before", "%llu", (unsigned long long)before->live);
    gm_stress_diag(r, "live_bytes_after", "%llu", (unsigned long long)now->live);
    if (driver) {
        gm_stress_diag(r, "driver_free_before", "%llu", (unsigned long long)before->driver_free);
        gm_stress_diag(r, "driver_free_after", "%llu", (unsigned long long)now->driver_free);
    }
}
