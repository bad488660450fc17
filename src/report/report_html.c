/*
 * report.html: the report as one self-contained page. Each plot's SVG is
 * embedded as a data: URI (so the page needs no other file, and the
 * plots' element ids cannot collide); a small script marks any image that
 * fails to load and records the count on the <html> element
 * (data-images="N loaded, M broken"), which the tests read back from a
 * headless browser.
 */
#include "report/report_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gm_html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void html_table(FILE *f, const char *head, const char *id, const gm_report_row *rows, int n)
{
    fprintf(f, "<h2>%s</h2>\n<table id=\"%s\">\n<tr><th>measure</th><th>value</th></tr>\n", head, id);
    for (int i = 0; i < n; i++) {
        fputs("<tr><td>", f);
        gm_html_text(f, rows[i].label);
        fputs("</td><td>", f);
        gm_html_text(f, rows[i].value);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* Writes the file at path base64-encoded; returns 0, or -1 if unreadable. */
static int base64_file(FILE *out, const char *path)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    FILE *in = fopen(path, "rb");
    if (!in)
        return -1;
    unsigned char b[3];
    size_t n;
    while ((n = fread(b, 1, 3, in)) > 0) {
        unsigned v = (unsigned)b[0] << 16 | (n > 1 ? (unsigned)b[1] << 8 : 0) | (n > 2 ? b[2] : 0);
        char q[4] = {digits[v >> 18 & 63], digits[v >> 12 & 63], n > 1 ? digits[v >> 6 & 63] : '=',
                     n > 2 ? digits[v & 63] : '='};
        fwrite(q, 1, 4, out);
    }
    int bad = ferror(in);
    fclose(in);
    return bad ? -1 : 0;
}

static const char style[] =
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
    "td,th{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left;vertical-align:top}"
    "th{background:#f0f0f0}tr:nth-child(even) td{background:#fafafa}"
    "dl#answers{font-size:1.1em;border-left:4px solid #1b6ca8;padding:.2em 1em;background:#f5f9fc}"
    "dl#answers dt{font-weight:bold;margin-top:.4em}dl#answers dd{margin:0 0 .3em 0}"
    "figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}"
    ".broken{outline:3px solid #c00}";

static const char script[] =
    "window.addEventListener('load',function(){var ok=0,bad=0;"
    "document.querySelectorAll('img').forEach(function(i){"
    "if(i.complete&&i.naturalWidth>0){ok++}else{bad++;i.classList.add('broken');"
    "i.insertAdjacentText('afterend',' (this plot failed to load)')}});"
    "document.documentElement.dataset.images=ok+' loaded, '+bad+' broken';});";

void gm_html_head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    gm_html_text(f, title);
    fprintf(f, "</title>\n<style>%s</style>\n<script>%s</script>\n</head>\n<body>\n<h1>", style, script);
    gm_html_text(f, title);
    fputs("</h1>\n", f);
}

int gm_html_plot(FILE *f, const char *svg, const char *id, const char *caption)
{
    fprintf(f, "<figure id=\"plot-%s\"><img alt=\"%s\" src=\"data:image/svg+xml;base64,", id, caption);
    int rc = base64_file(f, svg);
    fputs("\"><figcaption>", f);
    gm_html_text(f, caption);
    fputs("</figcaption></figure>\n", f);
    return rc;
}

int gm_report_write_html(const gm_report *r, const char *run, const char *const *plots, int n_plots, char *err,
                         size_t len)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/report.html", run);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, len, "cannot write %s", tmp);
        return -1;
    }
    gm_html_head(f, r->title);
    if (r->device[0]) {
        fputs("<p>Device: ", f);
        gm_html_text(f, r->device);
        fputs(".</p>\n", f);
    }
    int answered = 0;
    for (int i = 0; i < GM_ANSWERS; i++)
        if (r->answers[i].label[0]) {
            fputs(answered++ ? "" : "<dl id=\"answers\">\n", f);
            fputs("<dt>", f);
            gm_html_text(f, r->answers[i].label);
            fputs("</dt><dd>", f);
            gm_html_text(f, r->answers[i].value);
            fputs("</dd>\n", f);
        }
    if (answered)
        fputs("</dl>\n", f);
    if (r->facts_note[0]) {
        fputs("<p>", f);
        gm_html_text(f, r->facts_note);
        fputs("</p>\n", f);
    }
    if (r->n_facts)
        html_table(f, "Device and run", "facts", r->facts, r->n_facts);
    html_table(f, "Headline numbers", "headline", r->headline, r->n_headline);
    if (n_plots)
        fputs("<h2>Plots</h2>\n", f);
    int rc = 0;
    for (int i = 0; i < n_plots && rc == 0; i++) {
        char svg[4300];
        snprintf(svg, sizeof svg, "%s/plots/%s.svg", run, plots[i]);
        if (gm_html_plot(f, svg, plots[i], plots[i]) != 0) {
            snprintf(err, len, "cannot read %s for the HTML report", svg);
            rc = -1;
        }
    }
    fputs("</body>\n</html>\n", f);
    if (fclose(f) != 0 && rc == 0) {
        snprintf(err, len, "cannot write %s", tmp);
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        snprintf(err, len, "cannot write %s", path);
        rc = -1;
    }
    if (rc != 0)
        remove(tmp);
    return rc;
}
