/* Reading JSON (src/lib/json.c over jansson): lookups by dotted path,
 * escapes, errors that name the line, and strings that are not UTF-8. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/json.h"

static char err[256];

static json_t *parse_ok(const char *text)
{
    err[0] = '\0';
    json_t *d = gm_json_parse(text, strlen(text), err, sizeof err);
    if (!d)
        fail_msg("'%s': %s", text, err);
    return d;
}

static void parse_bad(const char *text, const char *why)
{
    json_t *d = gm_json_parse(text, strlen(text), err, sizeof err);
    assert_null(d);
    if (!strstr(err, why))
        fail_msg("'%s': got '%s', want '%s'", text, err, why);
}

static void test_leaves(void **state)
{
    (void)state;
    json_t *d = parse_ok("{\"a\": 1, \"b\": {\"c\": \"x\", \"d\": [true, null, -2.5e3]}, \"e\": []}");
    assert_int_equal(json_integer_value(gm_json_at(d, "a")), 1);
    assert_string_equal(gm_json_str(d, "b.c"), "x");
    assert_true(json_is_true(gm_json_at(d, "b.d.0")));
    assert_true(json_is_null(gm_json_at(d, "b.d.1")));
    assert_true(json_real_value(gm_json_at(d, "b.d.2")) == -2.5e3);
    assert_true(json_is_array(gm_json_at(d, "e")) && json_array_size(gm_json_at(d, "e")) == 0);
    assert_null(gm_json_at(d, "f"));
    assert_null(gm_json_at(d, "b.d.3"));
    assert_null(gm_json_at(d, "b.d.x"));
    assert_null(gm_json_at(d, "b.c.x"));
    assert_null(gm_json_at(d, "e.0"));
    assert_null(gm_json_str(d, "a"));   /* a number, not a string */
    assert_null(gm_json_str(d, "b"));
    assert_null(gm_json_str(NULL, "a"));
    json_decref(d);
}

static void test_escapes(void **state)
{
    (void)state;
    json_t *d = parse_ok("{\"s\": \"q\\\"b\\\\n\\n\\u00e9\\u20ac\"}");
    assert_string_equal(gm_json_str(d, "s"), "q\"b\\n\n\xc3\xa9\xe2\x82\xac");
    json_decref(d);
}

static void test_errors(void **state)
{
    (void)state;
    parse_bad("", "line 1: '[' or '{' expected near end of file");
    parse_bad("{\"a\": 1,\n\"b\" 2}", "line 2: ':' expected");
    parse_bad("{\"a\": tru}", "invalid token");
    parse_bad("{\"a\": \"open", "premature end of input");
    parse_bad("{\"a\": 1} x", "end of file expected");
    parse_bad("[1, 2", "']' expected");
    parse_bad("{\"a\": \"\\x\"}", "invalid escape");
    parse_bad("{\"a\": \"\\u12G4\"}", "invalid escape");
    parse_bad("{\"a\": \"\xff\"}", "unable to decode byte 0xff");
    char *deep = malloc(6001);
    assert_non_null(deep);
    memset(deep, '[', 3000);
    memset(deep + 3000, ']', 3000);
    deep[6000] = '\0';
    parse_bad(deep, "maximum parsing depth reached");
    free(deep);
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
    assert_null(gm_json_load(path, err, sizeof err));
    char want[64];
    snprintf(want, sizeof want, "%s:3: unexpected token near ']'", path);
    assert_string_equal(err, want);
    unlink(path);
    assert_null(gm_json_load(path, err, sizeof err));
    snprintf(want, sizeof want, "cannot read %s: ", path);
    assert_memory_equal(err, want, strlen(want));
}

/* What meta.json writing gives jansson: strings that are not UTF-8 are
 * repaired rather than dropped, and unsigned counts stay numbers. */
static void test_write_values(void **state)
{
    (void)state;
    json_t *o = json_object();
    assert_int_equal(gm_json_set_string(o, "name", "caf\xe9 \xc3\xa9\xed\xa0\x80"), 0);
    assert_string_equal(gm_json_str(o, "name"), "caf\xef\xbf\xbd \xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    assert_int_equal(gm_json_set_uint(o, "bytes", UINT64_C(1) << 40), 0);
    assert_int_equal(json_integer_value(gm_json_at(o, "bytes")), INT64_C(1) << 40);
    assert_int_equal(gm_json_set_uint(o, "huge", UINT64_MAX), 0);
    assert_int_equal(json_integer_value(gm_json_at(o, "huge")), INT64_MAX);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaves), cmocka_unit_test(test_escapes), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_load_names_file), cmocka_unit_test(test_write_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
