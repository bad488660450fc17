/*
 * One workload point on the fixture's device (opencl_fixture.h), for the
 * unit tests that run a workload's kernels: workload_point_run lays out
 * the point's tensors one allocation each, sets it up with `impl`,
 * enqueues it and waits; workload_point_end tears it down and checks that
 * the device holds nothing more. Include after cmocka.h and
 * opencl_fixture.h.
 */
#ifndef GM_WORKLOAD_POINT_H
#define GM_WORKLOAD_POINT_H

#include "bench/options.h"
#include "bench/pattern/pattern.h"
#include "bench/model/precision_roles.h"
#include "bench/workloads/runnable.h"

typedef struct {
    const gm_workload *w;
    gm_bench_opts o;
    gm_pattern_env env;
    gm_pattern pat;
    void *state;
} workload_point;

/* s must be complete (gm_shape_complete). */
static void workload_point_run(workload_point *p, const gm_workload *w, const gm_shape *s, const char *impl)
{
    p->w = w;
    p->state = NULL;
    gm_tensor t[GM_MAX_TENSORS];
    int nt = w->tensors(s, t);
    assert_true(nt > 0);
    gm_opts_init(&p->o);
    gm_pattern_env_init(&p->env, &dev, &p->o);
    assert_int_equal(gm_pattern_begin(&p->pat, &p->env, GM_PATTERN_PER_TENSOR, t, nt), GM_OK);
    if (w->setup(&dev, &p->pat, s, impl, &p->state) != GM_OK)
        fail_msg("%s %s %s: set-up: %s", w->name, impl, gm_roles_label(s), dev.err.msg);
    assert_int_equal(w->enqueue(p->state), GM_OK);
    assert_int_equal(dev.backend->synchronize(&dev, 0), GM_OK);
}

static void workload_point_end(workload_point *p)
{
    p->w->teardown(p->state);
    gm_pattern_end(&p->pat);
    gm_pattern_env_release(&p->env);
    gm_opts_release(&p->o);
    assert_int_equal(dev.live_bytes, 0);
}

#endif
