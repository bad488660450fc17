/* OOM probes in this process (the worker's side of bench/oom/probe.h). */
#include "bench/model/mem_plan.h"
#include "bench/model/precision_roles.h"
#include "bench/oom/probe.h"
#include "bench/workloads/runnable.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define MAX_CHUNKS 4096

static void from_status(gm_device *dev, gm_status st, gm_probe_result *r)
{
    r->outcome = st == GM_OK ? GM_PROBE_FITS : st == GM_ERR_OOM ? GM_PROBE_OOM : GM_PROBE_FAILED;
    r->failed_as = gm_row_status_of(st);
    r->device_lost = st == GM_ERR_DEVICE_LOST;
    snprintf(r->note, sizeof r->note, "%s", st == GM_OK ? "" : dev->err.msg);
}

void gm_probe_alloc_local(gm_device *dev, uint64_t bytes, gm_probe_result *r)
{
    memset(r, 0, sizeof *r);
    gm_buffer buf;
    gm_status st = gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)bytes, &buf);
    if (st == GM_OK)
        gm_device_free(dev, &buf);
    from_status(dev, st, r);
}

void gm_probe_total_local(gm_device *dev, gm_probe_result *r)
{
    memset(r, 0, sizeof *r);
    gm_buffer *chunks = calloc(MAX_CHUNKS, sizeof *chunks);
    if (!chunks) {
        r->outcome = GM_PROBE_FAILED;
        r->failed_as = GM_ROW_ERROR;
        snprintf(r->note, sizeof r->note, "out of host memory");
        return;
    }
    uint64_t chunk = dev->info.max_alloc ? dev->info.max_alloc : 1024 * MIB;
    chunk = chunk / MIB * MIB;
    if (chunk > 1024 * MIB)
        chunk = 1024 * MIB;
    int n = 0;
    gm_status st = GM_OK;
    while (chunk >= MIB && n < MAX_CHUNKS) {
        st = gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)chunk, &chunks[n]);
        if (st == GM_OK) {
            r->value += chunk;
            n++;
        } else if (st == GM_ERR_OOM) {
            chunk /= 2;
        } else {
            break;
        }
    }
    for (int i = 0; i < n; i++)
        gm_device_free(dev, &chunks[i]);
    free(chunks);
    from_status(dev, st == GM_ERR_OOM ? GM_OK : st, r);
    if (r->outcome == GM_PROBE_FITS)
        snprintf(r->note, sizeof r->note, "%d chunks", n);
}

gm_shape gm_probe_shape(const gm_bench_opts *o, const gm_probe_point *p)
{
    gm_shape s = o->shape;
    gm_shape_set_roles(&s, &o->shape, p->prec);
    s.train = p->train;
    s.serve = p->serve;
    s.tune = p->tune;
    s.probe = true;
    s.seq = p->seq;
    s.batch = p->batch;
    const gm_workload *r = gm_workloads[p->workload];
    if (r->adapt)
        r->adapt(&s, p->impl);
    gm_shape_complete(&s);
    return s;
}

/* Free device memory under the cap now (0 when the driver cannot say). */
static uint64_t free_now(gm_device *dev)
{
    uint64_t free_b = 0;
    gm_error saved = dev->err;
    gm_device_free_memory(dev, GM_FREE_UNKNOWN_TOTAL_LIVE, &free_b);
    dev->err = saved;
    return free_b;
}

void gm_probe_free_local(gm_device *dev, gm_probe_result *r)
{
    memset(r, 0, sizeof *r);
    r->outcome = GM_PROBE_FITS;
    r->value = free_now(dev);
}

void gm_probe_point_local(gm_device *dev, const gm_bench_opts *o, const gm_probe_point *p, gm_probe_result *r)
{
    memset(r, 0, sizeof *r);
    double t0 = gm_now();
    const gm_workload *run = gm_workloads[p->workload];
    gm_shape s = gm_probe_shape(o, p);
    gm_tensor t[GM_MAX_TENSORS];
    int nt = run->tensors(&s, t);
    if (nt < 0) {       /* beyond 64-bit sizes: certainly does not fit */
        r->outcome = GM_PROBE_OOM;
        snprintf(r->note, sizeof r->note, "the shape's size overflows 64 bits");
        return;
    }
    /* What the device holds is measured from here: the free memory now,
     * and the peak of live bytes from the live bytes now. */
    uint64_t free_before = free_now(dev), live_before = dev->live_bytes, held = 0;
    dev->peak_bytes = dev->live_bytes;
    /* A fresh environment each probe: a search must not depend on what
     * the caches kept from the probe before. */
    gm_pattern_env env;
    gm_pattern_env_init(&env, dev, o);
    gm_pattern pat;
    void *state = NULL;
    gm_status st = gm_pattern_begin(&pat, &env, p->pattern, t, nt);
    if (st == GM_OK)
        st = run->setup(dev, &pat, &s, p->impl, &state);
    double t_setup = gm_now();
    /* GPUMEM_KERNEL_PROFILE=1: each phase's device time by kernel, to
     * worker.log (kernel_profile.h). */
    gm_shim_kernel_profile_report(dev, stderr, "of the probe's setup");
    if (st == GM_OK) {
        /* Everything is allocated: what the driver's free memory lost is
         * what the point really holds (granularity, a pool's segments). */
        uint64_t free_after = free_now(dev);
        held = free_before > free_after ? free_before - free_after : 0;
    }
    double ms;
    if (st == GM_OK)
        st = gm_time_on_queue(dev, 0, run->enqueue, state, &ms);
    if (st == GM_OK)
        st = gm_device_sync(dev);
    double t_run = gm_now();
    /* The peak of what the workload held, before its check allocates
     * scratch of its own (the whole model's device checksums). */
    uint64_t peak_run = dev->peak_bytes;
    gm_shim_kernel_profile_report(dev, stderr, "of the probe's run");
    bool correct = false;
    char note[200] = "";
    if (st == GM_OK)
        st = run->verify(state, 0, &correct, note, sizeof note);
    double t_verify = gm_now();
    gm_shim_kernel_profile_report(dev, stderr, "of the probe's verification");
    if (state)
        run->teardown(state);
    r->value = pat.fragment_bytes;
    gm_pattern_end(&pat);
    gm_pattern_env_release(&env);
    double t_end = gm_now();
    if (peak_run - live_before > held)
        held = peak_run - live_before;
    r->stats[GM_POINT_HELD] = (double)held;
    r->stats[GM_POINT_FREE] = (double)free_before;
    r->stats[GM_POINT_SETUP_S] = t_setup - t0;
    r->stats[GM_POINT_RUN_S] = t_run - t_setup;
    r->stats[GM_POINT_VERIFY_S] = t_verify - t_run;
    r->stats[GM_POINT_RELEASE_S] = t_end - t_verify;
    r->n_stats = GM_POINT_STATS;
    from_status(dev, st, r);
    if (st == GM_OK && !correct) {
        r->outcome = GM_PROBE_FAILED;
        r->failed_as = GM_ROW_MISMATCH;
        snprintf(r->note, sizeof r->note, "wrong output at batch %" PRIu64 ": %s", p->batch, note);
    }
}

/* Notes travel last on the line, with newlines flattened. */
static void flatten(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

/* A point's mode on the wire: its gm_plan_mode. */
static gm_plan_mode mode_of(const gm_probe_point *p)
{
    return p->serve ? GM_PLAN_SERVE : p->tune ? (gm_plan_mode)p->tune : p->train ? GM_PLAN_TRAIN : GM_PLAN_INFERENCE;
}

int gm_probe_format_point(const gm_probe_point *p, char *buf, size_t len)
{
    int n = snprintf(buf, len, "point %d %s %d %d %" PRIu64 " %" PRIu64 " %d\n", p->workload, p->impl,
                     (int)p->pattern, (int)p->prec, p->batch, p->seq, (int)mode_of(p));
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int gm_probe_parse_point(const char *line, gm_probe_point *p)
{
    int pattern, prec, mode;
    memset(p, 0, sizeof *p);
    if (sscanf(line, "point %d %31s %d %d %" SCNu64 " %" SCNu64 " %d", &p->workload, p->impl, &pattern, &prec,
               &p->batch, &p->seq, &mode) != 7)
        return -1;
    if (p->workload < 0 || p->workload >= GM_RUNNABLE_WORKLOAD_COUNT || pattern < 0 || pattern >= GM_PATTERN_COUNT
        || prec < 0 || prec >= GM_PREC_COUNT || p->batch == 0 || p->seq == 0 || mode < 0
        || mode >= GM_PLAN_MODE_COUNT)
        return -1;
    p->train = mode == GM_PLAN_TRAIN;
    p->serve = mode == GM_PLAN_SERVE;
    p->tune = mode == GM_PLAN_LORA || mode == GM_PLAN_QLORA ? (unsigned)mode : 0;
    p->pattern = (gm_pattern_kind)pattern;
    p->prec = (gm_precision)prec;
    return 0;
}

int gm_probe_format_result(const gm_probe_result *r, char *buf, size_t len)
{
    char note[sizeof r->note];
    snprintf(note, sizeof note, "%s", r->note);
    flatten(note);
    int n = snprintf(buf, len, "result %d %d %d %" PRIu64 " %d", (int)r->outcome, (int)r->failed_as,
                     (int)r->device_lost, r->value, r->n_stats);
    for (int i = 0; i < r->n_stats && n > 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, " %.17g", r->stats[i]);
    if (n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " %s\n", note);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int gm_probe_parse_result(const char *line, gm_probe_result *r)
{
    int outcome, failed_as, lost, used = 0;
    memset(r, 0, sizeof *r);
    if (sscanf(line, "result %d %d %d %" SCNu64 " %d%n", &outcome, &failed_as, &lost, &r->value, &r->n_stats,
               &used) != 5
        || outcome < GM_PROBE_FITS || outcome > GM_PROBE_FAILED || failed_as < 0 || failed_as > GM_ROW_ERROR
        || r->n_stats < 0 || r->n_stats > GM_PROBE_STATS)
        return -1;
    for (int i = 0; i < r->n_stats; i++) {
        int more = 0;
        if (sscanf(line + used, " %lf%n", &r->stats[i], &more) != 1)
            return -1;
        used += more;
    }
    while (line[used] == ' ')
        used++;
    r->outcome = (gm_probe_outcome)outcome;
    r->failed_as = (gm_row_status)failed_as;
    r->device_lost = lost != 0;
    snprintf(r->note, sizeof r->note, "%s", line + used);
    r->note[strcspn(r->note, "\n")] = '\0';
    return 0;
}
