/* The backend shim (shim.h): forwarding, accounting, injected faults. */
#include "backend/shim.h"
#include "backend/handle.h"
#include "backend/kernel_profile.h"
#include "backend/watchdog.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SHIM(dev) (&(dev)->shim)
#define INNER(dev) ((dev)->shim.inner)

/* Lets a held queue go on (the rule of shim.h): before any op but launch
 * and event_record. */
static void unhold(gm_device *dev)
{
    gm_backend_shim *s = SHIM(dev);
    gm_hold *h = s->hold;
    if (!h)
        return;
    s->hold = NULL;
    gm_watchdog_call_begin("queue_release");
    s->inner->queue_release(dev, h);
    gm_watchdog_call_end();
}

/* Marks the start of a call of `op` for the watchdog (watchdog.h); a
 * `hang` fault stops answering there, as a hung device does. */
static long begin(gm_device *dev, gm_backend_op op)
{
    gm_backend_shim *s = SHIM(dev);
    if (op != GM_OP_LAUNCH && op != GM_OP_EVENT_RECORD)
        unhold(dev);
    gm_watchdog_call_begin(gm_backend_op_name(op));
    long n = ++s->calls[op];
    if (s->spec.mode == GM_INJECT_HANG && s->spec.op == op && s->spec.at == n)
        for (;;)
            pause();
    return n;
}

/* Marks the end of the call begun last; returns st. */
static gm_status settle(gm_status st)
{
    gm_watchdog_call_end();
    return st;
}

/* Begins a call of `op` (begin) and counts it; returns the failure it must
 * report (recorded in dev->err), or GM_OK to go on. The caller settles. */
static gm_status strike(gm_device *dev, gm_backend_op op)
{
    gm_backend_shim *s = SHIM(dev);
    long n = begin(dev, op);
    if (s->lost)
        return gm_device_fail(dev, GM_ERR_DEVICE_LOST, 0, "device lost (injected fault at %s); %s refused",
                              s->lost_at, gm_backend_op_name(op));
    if (s->spec.op != op || s->spec.at != n || (s->spec.mode != GM_INJECT_LOST && s->spec.mode != GM_INJECT_OOM))
        return GM_OK;
    if (s->spec.mode == GM_INJECT_OOM)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of memory (injected fault at %s call %ld)", gm_backend_op_name(op), n);
    s->lost = true;
    snprintf(s->lost_at, sizeof s->lost_at, "%s call %ld", gm_backend_op_name(op), n);
    return gm_device_fail(dev, GM_ERR_DEVICE_LOST, 0, "device lost (injected fault at %s)", s->lost_at);
}

static gm_status shim_mem_info(gm_device *dev, uint64_t *free_b, uint64_t *total_b)
{
    gm_status st = strike(dev, GM_OP_MEM_INFO);
    return settle(st != GM_OK ? st : INNER(dev)->mem_info(dev, free_b, total_b));
}

static gm_status shim_alloc(gm_device *dev, gm_mem_kind kind, size_t bytes, gm_buffer *out)
{
    gm_status st = strike(dev, GM_OP_ALLOC);
    if (st == GM_OK)
        st = INNER(dev)->alloc(dev, kind, bytes, out);
    if (st == GM_OK) {
        SHIM(dev)->live.buffers++;
        SHIM(dev)->live.bytes += bytes;
        SHIM(dev)->async_allocs += kind == GM_MEM_ASYNC;
        SHIM(dev)->managed_bytes += kind == GM_MEM_MANAGED ? bytes : 0;
    }
    return settle(st);
}

static void shim_free(gm_device *dev, gm_buffer *buf)
{
    gm_backend_shim *s = SHIM(dev);
    long n = begin(dev, GM_OP_FREE);
    if (s->spec.mode == GM_INJECT_LEAK && s->spec.at == n && !buf->is_view) {
        s->held = *buf;          /* still live: handed back at close */
        settle(GM_OK);
        return;
    }
    if (buf->is_view) {
        s->live.views--;
    } else {
        s->live.buffers--;
        s->live.bytes -= buf->bytes;
    }
    INNER(dev)->free(dev, buf);
    settle(GM_OK);
}

static gm_status shim_view(gm_device *dev, const gm_buffer *parent, size_t offset, size_t bytes, gm_buffer *out)
{
    gm_status st = strike(dev, GM_OP_VIEW);
    if (st == GM_OK)
        st = INNER(dev)->view(dev, parent, offset, bytes, out);
    SHIM(dev)->live.views += st == GM_OK;
    return settle(st);
}

static gm_status shim_fill(gm_device *dev, int queue, gm_buffer *buf, size_t off, size_t bytes,
                           const void *pattern, size_t pattern_size)
{
    gm_status st = strike(dev, GM_OP_FILL);
    return settle(st != GM_OK ? st : INNER(dev)->fill(dev, queue, buf, off, bytes, pattern, pattern_size));
}

static gm_status shim_copy(gm_device *dev, int queue, gm_buffer *dst, size_t dst_off, const gm_buffer *src,
                           size_t src_off, size_t bytes, bool async)
{
    gm_status st = strike(dev, GM_OP_COPY);
    return settle(st != GM_OK ? st : INNER(dev)->copy(dev, queue, dst, dst_off, src, src_off, bytes, async));
}

static gm_status shim_map(gm_device *dev, int queue, gm_buffer *buf, size_t off, size_t bytes, bool write,
                          void **ptr)
{
    gm_status st = strike(dev, GM_OP_MAP);
    if (st == GM_OK)
        st = INNER(dev)->map(dev, queue, buf, off, bytes, write, ptr);
    SHIM(dev)->live.maps += st == GM_OK;
    return settle(st);
}

/* A release: the mapping is handed back even when the call reports a
 * failure (a lost device's host side must not leak). */
static gm_status shim_unmap(gm_device *dev, int queue, gm_buffer *buf, void *ptr)
{
    gm_status injected = strike(dev, GM_OP_UNMAP);
    gm_error saved = dev->err;
    gm_status st = INNER(dev)->unmap(dev, queue, buf, ptr);
    SHIM(dev)->live.maps--;
    if (injected != GM_OK) {
        dev->err = saved;
        return settle(injected);
    }
    return settle(st);
}

static gm_status shim_prefetch(gm_device *dev, int queue, gm_buffer *buf, bool to_device)
{
    gm_status st = strike(dev, GM_OP_PREFETCH);
    return settle(st != GM_OK ? st : INNER(dev)->prefetch(dev, queue, buf, to_device));
}

static gm_status shim_program_build(gm_device *dev, const char *program, const char *variant,
                                    const char *extra_defines, gm_program **out)
{
    gm_status st = strike(dev, GM_OP_PROGRAM_BUILD);
    if (st == GM_OK)
        st = INNER(dev)->program_build(dev, program, variant, extra_defines, out);
    SHIM(dev)->live.programs += st == GM_OK;
    return settle(st);
}

static void shim_program_release(gm_device *dev, gm_program *prog)
{
    if (!prog)
        return;
    unhold(dev);
    SHIM(dev)->live.programs--;
    gm_watchdog_call_begin("program_release");
    INNER(dev)->program_release(dev, prog);
    gm_watchdog_call_end();
}

static gm_status shim_kernel_get(gm_device *dev, gm_program *prog, const char *name, gm_kernel **out)
{
    gm_status st = strike(dev, GM_OP_KERNEL_GET);
    if (st == GM_OK)
        st = INNER(dev)->kernel_get(dev, prog, name, out);
    SHIM(dev)->live.kernels += st == GM_OK;
    if (st == GM_OK && SHIM(dev)->kprof)
        gm_kprof_name(SHIM(dev)->kprof, *out, name);
    return settle(st);
}

static void shim_kernel_release(gm_device *dev, gm_kernel *k)
{
    if (!k)
        return;
    unhold(dev);
    SHIM(dev)->live.kernels--;
    if (SHIM(dev)->kprof)
        gm_kprof_forget(SHIM(dev)->kprof, k);
    gm_watchdog_call_begin("kernel_release");
    INNER(dev)->kernel_release(dev, k);
    gm_watchdog_call_end();
}

/* Reads the kernel profile's pending launches: a wait for the queue, so
 * a held one is released first. */
static void kprof_settle(gm_device *dev)
{
    unhold(dev);
    gm_watchdog_call_begin("event_elapsed_ms");
    gm_kprof_settle(dev, SHIM(dev)->kprof);
    gm_watchdog_call_end();
}

static gm_status shim_launch(gm_device *dev, int queue, gm_kernel *k, size_t global, size_t local,
                             const gm_arg *args, int nargs)
{
    gm_kernel_profile *prof = SHIM(dev)->kprof;
    if (prof && gm_kprof_full(prof))
        kprof_settle(dev);
    gm_status st = strike(dev, GM_OP_LAUNCH);
    if (st != GM_OK)
        return settle(st);
    bool timed = prof && gm_kprof_before(dev, prof, queue);
    st = INNER(dev)->launch(dev, queue, k, global, local, args, nargs);
    if (timed)
        gm_kprof_after(dev, prof, queue, k, st == GM_OK);
    return settle(st);
}

static gm_status shim_event_record(gm_device *dev, int queue, gm_event **out)
{
    gm_status st = strike(dev, GM_OP_EVENT_RECORD);
    if (st == GM_OK)
        st = INNER(dev)->event_record(dev, queue, out);
    SHIM(dev)->live.events += st == GM_OK;
    return settle(st);
}

static gm_status shim_event_elapsed_ms(gm_device *dev, gm_event *start, gm_event *end, double *ms)
{
    gm_status st = strike(dev, GM_OP_EVENT_ELAPSED_MS);
    return settle(st != GM_OK ? st : INNER(dev)->event_elapsed_ms(dev, start, end, ms));
}

static void shim_event_release(gm_device *dev, gm_event *ev)
{
    if (!ev)
        return;
    unhold(dev);
    SHIM(dev)->live.events--;
    gm_watchdog_call_begin("event_release");
    INNER(dev)->event_release(dev, ev);
    gm_watchdog_call_end();
}

static gm_status shim_synchronize(gm_device *dev, int queue)
{
    gm_status st = strike(dev, GM_OP_SYNCHRONIZE);
    return settle(st != GM_OK ? st : INNER(dev)->synchronize(dev, queue));
}

static gm_status shim_trim(gm_device *dev)
{
    gm_status st = strike(dev, GM_OP_TRIM);
    return settle(st != GM_OK ? st : INNER(dev)->trim(dev));
}

static gm_status shim_blas_gemm(gm_device *dev, int queue, const gm_gemm *g, const gm_buffer *a, const gm_buffer *b,
                                gm_buffer *c)
{
    gm_kernel_profile *prof = SHIM(dev)->kprof;
    if (prof && gm_kprof_full(prof))
        kprof_settle(dev);
    gm_status st = strike(dev, GM_OP_BLAS_GEMM);
    bool timed = st == GM_OK && prof && gm_kprof_before(dev, prof, queue);
    if (st == GM_OK)
        st = INNER(dev)->blas_gemm(dev, queue, g, a, b, c);
    if (timed) {
        const char *impl = INNER(dev)->blas_impl ? INNER(dev)->blas_impl(g->prec) : NULL;
        char name[GM_KPROF_NAME];
        snprintf(name, sizeof name, "blas %s %s%s", impl ? impl : "?", gm_precision_name(g->prec),
                 g->batch > 1 ? " batched" : "");
        gm_kprof_after_named(dev, prof, queue, name, st == GM_OK);
    }
    SHIM(dev)->blas_calls += st == GM_OK;
    return settle(st);
}

static gm_status shim_queue_hold(gm_device *dev, int queue, gm_hold **out)
{
    gm_status st = strike(dev, GM_OP_QUEUE_HOLD);   /* a hold already there is released first */
    if (st == GM_OK)
        st = INNER(dev)->queue_hold ? INNER(dev)->queue_hold(dev, queue, out)
                                    : gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s cannot hold a queue",
                                                     INNER(dev)->name);
    if (st == GM_OK)
        SHIM(dev)->hold = *out;
    return settle(st);
}

/* h may have been released already, by the rule: then nothing is left. */
static void shim_queue_release(gm_device *dev, gm_hold *h)
{
    if (h && SHIM(dev)->hold == h)
        unhold(dev);
}

gm_status gm_shim_open(gm_device *dev, const gm_backend *inner, int index, const gm_backend_shim *before)
{
    gm_backend_shim *s = SHIM(dev);
    memset(s, 0, sizeof *s);
    if (before) {
        memcpy(s->calls, before->calls, sizeof s->calls);
        s->lost = before->lost;
        memcpy(s->lost_at, before->lost_at, sizeof s->lost_at);
        s->live = before->live;
        s->async_allocs = before->async_allocs;
        s->blas_calls = before->blas_calls;
        s->managed_bytes = before->managed_bytes;
    }
    s->inner = inner;
    s->spec = gm_inject_from_env();
    s->table = *inner;             /* name, probe, describe as they are */
    s->table.mem_info = shim_mem_info;
    s->table.alloc = shim_alloc;
    s->table.free = shim_free;
    s->table.view = shim_view;
    s->table.fill = shim_fill;
    s->table.copy = shim_copy;
    s->table.map = shim_map;
    s->table.unmap = shim_unmap;
    s->table.prefetch = shim_prefetch;
    s->table.program_build = shim_program_build;
    s->table.program_release = shim_program_release;
    s->table.kernel_get = shim_kernel_get;
    s->table.kernel_release = shim_kernel_release;
    s->table.launch = shim_launch;
    s->table.event_record = shim_event_record;
    s->table.event_elapsed_ms = shim_event_elapsed_ms;
    s->table.event_release = shim_event_release;
    s->table.queue_hold = shim_queue_hold;
    s->table.queue_release = shim_queue_release;
    s->table.synchronize = shim_synchronize;
    s->table.trim = shim_trim;
    if (inner->blas_gemm)
        s->table.blas_gemm = shim_blas_gemm;   /* blas_impl and blas_plan (host only) as they are */
    dev->backend = &s->table;
    gm_status st = strike(dev, GM_OP_OPEN);
    st = settle(st != GM_OK ? st : inner->open(dev, index));
    if (st == GM_OK && gm_kprof_requested())
        s->kprof = gm_kprof_new(inner);      /* freed by gm_shim_close */
    return st;
}

void gm_shim_kernel_profile_report(gm_device *dev, FILE *f, const char *title)
{
    if (!SHIM(dev)->kprof)
        return;
    kprof_settle(dev);
    gm_kprof_report(dev, SHIM(dev)->kprof, f, title);
}

void gm_shim_close(gm_device *dev)
{
    gm_backend_shim *s = SHIM(dev);
    unhold(dev);
    if (s->kprof) {
        gm_shim_kernel_profile_report(dev, stderr, "(until the device closed)");
        gm_kprof_free(dev, s->kprof);
        s->kprof = NULL;
    }
    if (s->held.handle || s->held.host) {
        s->live.buffers--;
        s->live.bytes -= s->held.bytes;
        gm_watchdog_call_begin("free");
        s->inner->free(dev, &s->held);
        gm_watchdog_call_end();
        memset(&s->held, 0, sizeof s->held);
    }
    gm_watchdog_call_begin("close");
    s->inner->close(dev);
    gm_watchdog_call_end();
}
