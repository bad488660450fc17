/* bench options and profiles (src/options.c), variant defines
 * (src/kernel_sources.c), the JSON writer (src/lib/json.c) and the memory
 * model's arithmetic (bench/model/workload.c) and its refusal of overflowing
 * options (bench/workloads/suite.c). */
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
#include "bench/pattern/pattern.h"
#include "cli/option_table.h"
#include "bench/model/workload.h"
#include "bench/workloads/registry.h"

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


/* The help of command cmd, as gm_option_help prints it (caller frees). */
static char *help_text(unsigned cmd)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    gm_option_help(f, cmd);
    long len = ftell(f);
    assert_true(len > 0);
    char *buf = calloc(1, (size_t)len + 1);
    assert_non_null(buf);
    rewind(f);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return buf;
}

/* Help and the parser agree, for every command: each `--name` help shows
 * is an option the parser accepts, and each option of the table is shown;
 * enumerations list every value the parser allows. */
static void test_help_matches_parser(void **state)
{
    (void)state;
    static const unsigned cmds[] = {GM_CMD_BENCH, GM_CMD_STRESS, GM_CMD_PLAN, GM_CMD_PLOT, GM_CMD_COMPARE,
                                    GM_CMD_FLEET};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        char *help = help_text(cmds[c]);
        int shown = 0;
        for (const char *p = strstr(help, "--"); p; p = strstr(p + 2, "--")) {
            char name[64];
            size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
            if (!n || n >= sizeof name)
                continue;
            memcpy(name, p + 2, n);
            name[n] = '\0';
            if (!gm_option_find(cmds[c], name))
                fail_msg("help of command %#x shows --%s, which its parser refuses", cmds[c], name);
            if (cmds[c] == GM_CMD_BENCH && gm_opts_takes_value(name) < 0)
                fail_msg("bench help shows --%s, which gm_opts_takes_value refuses", name);
            shown++;
        }
        assert_true(shown > 0);
        for (size_t i = 0; i < gm_option_count; i++) {
            const gm_option *opt = &gm_option_table[i];
            if (!(opt->commands & cmds[c]))
                continue;
            char flag[80], bare[80];
            snprintf(flag, sizeof flag, "  --%s ", opt->name);
            snprintf(bare, sizeof bare, "  --%s\n", opt->name);
            if (!strstr(help, flag) && !strstr(help, bare))
                fail_msg("the parser of command %#x accepts --%s, which its help does not show", cmds[c], opt->name);
            /* One declaration per command and name. */
            assert_ptr_equal(gm_option_find(cmds[c], opt->name), opt);
            if (opt->kind == GM_OPTARG_ENUM || opt->kind == GM_OPTARG_LIST) {
                const char *names[32];
                int n = opt->values(names, 32);
                assert_true(n > 0);
                for (int k = 0; k < n; k++)
                    if (!strstr(help, names[k]))
                        fail_msg("help of --%s lacks the value '%s'", opt->name, names[k]);
            }
        }
        free(help);
    }
    /* The options issue 16 found missing from bench --help, and its lists. */
    char *help = help_text(GM_CMD_BENCH);
    static const char *const wanted[] = {"--resume RUN", "--frag-fill", "--frag-free", "--frag-sizes",
                                         "--prealloc", "--on-oom", "--ffn", "--micro-batch", "--checkpoint",
                                         "--offload", "--block-tokens", "--variant"};
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (!strstr(help, wanted[i]))
            fail_msg("bench help lacks %s", wanted[i]);
    for (int i = 0; i < GM_PATTERN_COUNT; i++)
        assert_non_null(strstr(help, gm_pattern_names[i]));
    for (int i = 0; i < GM_RUNNABLE_WORKLOAD_COUNT; i++)
        assert_non_null(strstr(help, gm_runnable_workloads[i]));
    for (int i = 0; gm_suites[i]; i++)
        assert_non_null(strstr(help, gm_suites[i]->name));
    free(help);
    /* Every value help lists, the parser takes; a value it does not list, it refuses. */
    gm_bench_opts o;
    gm_opts_init(&o);
    for (int i = 0; i < GM_PATTERN_COUNT; i++)
        assert_int_equal(gm_opts_set(&o, "pattern", gm_pattern_names[i], err, sizeof err), 0);
    assert_int_equal(gm_opts_set(&o, "workload", "block", err, sizeof err), 0);
    assert_int_equal(gm_opts_set(&o, "ffn", "1024", err, sizeof err), 0);
    assert_int_equal(o.shape.ffn, 1024);
    assert_int_equal(gm_opts_set(&o, "checkpoint", "", err, sizeof err), 0);
    assert_true(o.shape.checkpoint);
    set_bad(&o, "on-oom", "maybe", "fail, shrink");
    set_bad(&o, "variant", "fast", "tiled, naive");
    set_bad(&o, "pattern", "nosuch", "per-tensor,monolithic");
    set_bad(&o, "hidden", "0", "from 1 to 1048576");
    assert_int_equal(gm_opts_takes_value("resume"), 1);
    assert_int_equal(gm_opts_takes_value("offload"), 0);
    assert_int_equal(gm_opts_set(&o, "resume", "x", err, sizeof err), -1);
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
    /* SUITE.cpu and SUITE.gpu: over the suite's section, for one kind of device. */
    const char *typed = write_profile("typed", "[oom]\nreps = 3\nwarmup = 4\n[oom.gpu]\nreps = 7\n[oom.cpu]\nreps = 9\n");
    const char *kinds[] = {"oom", "oom.gpu", "oom.cpu"};
    const unsigned want_reps[] = {3, 7, 9};
    for (int i = 0; i < 3; i++) {
        gm_opts_init(&o);
        assert_int_equal(gm_profile_load(&o, typed, kinds[i], err, sizeof err), 0);
        assert_int_equal(o.reps, want_reps[i]);
        assert_int_equal(o.warmup, 4);
        gm_opts_release(&o);
    }
    profile_bad("[oom.tpu]\nreps = 2\n", "bad.ini:2: unknown section [oom.tpu]");
    profile_bad("[oom.gpu]\nreps = x\n", "bad.ini:2: --reps 'x'");
    profile_bad("[bench]\nthis line is not an entry\n", "bad.ini:2: malformed line");
    profile_bad("[bench]\nout = /tmp/x\n", "bad.ini:2: 'out' cannot be set in a profile");
    profile_bad("[bench]\nresume = /tmp/x\n", "bad.ini:2: 'resume' cannot be set in a profile");
    profile_bad("[block]\nffn = 8\n", "bad.ini:2: unknown section [block]");
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
        cmocka_unit_test(test_options), cmocka_unit_test(test_help_matches_parser),
        cmocka_unit_test(test_profiles),
        cmocka_unit_test(test_variant_defines), cmocka_unit_test(test_json), cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests_name("options, profiles, json, model", tests, NULL, NULL);
}
