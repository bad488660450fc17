/* The kernel profile (kernel_profile.h). */
#include "backend/kernel_profile.h"
#include "backend/handle.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const gm_kernel *k;
    char name[GM_KPROF_NAME];
} named_kernel;

typedef struct {
    char name[GM_KPROF_NAME];
    gm_event *start, *end;
} pending_launch;

typedef struct {
    char name[GM_KPROF_NAME];
    long launches;
    double ms;
} kernel_total;

struct gm_kernel_profile {
    const gm_backend *inner;
    named_kernel *names;
    size_t n_names, cap_names;
    pending_launch pending[GM_KPROF_PENDING];
    size_t n_pending;
    gm_event *open_start;         /* recorded by before, awaiting after */
    kernel_total *totals;
    size_t n_totals, cap_totals;
};

bool gm_kprof_requested(void)
{
    const char *v = getenv("GPUMEM_KERNEL_PROFILE");
    return v && strcmp(v, "1") == 0;
}

gm_kernel_profile *gm_kprof_new(const gm_backend *inner)
{
    gm_kernel_profile *p = calloc(1, sizeof *p);
    if (p)
        p->inner = inner;
    return p;
}

void gm_kprof_free(struct gm_device *dev, gm_kernel_profile *p)
{
    if (!p)
        return;
    gm_kprof_settle(dev, p);
    if (p->open_start)
        p->inner->event_release(dev, p->open_start);
    free(p->names);
    free(p->totals);
    free(p);
}

void gm_kprof_name(gm_kernel_profile *p, const gm_kernel *k, const char *name)
{
    if (p->n_names == p->cap_names) {
        size_t cap = p->cap_names ? 2 * p->cap_names : 32;
        named_kernel *more = realloc(p->names, cap * sizeof *more);
        if (!more)
            return;             /* its launches show as "?" */
        p->names = more;
        p->cap_names = cap;
    }
    named_kernel *e = &p->names[p->n_names++];
    e->k = k;
    snprintf(e->name, sizeof e->name, "%s", name);
}

void gm_kprof_forget(gm_kernel_profile *p, const gm_kernel *k)
{
    for (size_t i = 0; i < p->n_names; i++)
        if (p->names[i].k == k) {
            p->names[i] = p->names[--p->n_names];
            return;
        }
}

static const char *name_of(const gm_kernel_profile *p, const gm_kernel *k)
{
    for (size_t i = 0; i < p->n_names; i++)
        if (p->names[i].k == k)
            return p->names[i].name;
    return "?";
}

bool gm_kprof_before(struct gm_device *dev, gm_kernel_profile *p, int queue)
{
    gm_error saved = dev->err;
    gm_event *ev = NULL;
    bool ok = p->n_pending < GM_KPROF_PENDING && p->inner->event_record(dev, queue, &ev) == GM_OK;
    dev->err = saved;
    p->open_start = ok ? ev : NULL;
    return ok;
}

void gm_kprof_after(struct gm_device *dev, gm_kernel_profile *p, int queue, const gm_kernel *k, bool launched)
{
    gm_kprof_after_named(dev, p, queue, name_of(p, k), launched);
}

void gm_kprof_after_named(struct gm_device *dev, gm_kernel_profile *p, int queue, const char *name, bool launched)
{
    gm_event *start = p->open_start, *end = NULL;
    p->open_start = NULL;
    if (!start)
        return;
    gm_error saved = dev->err;
    if (!launched || p->inner->event_record(dev, queue, &end) != GM_OK) {
        p->inner->event_release(dev, start);
        dev->err = saved;
        return;
    }
    dev->err = saved;
    pending_launch *l = &p->pending[p->n_pending++];
    snprintf(l->name, sizeof l->name, "%s", name);
    l->start = start;
    l->end = end;
}

bool gm_kprof_full(const gm_kernel_profile *p) { return p->n_pending == GM_KPROF_PENDING; }

static kernel_total *total_of(gm_kernel_profile *p, const char *name)
{
    for (size_t i = 0; i < p->n_totals; i++)
        if (strcmp(p->totals[i].name, name) == 0)
            return &p->totals[i];
    if (p->n_totals == p->cap_totals) {
        size_t cap = p->cap_totals ? 2 * p->cap_totals : 32;
        kernel_total *more = realloc(p->totals, cap * sizeof *more);
        if (!more)
            return NULL;
        p->totals = more;
        p->cap_totals = cap;
    }
    kernel_total *t = &p->totals[p->n_totals++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    return t;
}

void gm_kprof_settle(struct gm_device *dev, gm_kernel_profile *p)
{
    gm_error saved = dev->err;
    for (size_t i = 0; i < p->n_pending; i++) {
        pending_launch *l = &p->pending[i];
        double ms = 0;
        kernel_total *t = total_of(p, l->name);
        if (p->inner->event_elapsed_ms(dev, l->start, l->end, &ms) == GM_OK && t) {
            t->launches++;
            t->ms += ms;
        }
        p->inner->event_release(dev, l->start);
        p->inner->event_release(dev, l->end);
    }
    p->n_pending = 0;
    dev->err = saved;
}

static int by_time(const void *a, const void *b)
{
    double x = ((const kernel_total *)a)->ms, y = ((const kernel_total *)b)->ms;
    return (x < y) - (x > y);
}

void gm_kprof_report(struct gm_device *dev, gm_kernel_profile *p, FILE *f, const char *title)
{
    gm_kprof_settle(dev, p);
    if (p->n_totals == 0)
        return;
    qsort(p->totals, p->n_totals, sizeof *p->totals, by_time);
    double sum = 0;
    long launches = 0;
    for (size_t i = 0; i < p->n_totals; i++) {
        sum += p->totals[i].ms;
        launches += p->totals[i].launches;
    }
    fprintf(f, "kernel profile %s: %ld launches, %.3f ms of device time\n", title, launches, sum);
    for (size_t i = 0; i < p->n_totals; i++) {
        const kernel_total *t = &p->totals[i];
        fprintf(f, "  %-28s %8ld launches %12.3f ms %10.1f us a launch %5.1f%%\n", t->name, t->launches, t->ms,
                t->launches ? 1000.0 * t->ms / (double)t->launches : 0.0, sum > 0 ? 100.0 * t->ms / sum : 0.0);
    }
    p->n_totals = 0;
}
