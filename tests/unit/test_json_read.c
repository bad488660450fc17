/* The JSON reader (src/json_read.c): leaves and their paths, escapes,
 * and errors that name the line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/json_read.h"

static char err[256];

static void parse_ok(const char *text, gm_json_doc *d)
{
    err[0] = '\0';
    assert_int_equal(gm_json_parse(text, strlen(text), d, err, sizeof err), 0);
}

static void parse_bad(const char *text, const char *why)
{
    gm_json_doc d;
    assert_int_equal(gm_json_parse(text, strlen(text), &d, err, sizeof err), -1);
    if (!strstr(err, why))
        fail_msg("'%s': got '%s', want '%s'", text, err, why);
    assert_int_equal(d.n, 0);
}

static void test_leaves(void **state)
{
    (void)state;
    gm_json_doc d;
    parse_ok("{\"a\": 1, \"b\": {\"c\": \"x\", \"d\": [true, null, -2.5e3]}, \"e\": []}", &d);
    assert_int_equal(d.n, 5);
    assert_string_equal(gm_json_get(&d, "a"), "1");
    assert_string_equal(gm_json_get(&d, "b.c"), "x");
    assert_string_equal(gm_json_get(&d, "b.d.0"), "true");
    assert_string_equal(gm_json_get(&d, "b.d.1"), "null");
    assert_string_equal(gm_json_get(&d, "b.d.2"), "-2.5e3");
    assert_null(gm_json_get(&d, "e"));
    assert_null(gm_json_get(&d, "b"));
    gm_json_doc_free(&d);
}

static void test_escapes(void **state)
{
    (void)state;
    gm_json_doc d;
    parse_ok("{\"s\": \"q\\\"b\\\\n\\n\\u00e9\\u20ac\"}", &d);
    assert_string_equal(gm_json_get(&d, "s"), "q\"b\\n\n\xc3\xa9\xe2\x82\xac");
    gm_json_doc_free(&d);
}

static void test_errors(void **state)
{
    (void)state;
    parse_bad("", "line 1: unexpected end");
    parse_bad("{\"a\": 1,\n\"b\" 2}", "line 2: expected ':'");
    parse_bad("{\"a\": tru}", "not a JSON value");
    parse_bad("{\"a\": \"open", "unterminated string");
    parse_bad("{\"a\": 1} x", "text after the document");
    parse_bad("[1, 2", "expected ',' or ']'");
    parse_bad("{\"a\": \"\\x\"}", "bad escape");
    parse_bad("{\"a\": \"\\u12G4\"}", "bad \\u escape");
    char deep[80];
    memset(deep, '[', 40);
    deep[40] = '\0';
    parse_bad(deep, "nested too deeply");
}

static void test_load_names_file(void **state)
{
    (void)state;
    char path[] = "/tmp/gm-json-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "{\n  \"ok\": 1,\n  \"bad\": ]\n}\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    gm_json_doc d;
    assert_int_equal(gm_json_load(path, &d, err, sizeof err), -1);
    char want[64];
    snprintf(want, sizeof want, "%s:3: not a JSON value", path);
    assert_string_equal(err, want);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaves), cmocka_unit_test(test_escapes), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_load_names_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
