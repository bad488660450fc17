#include "lib/csv.h"

#include <stdio.h>
#include <string.h>

void gm_csv_field(FILE *f, const char *s)
{
    if (!s)
        return;
    size_t len = strlen(s);
    int quote = strpbrk(s, ",\"\r\n") != NULL || (len && (s[0] == ' ' || s[len - 1] == ' '));
    if (!quote) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int gm_csv_row(FILE *f, const char *const *fields, int n)
{
    for (int i = 0; i < n; i++) {
        if (i)
            fputc(',', f);
        gm_csv_field(f, fields[i]);
    }
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}

int gm_csv_split(char *s, char **out, int max)
{
    int n = 0;
    for (;;) {
        if (n == max)
            return -1;
        char *w = s;
        out[n++] = w;
        if (*s == '"') {
            s++;
            for (;;) {
                if (!*s)
                    return -1;                   /* unterminated quote */
                if (*s == '"' && s[1] == '"') {
                    *w++ = '"';
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    *w++ = *s++;
                }
            }
            if (*s && *s != ',')
                return -1;
        } else {
            while (*s && *s != ',')
                *w++ = *s++;
        }
        char end = *s;
        *w = '\0';
        if (!end)
            return n;
        s++;
    }
}

int gm_csv_find_columns(char *const *header, int n_header, const char *const *names, int *cols, int n)
{
    int missing = -1;
    for (int i = 0; i < n; i++) {
        cols[i] = -1;
        for (int c = 0; c < n_header && cols[i] < 0; c++)
            if (strcmp(header[c], names[i]) == 0)
                cols[i] = c;
        if (cols[i] < 0 && missing < 0)
            missing = i;
    }
    return missing;
}

int gm_csv_require_columns(char *const *header, int n_header, const char *path, const char *const *names, int *cols,
                           int n, char *err, size_t err_len)
{
    int missing = gm_csv_find_columns(header, n_header, names, cols, n);
    if (missing < 0)
        return 0;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(err, err_len, "%s:1: not a gpumem %.*s header (no column '%s')", path, (int)strcspn(base, "."), base,
             names[missing]);
    return -1;
}
