#include "stress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const gm_stress_check *const gm_stress_checks[] = {
    &gm_stress_memtest,      &gm_stress_churn,       &gm_stress_oom_recovery,
    &gm_stress_swap_integrity, &gm_stress_concurrency, &gm_stress_soak, NULL,
};

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

uint64_t gm_stress_free_memory(gm_device *dev, const char **source)
{
    uint64_t free_b = 0, total_b = 0;
    if (dev->backend->mem_info(dev, &free_b, &total_b) == GM_OK && !dev->mem_limit) {
        *source = "driver";
        return free_b;
    }
    if (dev->mem_limit) {
        *source = "cap";
        return dev->mem_limit > dev->live_bytes ? dev->mem_limit - dev->live_bytes : 0;
    }
    *source = "device total";
    return dev->info.total_mem > dev->live_bytes ? dev->info.total_mem - dev->live_bytes : 0;
}
