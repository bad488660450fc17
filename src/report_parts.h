/* The report's parts, one source file each (private to src/report*.c). */
#ifndef GM_REPORT_PARTS_H
#define GM_REPORT_PARTS_H

#include "report.h"

/* Device and run facts from RUN/meta.json (src/report_facts.c). */
void gm_report_facts(const char *run, gm_report *r);

/* A headline row per stress check from RUN's TAP stream. */
void gm_report_stress(const char *run, gm_report *r);

/* Appends a headline row (formatted value); ignored when the table is full. */
void gm_report_headline(gm_report *r, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
