#include "lib/json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32
#define MAX_PATH 512

typedef struct {
    const char *s, *end;
    gm_json_doc *doc;
    char *err;
    size_t err_len;
    int failed;
} parser;

static int line_of(const parser *p, const char *at)
{
    int line = 1;
    for (const char *c = p->s; c < at && c < p->end; c++)
        line += *c == '\n';
    return line;
}

static int fail(parser *p, const char *at, const char *why)
{
    if (!p->failed)
        snprintf(p->err, p->err_len, "line %d: %s", line_of(p, at), why);
    p->failed = 1;
    return -1;
}

static void skip_space(const char **c, const char *end)
{
    while (*c < end && (**c == ' ' || **c == '\t' || **c == '\n' || **c == '\r'))
        (*c)++;
}

static int add_leaf(parser *p, const char *path, char *value, int is_string)
{
    gm_json_doc *d = p->doc;
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 32;
        gm_json_leaf *grown = realloc(d->leaves, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(value);
            return -1;
        }
        d->leaves = grown;
        d->cap = cap;
    }
    char *copy = strdup(path);
    if (!copy) {
        free(value);
        return -1;
    }
    d->leaves[d->n++] = (gm_json_leaf){copy, value, is_string};
    return 0;
}

static void put_utf8(char **w, unsigned cp)
{
    if (cp < 0x80) {
        *(*w)++ = (char)cp;
    } else if (cp < 0x800) {
        *(*w)++ = (char)(0xC0 | (cp >> 6));
        *(*w)++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *(*w)++ = (char)(0xE0 | (cp >> 12));
        *(*w)++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *(*w)++ = (char)(0x80 | (cp & 0x3F));
    }
}

/* Parses the string at *c (its opening quote) into a new buffer. */
static char *parse_string(parser *p, const char **c)
{
    const char *start = *c, *close = *c + 1;
    while (close < p->end && *close != '"')
        close += *close == '\\' ? 2 : 1;
    /* Unescaping never lengthens: the span between the quotes is enough. */
    char *out = malloc((size_t)(close < p->end ? close - start : p->end - start) + 1), *w = out;
    if (!out) {
        fail(p, start, "out of memory");
        return NULL;
    }
    for ((*c)++;; (*c)++) {
        if (*c >= p->end) {
            free(out);
            fail(p, start, "unterminated string");
            return NULL;
        }
        unsigned char ch = (unsigned char)**c;
        if (ch == '"')
            break;
        if (ch < 0x20) {
            free(out);
            fail(p, *c, "control character in a string");
            return NULL;
        }
        if (ch != '\\') {
            *w++ = (char)ch;
            continue;
        }
        if (++*c >= p->end)
            continue;                     /* reported as unterminated */
        const char *esc = "\"\\/bfnrt", *val = "\"\\/\b\f\n\r\t", *hit = strchr(esc, **c);
        if (**c && hit) {
            *w++ = val[hit - esc];
        } else if (**c == 'u' && p->end - *c > 4) {
            unsigned cp = 0;
            for (int i = 1; i <= 4; i++) {
                char h = (*c)[i];
                int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                if (v < 0) {
                    free(out);
                    fail(p, *c, "bad \\u escape");
                    return NULL;
                }
                cp = cp * 16 + (unsigned)v;
            }
            put_utf8(&w, cp);
            *c += 4;
        } else {
            free(out);
            fail(p, *c, "bad escape in a string");
            return NULL;
        }
    }
    (*c)++;
    *w = '\0';
    return out;
}

static int parse_value(parser *p, const char **c, char *path, int depth);

static int child_path(parser *p, const char *at, char *path, size_t base, const char *name)
{
    int n = snprintf(path + base, MAX_PATH - base, "%s%s", base ? "." : "", name);
    if (n < 0 || (size_t)n >= MAX_PATH - base)
        return fail(p, at, "path too long");
    return 0;
}

static int parse_container(parser *p, const char **c, char *path, int depth, int object)
{
    size_t base = strlen(path);
    char close = object ? '}' : ']';
    (*c)++;
    skip_space(c, p->end);
    if (*c < p->end && **c == close) {
        (*c)++;
        return 0;
    }
    for (int index = 0;; index++) {
        skip_space(c, p->end);
        char name[32];
        const char *key_at = *c;
        if (object) {
            if (*c >= p->end || **c != '"')
                return fail(p, *c, "expected a key");
            char *key = parse_string(p, c);
            if (!key)
                return -1;
            int rc = child_path(p, key_at, path, base, key);
            free(key);
            if (rc)
                return -1;
            skip_space(c, p->end);
            if (*c >= p->end || **c != ':')
                return fail(p, *c, "expected ':'");
            (*c)++;
        } else {
            snprintf(name, sizeof name, "%d", index);
            if (child_path(p, key_at, path, base, name))
                return -1;
        }
        if (parse_value(p, c, path, depth + 1) != 0)
            return -1;
        path[base] = '\0';
        skip_space(c, p->end);
        if (*c < p->end && **c == ',') {
            (*c)++;
            continue;
        }
        if (*c < p->end && **c == close) {
            (*c)++;
            return 0;
        }
        return fail(p, *c, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(parser *p, const char **c, char *path, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(p, *c, "nested too deeply");
    skip_space(c, p->end);
    if (*c >= p->end)
        return fail(p, *c, "unexpected end");
    if (**c == '{' || **c == '[')
        return parse_container(p, c, path, depth, **c == '{');
    if (**c == '"') {
        char *s = parse_string(p, c);
        if (!s || add_leaf(p, path, s, 1) != 0)
            return s ? fail(p, *c, "out of memory") : -1;
        return 0;
    }
    const char *start = *c;
    while (*c < p->end && strchr("+-.0123456789eEtruefalsn", **c) && **c)
        (*c)++;
    size_t n = (size_t)(*c - start);
    char *lit = strndup(start, n);
    if (!lit)
        return fail(p, start, "out of memory");
    char *num_end = NULL;
    int literal = !strcmp(lit, "true") || !strcmp(lit, "false") || !strcmp(lit, "null");
    if (!literal && n && (lit[0] == '-' || (lit[0] >= '0' && lit[0] <= '9'))) {
        strtod(lit, &num_end);
        literal = num_end && *num_end == '\0';
    }
    if (!literal) {
        free(lit);
        return fail(p, start, "not a JSON value");
    }
    if (add_leaf(p, path, lit, 0) != 0)
        return fail(p, start, "out of memory");
    return 0;
}

int gm_json_parse(const char *text, size_t len, gm_json_doc *doc, char *err, size_t err_len)
{
    memset(doc, 0, sizeof *doc);
    parser p = {text, text + len, doc, err, err_len, 0};
    char path[MAX_PATH] = "";
    const char *c = text;
    int rc = parse_value(&p, &c, path, 0);
    skip_space(&c, p.end);
    if (rc == 0 && c != p.end)
        rc = fail(&p, c, "text after the document");
    if (rc != 0)
        gm_json_doc_free(doc);
    return rc;
}

int gm_json_load(const char *path, gm_json_doc *doc, char *err, size_t err_len)
{
    memset(doc, 0, sizeof *doc);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_len, "cannot read %s", path);
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            char *grown = cap <= (64u << 20) ? realloc(text, cap) : NULL;
            if (!grown) {
                free(text);
                fclose(f);
                snprintf(err, err_len, "%s: too large or out of memory", path);
                return -1;
            }
            text = grown;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    char why[256];
    int rc = gm_json_parse(text, len, doc, why, sizeof why);
    if (rc != 0)
        snprintf(err, err_len, "%s:%s", path, why + 5);   /* "line N: why" -> "FILE:N: why" */
    free(text);
    return rc;
}

const char *gm_json_get(const gm_json_doc *doc, const char *path)
{
    for (int i = 0; i < doc->n; i++)
        if (strcmp(doc->leaves[i].path, path) == 0)
            return doc->leaves[i].value;
    return NULL;
}

void gm_json_doc_free(gm_json_doc *doc)
{
    for (int i = 0; i < doc->n; i++) {
        free(doc->leaves[i].path);
        free(doc->leaves[i].value);
    }
    free(doc->leaves);
    memset(doc, 0, sizeof *doc);
}
