#include "json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *s;
    int bad;
} cursor;

static void space(cursor *c)
{
    while (*c->s == ' ' || *c->s == '\n' || *c->s == '\r' || *c->s == '\t')
        c->s++;
}

/* Reads a string at c->s (which is at its quote) into out (NULL: skip it). */
static void string(cursor *c, char *out, size_t len)
{
    size_t n = 0;
    if (*c->s != '"') {
        c->bad = 1;
        return;
    }
    c->s++;
    while (*c->s && *c->s != '"') {
        char ch = *c->s++;
        if (ch == '\\') {
            char e = *c->s++;
            switch (e) {
            case 'n': ch = '\n'; break;
            case 't': ch = '\t'; break;
            case 'r': ch = '\r'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'u': {
                unsigned v = 0;
                for (int i = 0; i < 4; i++, c->s++) {
                    char h = *c->s;
                    if (!h) {
                        c->bad = 1;
                        return;
                    }
                    v = v * 16 + (unsigned)(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
                }
                ch = v < 128 ? (char)v : '?';
                break;
            }
            case '\0': c->bad = 1; return;
            default: ch = e;
            }
        }
        if (out && n + 1 < len)
            out[n++] = ch;
    }
    if (*c->s != '"') {
        c->bad = 1;
        return;
    }
    c->s++;
    if (out && len)
        out[n] = '\0';
}

/* Skips one value, or (when path is not NULL and the value is an object)
 * looks for path inside it; returns true with out filled when found. */
static bool value(cursor *c, const char *path, char *out, size_t len)
{
    space(c);
    if (*c->s == '{' || *c->s == '[') {
        char close = *c->s == '{' ? '}' : ']';
        int object = close == '}';
        c->s++;
        space(c);
        if (*c->s == close) {
            c->s++;
            return false;
        }
        for (;;) {
            const char *rest = NULL;
            if (object) {
                char key[256];
                space(c);
                string(c, key, sizeof key);
                space(c);
                if (c->bad || *c->s != ':') {
                    c->bad = 1;
                    return false;
                }
                c->s++;
                size_t k = strlen(key);
                if (path && strncmp(path, key, k) == 0 && (path[k] == '\0' || path[k] == '.'))
                    rest = path + k;
            }
            if (rest && *rest == '\0') {
                space(c);
                if (*c->s == '{' || *c->s == '[')
                    return false;
                if (*c->s == '"') {
                    string(c, out, len);
                    return !c->bad;
                }
                size_t n = strcspn(c->s, ",}] \n\r\t");
                if (n == 0 || n >= len)
                    return false;
                memcpy(out, c->s, n);
                out[n] = '\0';
                return true;
            }
            if (value(c, rest ? rest + 1 : NULL, out, len))
                return true;
            if (c->bad)
                return false;
            space(c);
            if (*c->s == ',') {
                c->s++;
                continue;
            }
            if (*c->s == close) {
                c->s++;
                return false;
            }
            c->bad = 1;
            return false;
        }
    }
    if (*c->s == '"') {
        string(c, NULL, 0);
        return false;
    }
    size_t n = strcspn(c->s, ",}] \n\r\t");
    if (n == 0)
        c->bad = 1;
    c->s += n;
    return false;
}

bool gm_json_get(const char *text, const char *path, char *out, size_t len)
{
    cursor c = {text, 0};
    if (!len)
        return false;
    return value(&c, path, out, len);
}

char *gm_read_text_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *b = realloc(buf, cap *= 2);
        if (!b)
            free(buf);
        buf = b;
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}
