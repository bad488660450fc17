/* Size, integer, share and range parsing (src/units.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/units.h"

static char err[256];

static uint64_t size_ok(const char *s)
{
    uint64_t v = 0;
    err[0] = '\0';
    assert_int_equal(gm_parse_size(s, &v, err, sizeof err), 0);
    return v;
}

static void size_bad(const char *s, const char *why)
{
    uint64_t v = 0;
    assert_int_equal(gm_parse_size(s, &v, err, sizeof err), -1);
    assert_non_null(strstr(err, why));
}

static void test_sizes(void **state)
{
    (void)state;
    assert_int_equal(size_ok("4096"), 4096);
    assert_int_equal(size_ok("4KiB"), 4096);
    assert_int_equal(size_ok("4k"), 4096);
    assert_int_equal(size_ok("64MiB"), 64ull << 20);
    assert_int_equal(size_ok("64mib"), 64ull << 20);
    assert_int_equal(size_ok("1.5GiB"), 3ull << 29);
    assert_int_equal(size_ok("2T"), 2ull << 40);
    assert_int_equal(size_ok("1GB"), 1000000000ull);
    assert_int_equal(size_ok("3KB"), 3000);
    assert_int_equal(size_ok("0"), 0);
    size_bad("", "is not a size");
    size_bad("-1", "is not a size");
    size_bad("abc", "is not a size");
    size_bad("12XB", "unknown unit");
    size_bad("0.5", "whole number of bytes");
    size_bad("1e30", "too large");
    size_bad("99999999TiB", "too large");
    /* Absurd values are refused, never wrapped. */
    assert_int_equal(size_ok("1EiB"), 1ull << 60);
    assert_int_equal(size_ok("2PiB"), 2ull << 50);
    size_bad("8EiB", "too large");
    size_bad("99999999999EiB", "too large");
    size_bad("-4MiB", "is not a size");
    size_bad("1e400", "is not a size");
    size_bad("nan", "is not a size");
}

/* A budget (plan --fit): what a report prints, decimals rounded down to a
 * byte; the unit is required. */
static void test_budget(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(gm_parse_budget("78.7GiB", &v, err, sizeof err), 0);
    assert_true(v == (uint64_t)(78.7 * 1073741824.0));
    assert_int_equal(gm_parse_budget("24GiB", &v, err, sizeof err), 0);
    assert_true(v == 24ull << 30);
    assert_int_equal(gm_parse_budget("0.5KiB", &v, err, sizeof err), 0);
    assert_int_equal(v, 512);
    assert_int_equal(gm_parse_budget("1.5B", &v, err, sizeof err), 0);
    assert_int_equal(v, 1);
    assert_int_equal(gm_parse_budget("24", &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "'24' has no unit"));
    assert_int_equal(gm_parse_budget("78.7", &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "has no unit"));
    assert_int_equal(gm_parse_budget("GiB", &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "with its unit"));
    assert_int_equal(gm_parse_budget("8EiB", &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "too large"));
}

static void test_uint(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(gm_parse_uint("42", 100, &v, err, sizeof err), 0);
    assert_int_equal(v, 42);
    assert_int_equal(gm_parse_uint("101", 100, &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "too large"));
    assert_int_equal(gm_parse_uint("4x", 100, &v, err, sizeof err), -1);
    assert_int_equal(gm_parse_uint("-4", 100, &v, err, sizeof err), -1);
    assert_int_equal(gm_parse_uint("99999999999999999999999", UINT64_MAX, &v, err, sizeof err), -1);
    assert_int_equal(gm_parse_uint("18446744073709551616", UINT64_MAX, &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "too large"));
    assert_int_equal(gm_parse_uint("18446744073709551615", UINT64_MAX, &v, err, sizeof err), 0);
    assert_true(v == UINT64_MAX);
}

static void test_share(void **state)
{
    (void)state;
    double v;
    assert_int_equal(gm_parse_share("90%", &v, err, sizeof err), 0);
    assert_true(v > 0.899 && v < 0.901);
    assert_int_equal(gm_parse_share("0.25", &v, err, sizeof err), 0);
    assert_true(v == 0.25);
    assert_int_equal(gm_parse_share("100%", &v, err, sizeof err), 0);
    assert_true(v == 1.0);
    const char *bad[] = {"0", "0%", "150%", "1.5", "abc", "", "%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gm_parse_share(bad[i], &v, err, sizeof err), -1);
}

static void range_ok(const char *s, int sizes, const uint64_t *want, size_t n_want)
{
    uint64_t *v = NULL;
    size_t n = 0;
    assert_int_equal(gm_parse_range(s, sizes, &v, &n, err, sizeof err), 0);
    assert_int_equal(n, n_want);
    for (size_t i = 0; want && i < n; i++)
        assert_int_equal(v[i], want[i]);
    free(v);
}

static void range_bad(const char *s, const char *why)
{
    uint64_t *v = (uint64_t *)1;
    size_t n = 7;
    assert_int_equal(gm_parse_range(s, 0, &v, &n, err, sizeof err), -1);
    assert_null(v);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err, why));
}

static void test_ranges(void **state)
{
    (void)state;
    range_ok("4:1024:x2", 0, (const uint64_t[]){4, 8, 16, 32, 64, 128, 256, 512, 1024}, 9);
    range_ok("4:1000:x2", 0, (const uint64_t[]){4, 8, 16, 32, 64, 128, 256, 512}, 8);
    range_ok("1:10:+3", 0, (const uint64_t[]){1, 4, 7, 10}, 4);
    range_ok("1MiB:4MiB:x2", 1, (const uint64_t[]){1 << 20, 2 << 20, 4 << 20}, 3);
    range_ok("1MiB:3MiB:+1MiB", 1, (const uint64_t[]){1 << 20, 2 << 20, 3 << 20}, 3);
    range_ok("1,5,3", 0, (const uint64_t[]){1, 5, 3}, 3);
    range_ok("7", 0, (const uint64_t[]){7}, 1);
    range_ok("5:5:x2", 0, (const uint64_t[]){5}, 1);
    range_bad("8:4:x2", "runs backwards");
    range_bad("4:8:x1", "never advances");
    range_bad("0:8:x2", "never advances");
    range_bad("4:8:+0", "never advances");
    range_bad("4:8", "malformed");
    range_bad("4:8:y2", "needs a step");
    range_bad("1,,2", "empty item");
    range_bad("1,2,", "empty item");
    range_bad("1:2:x2:3", "malformed");
    range_bad("1:100000:+1", "too many points");
    /* A 10^18-point sweep is counted, not built. */
    range_bad("1:1000000000000000000:+1", "too many points");
    range_bad("0:9223372036854775807:+1", "too many points");
    range_bad("1:99999999999999999999:+1", "too large");
    range_bad("-1:8:+1", "not a non-negative integer");
    range_bad("1:8:+-1", "not a non-negative integer");
    range_ok("1:9223372036854775807:x2", 0, NULL, 63);
    range_ok("4611686018427387904:9223372036854775807:x2", 0, (const uint64_t[]){1ull << 62}, 1);
    range_ok("9223372036854775806:9223372036854775807:+1", 0,
             (const uint64_t[]){9223372036854775806ull, 9223372036854775807ull}, 2);
    range_bad("a:b:x2", "'a'");
    range_bad("", "empty");
}

static void test_format(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(gm_format_size(4096, buf, sizeof buf), "4KiB");
    assert_string_equal(gm_format_size(64ull << 20, buf, sizeof buf), "64MiB");
    assert_string_equal(gm_format_size(1536, buf, sizeof buf), "1.5KiB");
    assert_string_equal(gm_format_size(100, buf, sizeof buf), "100B");
    assert_string_equal(gm_format_size(3ull << 40, buf, sizeof buf), "3TiB");
    assert_string_equal(gm_format_size(1073217536ull, buf, sizeof buf), "1023.5MiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes), cmocka_unit_test(test_budget), cmocka_unit_test(test_uint),
        cmocka_unit_test(test_share), cmocka_unit_test(test_ranges), cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
