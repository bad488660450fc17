/* CSV quoting (src/csv.c) and summary statistics (src/stats.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/csv.h"
#include "lib/stats.h"

/* Writes one row and returns it as text (static buffer). */
static const char *row_text(const char *const *fields, int n)
{
    static char buf[512];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_non_null(f);
    assert_int_equal(gm_csv_row(f, fields, n), 0);
    fclose(f);
    return buf;
}

static void test_csv_quoting(void **state)
{
    (void)state;
    assert_string_equal(row_text((const char *[]){"a", "b", "3.5"}, 3), "a,b,3.5\n");
    assert_string_equal(row_text((const char *[]){"x,y", "z"}, 2), "\"x,y\",z\n");
    assert_string_equal(row_text((const char *[]){"say \"hi\""}, 1), "\"say \"\"hi\"\"\"\n");
    assert_string_equal(row_text((const char *[]){"two\nlines", "cr\r"}, 2), "\"two\nlines\",\"cr\r\"\n");
    assert_string_equal(row_text((const char *[]){" lead", "trail ", "in side"}, 3), "\" lead\",\"trail \",in side\n");
    assert_string_equal(row_text((const char *[]){NULL, "", NULL}, 3), ",,\n");
}

static void near(double got, double want)
{
    if (!(got > want - 1e-9 && got < want + 1e-9))
        fail_msg("got %.12g, want %.12g", got, want);
}

static void test_stats_known(void **state)
{
    (void)state;
    double v[] = {9, 2, 4, 4, 5, 4, 7, 5};
    double copy[8];
    memcpy(copy, v, sizeof v);
    gm_stats s;
    gm_stats_compute(v, 8, &s);
    assert_memory_equal(v, copy, sizeof v);   /* input untouched */
    assert_int_equal(s.n, 8);
    near(s.mean, 5.0);
    near(s.median, 4.5);
    near(s.min, 2.0);
    near(s.max, 9.0);
    near(s.stdev, 2.138089935299395);          /* sample (n-1) */
    near(s.p90, 7.6);                          /* type 7: rank 6.3 -> 7 + 0.3 * (9 - 7) */
    near(s.p99, 8.86);
    double odd[] = {3, 1, 2};
    gm_stats_compute(odd, 3, &s);
    near(s.median, 2.0);
}

static void test_stats_edges(void **state)
{
    (void)state;
    gm_stats s;
    double one = 42.0;
    gm_stats_compute(&one, 1, &s);
    near(s.median, 42.0);
    near(s.stdev, 0.0);
    near(s.p99, 42.0);
    gm_stats_compute(NULL, 0, &s);
    assert_int_equal(s.n, 0);
    near(s.mean, 0.0);
    double sorted[] = {1, 2, 3, 4};
    near(gm_quantile_sorted(sorted, 4, 0.0), 1.0);
    near(gm_quantile_sorted(sorted, 4, 1.0), 4.0);
    near(gm_quantile_sorted(sorted, 4, 0.5), 2.5);
    near(gm_quantile_sorted(sorted, 4, 1.0 / 3.0), 2.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_quoting),
        cmocka_unit_test(test_stats_known),
        cmocka_unit_test(test_stats_edges),
    };
    return cmocka_run_group_tests_name("csv and stats", tests, NULL, NULL);
}
