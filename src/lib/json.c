#include "lib/json.h"

#include <inttypes.h>
#include <math.h>

void gm_json_init(gm_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->first[0] = true;
}

static void write_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Writes the separator, indentation and key before a value. */
static void member(gm_json *j, const char *key)
{
    if (j->depth > 0) {
        fputs(j->first[j->depth] ? "\n" : ",\n", j->f);
        fprintf(j->f, "%*s", 2 * j->depth, "");
    }
    j->first[j->depth] = false;
    if (key) {
        write_escaped(j->f, key);
        fputs(": ", j->f);
    }
}

static void open_container(gm_json *j, const char *key, char open, char close)
{
    member(j, key);
    fputc(open, j->f);
    if (j->depth + 1 < GM_JSON_MAX_DEPTH)
        j->depth++;
    j->first[j->depth] = true;
    j->closer[j->depth] = close;
}

void gm_json_object(gm_json *j, const char *key) { open_container(j, key, '{', '}'); }
void gm_json_array(gm_json *j, const char *key) { open_container(j, key, '[', ']'); }

void gm_json_end(gm_json *j)
{
    if (j->depth == 0)
        return;
    bool empty = j->first[j->depth];
    char close = j->closer[j->depth];
    j->depth--;
    if (!empty)
        fprintf(j->f, "\n%*s", 2 * j->depth, "");
    fputc(close, j->f);
    if (j->depth == 0)
        fputc('\n', j->f);
}

void gm_json_string(gm_json *j, const char *key, const char *value)
{
    member(j, key);
    if (value)
        write_escaped(j->f, value);
    else
        fputs("null", j->f);
}

void gm_json_int(gm_json *j, const char *key, int64_t v) { member(j, key); fprintf(j->f, "%" PRId64, v); }
void gm_json_uint(gm_json *j, const char *key, uint64_t v) { member(j, key); fprintf(j->f, "%" PRIu64, v); }
void gm_json_bool(gm_json *j, const char *key, bool v) { member(j, key); fputs(v ? "true" : "false", j->f); }
void gm_json_null(gm_json *j, const char *key) { member(j, key); fputs("null", j->f); }

void gm_json_double(gm_json *j, const char *key, double v)
{
    member(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.17g", v);
    else
        fputs("null", j->f);
}
