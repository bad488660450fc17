/* The run session of bench and stress (src/run/session.c) on the first
 * OpenCL device (PoCL on the CPU in CI): what it opens, the final status
 * in meta.json, the exit statuses, and the opens it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/exit_codes.h"
#include "device/leak_check.h"
#include "run/session.h"

static char dir[64], out[128], err[600];
/* argv[-1] is the program's name, as main passes subcommands. */
static char *args[] = {"gpumem", "stress", "--mem-limit", "64MiB", NULL};

static gm_session_params params(void)
{
    gm_session_params p = {"gpumem test", "opencl", 0, 64u << 20, 0, out, 3, args + 1, NULL, NULL, NULL, NULL};
    return p;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gm-session-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(out, sizeof out, "%s/run", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* meta.json's status is `status`. */
static void assert_status(const char *status)
{
    char path[160], text[8192], want[64];
    snprintf(path, sizeof path, "%s/meta.json", out);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    snprintf(want, sizeof want, "\"%s\"", status);
    if (!strstr(text, want))
        fail_msg("meta.json has no status %s:\n%s", status, text);
}

static void test_lifecycle(void **state)
{
    (void)state;
    gm_session s;
    gm_session_params p = params();
    assert_int_equal(gm_session_open(&s, &p, err, sizeof err), 0);
    assert_int_equal(s.dev.mem_limit, 64u << 20);
    assert_string_equal(s.run.dir, out);
    assert_status("running");
    assert_false(gm_session_check_leaks(&s));
    assert_true(s.leak.checked);
    gm_session_outcome o = {0};
    assert_string_equal(gm_session_finish(&s, &o), "complete");
    assert_status("complete");
    assert_int_equal(gm_session_close(&s, &o), GM_EXIT_OK);
}

/* Each outcome's status and exit status, the first of them winning. */
static void test_outcomes(void **state)
{
    (void)state;
    static const struct {
        gm_session_outcome o;
        const char *status;
        int rc;
    } cases[] = {
        {{.output_failed = true, .interrupted = 2, .device_lost = true}, "output-failed", GM_EXIT_OUTPUT},
        {{.interrupted = 15, .device_lost = true, .failed = true}, "interrupted", 143},
        {{.device_lost = true, .failed = true, .check_failed = true}, "device-lost", GM_EXIT_DEVICE},
        {{.failed = true, .check_failed = true}, "failed", GM_EXIT_CHECK},
        {{.failed = true}, "failed", GM_EXIT_OK},
        {{.check_failed = true}, "complete", GM_EXIT_CHECK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(out, sizeof out, "%s/run%zu", dir, i);
        gm_session s;
        gm_session_params p = params();
        assert_int_equal(gm_session_open(&s, &p, err, sizeof err), 0);
        gm_session_check_leaks(&s);
        gm_session_outcome o = cases[i].o;
        assert_string_equal(gm_session_finish(&s, &o), cases[i].status);
        assert_status(cases[i].status);
        assert_int_equal(gm_session_close(&s, &o), cases[i].rc);
    }
}

static int refuse(gm_run *run, const gm_device *dev, void *ctx, char *e, size_t e_len)
{
    (void)run;
    (void)dev;
    snprintf(e, e_len, "refused");
    return *(int *)ctx;
}

/* Refusals: exit status and one line, nothing left open. */
static void test_refusals(void **state)
{
    (void)state;
    gm_session s, t;
    gm_session_params p = params();
    p.device = 63;
    assert_int_equal(gm_session_open(&s, &p, err, sizeof err), GM_EXIT_USAGE);
    assert_true(err[0] != '\0');
    p = params();
    int why = GM_RUN_REFUSED;
    p.open_run = refuse;
    p.ctx = &why;
    assert_int_equal(gm_session_open(&s, &p, err, sizeof err), GM_EXIT_USAGE);
    assert_string_equal(err, "refused");
    why = -1;
    assert_int_equal(gm_session_open(&s, &p, err, sizeof err), GM_EXIT_OUTPUT);
    /* A folder another session writes into is refused, naming the lock. */
    p = params();
    assert_int_equal(gm_session_open(&s, &p, err, sizeof err), 0);
    assert_int_equal(gm_session_open(&t, &p, err, sizeof err), GM_EXIT_USAGE);
    assert_non_null(strstr(err, "pid"));
    gm_session_check_leaks(&s);
    gm_session_outcome o = {0};
    gm_session_finish(&s, &o);
    assert_int_equal(gm_session_close(&s, &o), GM_EXIT_OK);
}

/* The driver's free memory may come back short by 64MiB, and by the
 * managed bytes the run allocated on top (pages the driver keeps). The
 * driver's figure itself is compared on GPUs only. */
static void test_driver_allowance(void **state)
{
    (void)state;
    const uint64_t mib = 1u << 20;
    assert_int_equal(gm_leak_driver_allowance(0), GM_LEAK_DRIVER_SLACK);
    assert_int_equal(GM_LEAK_DRIVER_SLACK, 64 * mib);
    assert_int_equal(gm_leak_driver_allowance(48 * mib), 112 * mib);
    assert_int_equal(gm_leak_driver_allowance(UINT64_MAX - 1), UINT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcomes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test(test_driver_allowance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
