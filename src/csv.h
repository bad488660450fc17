/* CSV (RFC 4180): output quotes fields only when they must be; input
 * splits a line with its quoting undone. */
#ifndef GM_CSV_H
#define GM_CSV_H

#include <stdio.h>

/* Writes one field, quoted (with doubled quotes) if it holds a comma,
 * quote, CR, LF or leading/trailing space. NULL writes an empty field. */
void gm_csv_field(FILE *f, const char *s);

/* Writes n fields and a newline. Returns 0, or -1 if the stream failed. */
int gm_csv_row(FILE *f, const char *const *fields, int n);

/* Splits one line (without its end of line) in place into at most max
 * fields, quotes undone. Returns the field count, or -1 for a malformed
 * line (an unterminated quote, text after a closing quote, more than max
 * fields). */
int gm_csv_split(char *s, char **out, int max);

#endif
