/* The report's serving figures (the serve suite's rows): a headline row per
 * point served, and a line of the third answer for the longest requests. */
#include "report/report_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(r, c) ((r)[d->col_##c])

static const char *col(char *const *r, int c) { return c >= 0 ? r[c] : ""; }

/* Is r an ok serve row of metric m and variant v? */
static int serve_row(const gm_plot_data *d, char *const *r, const char *v, const char *m)
{
    return !strcmp(F(r, suite), "serve") && !strcmp(F(r, status), "ok") && !strcmp(F(r, variant), v)
           && !strcmp(F(r, metric), m) && F(r, value)[0];
}

static int same_point(const gm_plot_data *d, char *const *a, char *const *b)
{
    return !strcmp(F(a, precision), F(b, precision)) && !strcmp(F(a, seq), F(b, seq))
           && !strcmp(col(a, d->col_model), col(b, d->col_model));
}

/* The decode row of the most running sequences at r's point (NULL: none),
 * and its roofline share. */
static char **largest_decode(const gm_plot_data *d, char *const *r, double *share)
{
    char **best = NULL;
    *share = 0;
    for (int i = 0; i < d->n_rows; i++) {
        char **q = d->fields[i];
        if (serve_row(d, q, "decode", "tokens") && same_point(d, q, r)
            && (!best || atof(F(q, batch)) > atof(F(best, batch))))
            best = q;
    }
    for (int i = 0; best && i < d->n_rows; i++) {
        char **q = d->fields[i];
        if (serve_row(d, q, "decode", "roofline_share") && same_point(d, q, best)
            && !strcmp(F(q, batch), F(best, batch)))
            *share = atof(F(q, value));
    }
    return best;
}

void gm_report_serve(gm_report *rep, const gm_plot_data *d)
{
    double longest = 0;
    char **answer = NULL, **answer_decode = NULL;
    for (int i = 0; i < d->n_rows; i++) {
        char **r = d->fields[i];
        if (!serve_row(d, r, "budget", "kv_pool_tokens"))
            continue;
        double share;
        char **dec = largest_decode(d, r, &share), label[200], roof[64] = "";
        snprintf(label, sizeof label, "serving: %s %s, %s-token requests", col(r, d->col_model), F(r, precision),
                 F(r, seq));
        if (share > 0)
            snprintf(roof, sizeof roof, ", %.2f of the memory's roofline", share);
        if (dec)
            gm_report_headline(rep, label, "KV pool %s tokens; %s running: %.0f tokens/s decoded%s",
                               F(r, value), F(dec, batch), atof(F(dec, value)), roof);
        else
            gm_report_headline(rep, label, "KV pool %s tokens", F(r, value));
        if (dec && atof(F(r, seq)) >= longest) {
            longest = atof(F(r, seq));
            answer = r;
            answer_decode = dec;
        }
    }
    if (!answer)
        return;
    /* The third answer gains a line: how many requests of the longest
     * length run at once, and what they decode at that load. */
    gm_report_answer *ans = &rep->answers[GM_ANSWER_FIT];
    size_t used = strlen(ans->value);
    snprintf(ans->value + used, sizeof ans->value - used, "%s%s %s serving, %s-token requests: %s concurrent, %.0f "
             "tokens/s at that load", used ? "\n" : "", col(answer, d->col_model), F(answer, precision),
             F(answer, seq), F(answer_decode, batch), atof(F(answer_decode, value)));
    if (!ans->label[0])
        snprintf(ans->label, sizeof ans->label, "Where do the models stop fitting?");
}
