/* The point journal and the run folder's lock (src/journal.c,
 * src/run_lock.c): what --resume reads back, and what it refuses. */
#include <setjmp.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "run/journal.h"
#include "run/meta.h"
#include "run/results.h"
#include "run/run_lock.h"

static char dir[64], err[600];

static void write_file(const char *name, const char *text, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void append_file(const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gm-journal-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char big[400];
    memset(big, 'x', sizeof big);
    write_file("results.csv", big, sizeof big);
    write_file("samples.csv", big, sizeof big);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"results.csv", "samples.csv", "points.journal", "command", "lock"};
    char path[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    return 0;
}

static void test_points(void **state)
{
    (void)state;
    int fd = gm_journal_create(dir, 100, 50, err, sizeof err);
    assert_true(fd >= 0);
    assert_true(gm_journal_create(dir, 100, 50, err, sizeof err) < 0);   /* never twice */
    assert_int_equal(gm_journal_point(fd, 0, 150, 90, 1), 0);
    assert_int_equal(gm_journal_point(fd, 1, 200, 130, 2), 0);
    close(fd);
    /* A point line cut short by a kill: that point did not finish. */
    append_file("points.journal", "point 2 250 1");
    gm_journal_state st;
    fd = gm_journal_open(dir, &st, err, sizeof err);
    assert_true(fd >= 0);
    assert_int_equal(st.points, 2);
    assert_int_equal(st.results_len, 200);
    assert_int_equal(st.samples_len, 130);
    assert_int_equal(st.rows, 2);
    assert_false(st.ended);
    /* The cut line is gone; the next point follows on. */
    assert_int_equal(gm_journal_point(fd, 2, 260, 170, 3), 0);
    assert_int_equal(gm_journal_end(fd, "complete"), 0);
    close(fd);
    fd = gm_journal_open(dir, &st, err, sizeof err);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(st.points, 3);
    assert_true(st.ended);
    assert_string_equal(st.end_status, "complete");
}

static void journal_bad(const char *text, const char *why)
{
    write_file("points.journal", text, strlen(text));
    gm_journal_state st;
    assert_int_equal(gm_journal_open(dir, &st, err, sizeof err), -1);
    if (!strstr(err, why))
        fail_msg("error '%s' lacks '%s'", err, why);
}

static void test_refusals(void **state)
{
    (void)state;
    char head[200];
    snprintf(head, sizeof head, "gpumem-journal 1 %d 100 50 %s\n", GM_SCHEMA_VERSION, gm_suite_version());
    char text[600];
    snprintf(text, sizeof text, "%spoint 0 150 90 1\npoint 2 200 100 2\n", head);
    journal_bad(text, "points out of order");
    snprintf(text, sizeof text, "%spoint 0 150 90 1\nhello\n", head);
    journal_bad(text, "line 3: unreadable");
    snprintf(text, sizeof text, "%spoint 0 150 90 1\nend complete\npoint 1 200 100 2\n", head);
    journal_bad(text, "a line after the end");
    snprintf(text, sizeof text, "%spoint 0 9000 90 1\n", head);
    journal_bad(text, "shorter (400 bytes) than its journal says (9000)");
    journal_bad("gpumem-journal 1 999 100 50 x\n", "written by another version");
    snprintf(text, sizeof text, "gpumem-journal 1 %d 100 50 0.0-other\n", GM_SCHEMA_VERSION);
    journal_bad(text, "suite 0.0-other");
    journal_bad("results,of,something\n", "not a gpumem journal");
    journal_bad("", "empty");
    char path[128];
    snprintf(path, sizeof path, "%s/points.journal", dir);
    unlink(path);
    gm_journal_state st;
    assert_int_equal(gm_journal_open(dir, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a gpumem bench run"));
}

static void test_args(void **state)
{
    (void)state;
    char *argv[] = {"bench", "--sizes", "1MiB,2MiB", "--note=with space", ""};
    assert_int_equal(gm_journal_save_args(dir, 5, argv, err, sizeof err), 0);
    int n = 0;
    char **back = gm_journal_load_args(dir, &n, err, sizeof err);
    assert_non_null(back);
    assert_int_equal(n, 5);
    for (int i = 0; i < 5; i++)
        assert_string_equal(back[i], argv[i]);
    assert_null(back[5]);
    gm_journal_free_args(back);
}

static void test_lock(void **state)
{
    (void)state;
    int fd = gm_run_lock(dir, err, sizeof err);
    assert_true(fd >= 0);
    /* flock is per open file: a second open of the lock is refused. */
    char want[64];
    snprintf(want, sizeof want, "in use by another gpumem (pid %ld on ", (long)getpid());
    assert_int_equal(gm_run_lock(dir, err, sizeof err), -2);
    if (!strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
    /* A writer that opened the lock file before its holder finished... */
    char path[600];
    snprintf(path, sizeof path, "%s/lock", dir);
    int late = open(path, O_RDWR);
    assert_true(late >= 0);
    gm_run_unlock(dir, fd);
    /* ...finds it removed: a finished run leaves no lock file. */
    assert_int_equal(access(path, F_OK), -1);
    fd = gm_run_lock(dir, err, sizeof err);    /* free again, a new file */
    assert_true(fd >= 0);
    struct stat old_file, new_file;
    assert_int_equal(fstat(late, &old_file), 0);
    assert_int_equal(fstat(fd, &new_file), 0);
    assert_true(old_file.st_ino != new_file.st_ino);
    /* The removed file's lock guards nothing: the new one is held. */
    assert_int_equal(gm_run_lock(dir, err, sizeof err), -2);
    close(late);
    gm_run_unlock(dir, fd);
    assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_points, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
