#include "lib/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int fail(char *err, size_t len, const char *fmt, const char *value)
{
    snprintf(err, len, fmt, value);
    return -1;
}

int gm_parse_uint(const char *s, uint64_t max, uint64_t *out, char *err, size_t err_len)
{
    if (!s || !isdigit((unsigned char)s[0]))
        return fail(err, err_len, "'%s' is not a non-negative integer", s ? s : "");
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0')
        return fail(err, err_len, "'%s' is not a non-negative integer", s);
    if (errno == ERANGE || v > max) {
        snprintf(err, err_len, "'%s' is too large (at most %llu)", s, (unsigned long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

static const struct { const char *suffix; double mult; } size_units[] = {
    {"", 1},          {"B", 1},
    {"K", 0x1p10},    {"KiB", 0x1p10}, {"KB", 1e3},
    {"M", 0x1p20},    {"MiB", 0x1p20}, {"MB", 1e6},
    {"G", 0x1p30},    {"GiB", 0x1p30}, {"GB", 1e9},
    {"T", 0x1p40},    {"TiB", 0x1p40}, {"TB", 1e12},
    {"P", 0x1p50},    {"PiB", 0x1p50}, {"PB", 1e15},
    {"E", 0x1p60},    {"EiB", 0x1p60}, {"EB", 1e18},
};

/* gm_parse_size and gm_parse_budget: `budget` requires a unit and rounds a
 * fraction of a byte down. */
static int parse_size(const char *s, int budget, uint64_t *out, char *err, size_t err_len)
{
    const char *allowed = budget ? "a size with its unit, such as 24GiB or 78.7GiB"
                                 : "a size such as 4096, 64KiB, 256MiB or 1.5GiB";
    if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '.' && isdigit((unsigned char)s[1])))) {
        snprintf(err, err_len, "'%s' is not %s", s ? s : "", allowed);
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE || !isfinite(v) || end == s) {
        snprintf(err, err_len, "'%s' is not %s", s, allowed);
        return -1;
    }
    if (budget && !*end) {
        snprintf(err, err_len, "'%s' has no unit: say 24GiB, 78.7GiB or 24GB, or B for bytes", s);
        return -1;
    }
    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        if (strcasecmp(end, size_units[i].suffix) != 0)
            continue;
        double bytes = v * size_units[i].mult;
        if (bytes >= 0x1p63) {
            snprintf(err, err_len, "'%s' is too large", s);
            return -1;
        }
        if (!budget && bytes != floor(bytes)) {
            snprintf(err, err_len, "'%s' is not a whole number of bytes", s);
            return -1;
        }
        *out = (uint64_t)floor(bytes);
        return 0;
    }
    snprintf(err, err_len, "'%s' has an unknown unit (use B, KiB, MiB, GiB, TiB, PiB, EiB, KB, MB, GB, TB, PB, EB)", s);
    return -1;
}

int gm_parse_size(const char *s, uint64_t *out, char *err, size_t err_len)
{
    return parse_size(s, 0, out, err, err_len);
}

int gm_parse_budget(const char *s, uint64_t *out, char *err, size_t err_len)
{
    return parse_size(s, 1, out, err, err_len);
}

int gm_parse_share(const char *s, double *out, char *err, size_t err_len)
{
    char *end;
    if (!s || !*s)
        return fail(err, err_len, "'%s' is not a share (e.g. 90%% or 0.9)", "");
    errno = 0;
    double v = strtod(s, &end);
    if (end != s && *end == '%' && end[1] == '\0')
        v /= 100.0;
    else if (end == s || *end != '\0')
        return fail(err, err_len, "'%s' is not a share (e.g. 90%% or 0.9)", s);
    if (errno == ERANGE || !(v > 0.0 && v <= 1.0))
        return fail(err, err_len, "'%s' is out of range (a share above 0 and at most 100%%)", s);
    *out = v;
    return 0;
}

static int parse_value(const char *s, int sizes, uint64_t *out, char *err, size_t err_len)
{
    return sizes ? gm_parse_size(s, out, err, err_len) : gm_parse_uint(s, UINT64_MAX >> 1, out, err, err_len);
}

static int parse_step_range(const char *s, int sizes, uint64_t **out, size_t *n, char *err, size_t err_len)
{
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return fail(err, err_len, "range '%.200s' is too long", s);
    strcpy(buf, s);
    char *first = buf, *second = strchr(buf, ':');
    *second++ = '\0';
    char *third = strchr(second, ':');
    if (!third || strchr(third + 1, ':'))
        return fail(err, err_len, "range '%s' is malformed (use a:b:xK, a:b:+K or a,b,c)", s);
    *third++ = '\0';
    uint64_t lo, hi, step;
    if (parse_value(first, sizes, &lo, err, err_len) || parse_value(second, sizes, &hi, err, err_len))
        return -1;
    char op = third[0];
    if (op != 'x' && op != '+')
        return fail(err, err_len, "range '%s' needs a step of xK (geometric) or +K (linear)", s);
    if ((op == 'x' ? gm_parse_uint(third + 1, UINT64_MAX >> 1, &step, err, err_len)
                   : parse_value(third + 1, sizes, &step, err, err_len)))
        return -1;
    if (lo > hi)
        return fail(err, err_len, "range '%s' runs backwards (its start exceeds its end)", s);
    if ((op == 'x' && (step < 2 || lo == 0)) || (op == '+' && step == 0))
        return fail(err, err_len, "range '%s' never advances (xK needs K >= 2 and a start above 0; +K needs K > 0)", s);
    /* Counted before anything is allocated: a linear range arithmetically
     * (a 10^18-point sweep is refused at once), a geometric one in at
     * most 64 steps. */
    if (op == '+' && (hi - lo) / step >= GM_MAX_RANGE_POINTS)
        return fail(err, err_len, "range '%s' has too many points (at most 4096)", s);
    size_t count = 0;
    for (uint64_t v = lo;; count++) {
        if (count >= GM_MAX_RANGE_POINTS)
            return fail(err, err_len, "range '%s' has too many points (at most 4096)", s);
        if ((op == 'x' && v > hi / step) || (op == '+' && v > hi - step))
            break;
        v = op == 'x' ? v * step : v + step;
    }
    count++;
    uint64_t *vals = malloc(count * sizeof *vals);
    if (!vals)
        return fail(err, err_len, "out of memory parsing '%s'", s);
    uint64_t v = lo;
    for (size_t i = 0; i < count; i++) {
        vals[i] = v;
        v = op == 'x' ? v * step : v + step;
    }
    *out = vals;
    *n = count;
    return 0;
}

int gm_parse_range(const char *s, int sizes, uint64_t **out, size_t *n, char *err, size_t err_len)
{
    *out = NULL;
    *n = 0;
    if (!s || !*s)
        return fail(err, err_len, "empty range '%s'", "");
    if (strchr(s, ':'))
        return parse_step_range(s, sizes, out, n, err, err_len);
    size_t count = 1;
    for (const char *p = s; *p; p++)
        count += *p == ',';
    if (count > GM_MAX_RANGE_POINTS)
        return fail(err, err_len, "list '%.40s...' has too many values (at most 4096)", s);
    uint64_t *vals = malloc(count * sizeof *vals);
    char *copy = strdup(s);
    if (!vals || !copy) {
        free(vals);
        free(copy);
        return fail(err, err_len, "out of memory parsing '%s'", s);
    }
    size_t i = 0;
    char *save = NULL;
    for (char *tok = copy;; tok = NULL) {
        char *item = strtok_r(tok, ",", &save);
        if (!item)
            break;
        if (parse_value(item, sizes, &vals[i++], err, err_len)) {
            free(vals);
            free(copy);
            return -1;
        }
    }
    free(copy);
    if (i != count) {
        free(vals);
        return fail(err, err_len, "list '%s' has an empty item", s);
    }
    *out = vals;
    *n = count;
    return 0;
}

const char *gm_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = (double)bytes;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    /* Three significant digits below 100, one decimal from 100 up: never an
     * exponent (1023.5MiB, not 1.02e+03MiB). */
    snprintf(buf, len, v == floor(v) ? "%.0f%s" : v >= 100 ? "%.1f%s" : "%.3g%s", v, names[u]);
    return buf;
}
