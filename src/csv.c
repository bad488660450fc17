#include "csv.h"

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

