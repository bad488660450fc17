#include "lib/json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

json_t *gm_json_parse(const char *text, size_t len, char *err, size_t err_len)
{
    json_error_t e;
    json_t *root = json_loadb(text, len, 0, &e);
    if (!root)
        snprintf(err, err_len, "line %d: %s", e.line > 0 ? e.line : 1, e.text);
    return root;
}

json_t *gm_json_load(const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    json_error_t e;
    json_t *root = json_loadf(f, 0, &e);
    int read_failed = ferror(f);
    fclose(f);
    if (!root && read_failed)
        snprintf(err, err_len, "cannot read %s: %s", path, e.text);
    else if (!root)
        snprintf(err, err_len, "%s:%d: %s", path, e.line > 0 ? e.line : 1, e.text);
    return root;
}

json_t *gm_json_at(const json_t *root, const char *path)
{
    json_t *v = (json_t *)root;
    for (const char *c = path; v; c++) {
        size_t n = strcspn(c, ".");
        if (json_is_object(v)) {
            v = json_object_getn(v, c, n);
        } else if (json_is_array(v) && n > 0 && n <= 9 && strspn(c, "0123456789") >= n) {
            v = json_array_get(v, strtoul(c, NULL, 10));
        } else {
            v = NULL;
        }
        c += n;
        if (!*c)
            break;
    }
    return v;
}

const char *gm_json_str(const json_t *root, const char *path)
{
    return json_string_value(gm_json_at(root, path));
}

/* The length of the well-formed UTF-8 sequence at s (s[0] != 0), or 0. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = s[0] < 0x80 ? 1 : s[0] >= 0xC2 && s[0] <= 0xDF ? 2
             : s[0] >= 0xE0 && s[0] <= 0xEF ? 3 : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((n == 3 && s[0] == 0xE0 && s[1] < 0xA0) || (n == 3 && s[0] == 0xED && s[1] > 0x9F) ||
        (n == 4 && s[0] == 0xF0 && s[1] < 0x90) || (n == 4 && s[0] == 0xF4 && s[1] > 0x8F))
        return 0;   /* overlong, a surrogate, or past U+10FFFF */
    return n;
}

json_t *gm_json_text(const char *s)
{
    if (!s)
        return json_null();
    json_t *v = json_string(s);
    if (v)
        return v;
    /* Not UTF-8: each bad byte becomes U+FFFD (3 bytes). */
    size_t len = strlen(s);
    char *fixed = malloc(3 * len + 1), *w = fixed;
    if (!fixed)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_len(p);
        if (n) {
            memcpy(w, p, n);
            w += n;
            p += n;
        } else {
            memcpy(w, "\xEF\xBF\xBD", 3);
            w += 3;
            p++;
        }
    }
    *w = '\0';
    v = json_string(fixed);
    free(fixed);
    return v;
}

json_t *gm_json_real(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int gm_json_set_string(json_t *obj, const char *key, const char *value)
{
    return json_object_set_new(obj, key, gm_json_text(value));
}

int gm_json_set_uint(json_t *obj, const char *key, uint64_t value)
{
    return json_object_set_new(obj, key, json_integer(value > INT64_MAX ? INT64_MAX : (json_int_t)value));
}

int gm_json_dump(const json_t *root, FILE *f)
{
    if (json_dumpf(root, f, JSON_INDENT(2)) != 0 || fputc('\n', f) == EOF)
        return -1;
    return 0;
}
