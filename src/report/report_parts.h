/* The report's parts, one source file each (private to src/report*.c). */
#ifndef GM_REPORT_PARTS_H
#define GM_REPORT_PARTS_H

#include "report/report.h"

#include <stdio.h>

/* Device and run facts from RUN/meta.json (src/report_facts.c). */
void gm_report_facts(const char *run, gm_report *r);

/* The headline row of the run's verification time: the verify_time rows
 * summed (each a point's median check times its repetitions; the stream
 * suite's, its first rep's device check) against the run's wall time
 * (meta.json's start and end). No row where the run has no verify_time
 * rows (src/report_facts.c). */
void gm_report_verify(gm_report *r, const gm_plot_data *d, const char *run);

/* The serve suite's rows: a headline row per point, and a line of the
 * third answer (src/report_serve.c). */
void gm_report_serve(gm_report *r, const gm_plot_data *d);

/* Appends a headline row (formatted value); ignored when the table is full. */
void gm_report_headline(gm_report *r, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Writes s as the text of a Markdown table cell: a '|' would end the cell
 * (src/report.c). */
void gm_md_cell(FILE *f, const char *s);

/* HTML pieces (src/report_html.c): text escaped; the page's head (style,
 * the image-check script) and its <h1>; a plot's SVG inline as a data URI
 * in a <figure> (returns -1 when the SVG cannot be read). */
void gm_html_text(FILE *f, const char *s);
void gm_html_head(FILE *f, const char *title);
int gm_html_plot(FILE *f, const char *svg, const char *id, const char *caption);

#endif
