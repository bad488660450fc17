/*
 * gm_spawn_worker (run/worker_spawn.h): the child gets exactly the argv
 * given, the parent's environment with the extra entries replacing
 * same-named ones, and the descriptors given as its standard streams;
 * a program that cannot be run exits with the status asked for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "run/worker_spawn.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs spec with stdout into a pipe; returns what the child wrote and
 * its exit status. */
static int run_child(gm_spawn_spec *spec, char *out, size_t len)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    spec->stdout_fd = p[1];
    char err[300] = "";
    pid_t pid = gm_spawn_worker(spec, err, sizeof err);
    close(p[1]);
    if (pid < 0)
        fail_msg("spawn: %s", err);
    size_t have = 0;
    ssize_t got;
    while (have < len - 1 && (got = read(p[0], out + have, len - 1 - have)) > 0)
        have += (size_t)got;
    out[have] = '\0';
    close(p[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_argv_and_environment(void **state)
{
    (void)state;
    setenv("GM_SPAWN_KEPT", "parent", 1);
    setenv("GM_SPAWN_REPLACED", "parent", 1);
    char *argv[] = {"worker-name", "-c",
                    "printf '%s|' \"$0\" \"$1\"; printf '%s|%s|%s|' \"$GM_SPAWN_KEPT\" \"$GM_SPAWN_REPLACED\" "
                    "\"$GM_SPAWN_NEW\"; env | grep -c '^GM_SPAWN_REPLACED='",
                    "first arg", "", NULL};
    const char *env[] = {"GM_SPAWN_REPLACED=child", "GM_SPAWN_NEW=a=b c", NULL};
    gm_spawn_spec spec = {"/bin/sh", argv, env, -1, -1, -1, 99};
    char out[512];
    assert_int_equal(run_child(&spec, out, sizeof out), 0);
    assert_string_equal(out, "first arg||parent|child|a=b c|1\n");   /* sh -c: $0 is the first after the script */
    /* The parent's own environment is untouched. */
    assert_string_equal(getenv("GM_SPAWN_REPLACED"), "parent");
    assert_null(getenv("GM_SPAWN_NEW"));
}

static void test_streams(void **state)
{
    (void)state;
    int in[2];
    assert_int_equal(pipe2(in, O_CLOEXEC), 0);
    assert_int_equal(write(in[1], "request\n", 8), 8);
    close(in[1]);
    char *argv[] = {"cat", NULL};
    gm_spawn_spec spec = {"/bin/cat", argv, NULL, in[0], -1, -1, 99};
    char out[64];
    assert_int_equal(run_child(&spec, out, sizeof out), 0);
    close(in[0]);
    assert_string_equal(out, "request\n");
}

static void test_exec_failure(void **state)
{
    (void)state;
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    char *argv[] = {"missing", NULL};
    gm_spawn_spec spec = {"/nonexistent/gpumem-worker", argv, NULL, -1, -1, devnull, 42};
    char out[64];
    assert_int_equal(run_child(&spec, out, sizeof out), 42);
    close(devnull);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argv_and_environment),
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_exec_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
