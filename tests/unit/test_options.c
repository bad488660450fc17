/* bench options and profiles (src/options.c), variant defines
 * (src/kernel_sources.c), the JSON writer (src/lib/json.c) and the memory
 * model's arithmetic (bench/model.c) and its refusal of overflowing
 * options (bench/workloads.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench/bench.h"
#include "lib/json.h"
#include "backend/kernel_sources.h"
#include "bench/options.h"
#include "bench/workload.h"

static char err[600];

static void set_bad(gm_bench_opts *o, const char *name, const char *value, const char *why)
{
    assert_int_equal(gm_opts_set(o, name, value, err, sizeof err), -1);
    assert_non_null(strstr(err, name));
    assert_non_null(strstr(err, why));
}

static void test_options(void **state)
{
    (void)state;
    gm_bench_opts o;
    gm_opts_init(&o);
    assert_string_equal(o.backend, "auto");
    assert_int_equal(o.device, -1);
    assert_int_equal(o.precisions, 0xf);
    assert_int_equal(gm_opts_set(&o, "backend", "opencl", err, sizeof err), 0);
    assert_int_equal(gm_opts_set(&o, "precision", "fp16,int8", err, sizeof err), 0);
    assert_int_equal(o.precisions, (1u << 1) | (1u << 3));
    assert_int_equal(gm_opts_set(&o, "sizes", "4MiB:16MiB:x2", err, sizeof err), 0);
    assert_int_equal(o.n_sizes, 3);
    assert_int_equal(gm_opts_set(&o, "mem-limit", "2GiB", err, sizeof err), 0);
    assert_true(o.mem_limit_set && o.mem_limit == (2ull << 30));
    assert_int_equal(gm_opts_set(&o, "access", "both", err, sizeof err), 0);
    assert_int_equal(o.access, GM_ACCESS_BOTH);
    assert_int_equal(gm_opts_set(&o, "kernels", "triad,dot", err, sizeof err), 0);
    assert_int_equal(o.kernels, (1u << 5) | (1u << 6));
    set_bad(&o, "backend", "rocm", "rocm");
    set_bad(&o, "reps", "0", "'0'");
    set_bad(&o, "reps", "abc", "'abc'");
    set_bad(&o, "precision", "fp64", "fp64");
    set_bad(&o, "sizes", "1KiB", "at least 4KiB");
    set_bad(&o, "access", "grid,chunked", "one of");
    set_bad(&o, "mem-limit", "10", "at least 1MiB");
    set_bad(&o, "device", "64", "'64'");
    assert_int_equal(gm_opts_set(&o, "nosuch", "1", err, sizeof err), 1);
    assert_int_equal(gm_opts_takes_value("quiet"), 0);
    assert_int_equal(gm_opts_takes_value("reps"), 1);
    assert_int_equal(gm_opts_takes_value("nosuch"), -1);
    gm_opts_release(&o);
}

static char dir[64];

static const char *write_profile(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s.ini", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void profile_bad(const char *text, const char *want)
{
    gm_bench_opts o;
    gm_opts_init(&o);
    const char *path = write_profile("bad", text);
    assert_int_equal(gm_profile_load(&o, path, NULL, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
    gm_opts_release(&o);
}

static void test_profiles(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gpumem-unit.XXXXXX");
    assert_non_null(mkdtemp(dir));
    gm_bench_opts o;
    gm_opts_init(&o);
    const char *good = write_profile("good", "; comment\n[bench]\nreps = 7\nprecision = bf16\nsizes = 8MiB\n");
    assert_int_equal(gm_profile_load(&o, good, NULL, err, sizeof err), 0);
    assert_int_equal(o.reps, 7);
    assert_int_equal(o.precisions, 1u << 2);
    assert_int_equal(o.n_sizes, 1);
    gm_opts_release(&o);
    profile_bad("[bench]\nreps = 2\nfrobnicate = 1\n", "bad.ini:3: unknown option '--frobnicate'");
    profile_bad("[bench]\nreps = 2\n\nreps = x\n", "bad.ini:4: --reps 'x'");
    profile_bad("[other]\nreps = 2\n", "bad.ini:2: unknown section [other]");
    profile_bad("[oom]\nsuite = swap\n", "bad.ini:2: 'suite' cannot be set in a profile section of a suite");
    profile_bad("[bench]\nreps = 2\n[swap]\nreps = none\n", "bad.ini:4: --reps 'none'");
    /* A suite's section applies to that suite only, over [bench]. */
    const char *sections = write_profile("sections", "[oom]\nreps = 3\n[bench]\nreps = 5\nwarmup = 2\n");
    gm_opts_init(&o);
    assert_int_equal(gm_profile_load(&o, sections, "oom", err, sizeof err), 0);
    assert_int_equal(o.reps, 3);
    assert_int_equal(o.warmup, 2);
    gm_opts_release(&o);
    gm_opts_init(&o);
    assert_int_equal(gm_profile_load(&o, sections, "swap", err, sizeof err), 0);
    assert_int_equal(o.reps, 5);
    gm_opts_release(&o);
    profile_bad("[bench]\nthis line is not an entry\n", "bad.ini:2: malformed line");
    profile_bad("[bench]\nout = /tmp/x\n", "bad.ini:2: 'out' cannot be set in a profile");
    gm_opts_init(&o);
    assert_int_equal(gm_profile_load(&o, "/nonexistent/dir/p.ini", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "no profile"));
    /* The shipped profiles parse. */
    assert_int_equal(gm_profile_load(&o, "share/profiles/quick.ini", "oom", err, sizeof err), 0);
    assert_int_equal(gm_profile_load(&o, "share/profiles/full.ini", "oom", err, sizeof err), 0);
    gm_opts_release(&o);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_variant_defines(void **state)
{
    (void)state;
    char out[128];
    assert_int_equal(gm_variant_defines("fp16-chunked", out, sizeof out), 0);
    assert_string_equal(out, "-DGM_FP16=1 -DGM_CHUNKED=1");
    assert_int_equal(gm_variant_defines("int8", out, sizeof out), 0);
    assert_string_equal(out, "-DGM_INT8=1");
    assert_int_equal(gm_variant_defines("fp16--x", out, sizeof out), -1);
    assert_int_equal(gm_variant_defines("a b", out, sizeof out), -1);
    assert_int_equal(gm_variant_defines("-x", out, sizeof out), -1);
    assert_int_equal(gm_variant_defines("fp16-chunked", out, 12), -1);
}

static void test_json(void **state)
{
    (void)state;
    char buf[1024];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    json_t *o = json_object(), *list = json_array();
    assert_int_equal(gm_json_set_string(o, "s", "a\"b\\c\nd\x01"), 0);
    json_array_append_new(list, json_integer(-3));
    json_array_append_new(list, gm_json_real(1.0 / 0.0));
    json_object_set_new(o, "list", list);
    json_object_set_new(o, "empty", json_object());
    json_object_set_new(o, "t", json_true());
    assert_int_equal(gm_json_set_string(o, "n", NULL), 0);
    assert_int_equal(gm_json_dump(o, f), 0);
    json_decref(o);
    fclose(f);
    assert_string_equal(buf, "{\n"
                             "  \"s\": \"a\\\"b\\\\c\\nd\\u0001\",\n"
                             "  \"list\": [\n    -3,\n    null\n  ],\n"
                             "  \"empty\": {},\n"
                             "  \"t\": true,\n"
                             "  \"n\": null\n"
                             "}\n");
}

static void test_model(void **state)
{
    (void)state;
    gm_shape s = {.prec = GM_FP16, .batch = 2, .seq = 128, .hidden = 256, .heads = 4};
    gm_shape_complete(&s);
    assert_int_equal(s.head_dim, 64);
    assert_int_equal(s.out, 256);
    gm_tensor t[GM_MAX_TENSORS];
    int n = gm_workload_find("linear")->tensors(&s, t);
    assert_int_equal(n, 3);
    assert_int_equal(gm_tensors_total(t, n), 2 * (256 * 256 + 2 * 256 * 128 * 2));
    s.naive = true;
    n = gm_workload_find("attention")->tensors(&s, t);
    /* q, k, v, o in fp16 and a 128 x 128 fp32 score matrix per (batch, head). */
    assert_int_equal(gm_tensors_total(t, n), 4 * 2 * 4 * 128 * 64 * 2 + 2 * 4 * 128 * 128 * 4);
    s.naive = false;
    assert_int_equal(gm_tensors_total(t, gm_workload_find("attention")->tensors(&s, t)),
                     4 * 2 * 4 * 128 * 64 * 2 + 2 * 4 * 128 * 2 * 4);
    gm_shape huge = {.prec = GM_FP32, .batch = 1u << 24, .seq = 1u << 24, .hidden = 1u << 20, .heads = 1};
    gm_shape_complete(&huge);
    assert_int_equal(gm_workload_find("linear")->tensors(&huge, t), -1);   /* overflow refused */

    /* Options whose largest shape overflows the model: the run is refused. */
    gm_bench_opts o;
    gm_opts_init(&o);
    assert_int_equal(gm_opts_set(&o, "workload", "linear,attention,kvcache", err, sizeof err), 0);
    assert_int_equal(gm_opts_set(&o, "batch", "1,4", err, sizeof err), 0);
    assert_int_equal(gm_workloads_check_sizes(&o, err, sizeof err), 0);
    assert_int_equal(gm_opts_set(&o, "batch", "1,16777216", err, sizeof err), 0);
    assert_int_equal(gm_opts_set(&o, "seq", "1048576", err, sizeof err), 0);
    assert_int_equal(gm_opts_set(&o, "hidden", "1048576", err, sizeof err), 0);
    assert_int_equal(gm_workloads_check_sizes(&o, err, sizeof err), -1);
    assert_non_null(strstr(err, "batch 16777216, seq 1048576"));
    assert_non_null(strstr(err, "2^64"));
    gm_opts_release(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options), cmocka_unit_test(test_profiles),
        cmocka_unit_test(test_variant_defines), cmocka_unit_test(test_json), cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests_name("options, profiles, json, model", tests, NULL, NULL);
}
