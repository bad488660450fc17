/* CSV output (RFC 4180): fields are quoted only when they must be. */
#ifndef GM_CSV_H
#define GM_CSV_H

#include <stdio.h>

/* Writes one field, quoted (with doubled quotes) if it holds a comma,
 * quote, CR, LF or leading/trailing space. NULL writes an empty field. */
void gm_csv_field(FILE *f, const char *s);

/* Writes n fields and a newline. Returns 0, or -1 if the stream failed. */
int gm_csv_row(FILE *f, const char *const *fields, int n);

#endif
