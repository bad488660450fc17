/*
 * The man page, gpumem.1 (help_pages.h: gm_help_man): written from the
 * command and option tables, each option's entry the very text --help
 * shows (gm_option_text), so `man gpumem` cannot disagree with the parser.
 */
#include "cli/help_pages.h"
#include "cli/option_table.h"
#include "run/meta.h"

#include <stdlib.h>
#include <string.h>

/* Writes text as roff: backslashes and hyphens escaped (a hyphen stays
 * the ASCII minus an option is typed with), a leading dot or quote kept
 * from being read as a request. */
static void roff(FILE *f, const char *text)
{
    if (*text == '.' || *text == '\'')
        fputs("\\&", f);
    for (const char *p = text; *p; p++) {
        if (*p == '\\')
            fputs("\\e", f);
        else if (*p == '-')
            fputs("\\-", f);
        else
            fputc(*p, f);
    }
}

/* A paragraph: text on one line, then a line break. */
static void para(FILE *f, const char *text)
{
    fputs(".PP\n", f);
    roff(f, text);
    fputc('\n', f);
}

/* The usage lines of c, each "gpumem LINE" in bold, no filling. */
static void usage_lines(FILE *f, const gm_command *c)
{
    fputs(".nf\n", f);
    for (const char *line = c->usage; *line;) {
        size_t n = strcspn(line, "\n");
        char buf[300];
        snprintf(buf, sizeof buf, "gpumem %.*s", (int)n, line);
        fputs("\\fB", f);
        roff(f, buf);
        fputs("\\fR\n", f);
        line += n + (line[n] == '\n');
    }
    fputs(".fi\n", f);
}

/* c's options, each with what its profile sets beside the default, as its
 * --help shows them. */
static void options(FILE *f, const gm_command *c)
{
    size_t i = 0;
    gm_profile_text *t = c->profile ? malloc(sizeof *t) : NULL;
    if (t && gm_profile_text_read(c->profile, t) != 0) {
        free(t);
        t = NULL;
    }
    for (const gm_option *opt; (opt = gm_option_next(c->options, &i));) {
        char head[64], text[1024];
        gm_option_text_profile(opt, t, head, sizeof head, text, sizeof text);
        fputs(".TP\n\\fB", f);
        roff(f, head);
        fputs("\\fR\n", f);
        roff(f, text);
        fputc('\n', f);
    }
    free(t);
}

/* What the page says beyond the tables: the environment gpumem reads. */
static const char *const environment[][2] = {
    {"GPUMEM_DATA_DIR", "a folder searched first for data files: profiles/, models/, plots/ and reference/ "
                        "(gpumem info prints the folders in use)"},
    {"GPUMEM_PROFILE_DIR", "a folder searched first for bench profiles, NAME.ini"},
    {"GPUMEM_KERNEL_PROFILE", "1: each phase's device time by kernel, in worker.log and on stderr (a diagnosis: "
                              "it slows the launches it times)"},
    {"CUDA_HOME", "where cuBLAS and cuBLASLt are looked for ($CUDA_HOME/lib64) when their sonames do not load"},
    {"GPUMEM_FAULT, GPUMEM_BACKEND_FAULT", "test-only faults that show the checks failing (docs/development.md)"},
};

int gm_help_man(FILE *f, const gm_command *const *commands)
{
    fprintf(f, ".\\\" gpumem.1, written by `gpumem help --man` from its command and option tables.\n");
    fputs(".TH GPUMEM 1 \"\" \"gpumem ", f);
    roff(f, gm_suite_version());
    fputs("\" \"gpumem manual\"\n.nh\n.ad l\n", f);
    fputs(".SH NAME\ngpumem \\- benchmarks and stress tests for GPU memory pressure in ML workloads\n", f);
    fputs(".SH SYNOPSIS\n", f);
    for (int i = 0; commands[i]; i++)
        if (!commands[i]->hidden)
            usage_lines(f, commands[i]);
    fputs(".SH DESCRIPTION\n", f);
    para(f, "gpumem measures how much device memory is really usable, what each kernel moves per second in each "
            "precision, where each ML workload (a dense layer, attention, a transformer block, a KV cache, a "
            "whole model from its config.json) stops fitting under each way of allocating, and what swapping "
            "to host memory costs, on CUDA and OpenCL devices (with no GPU, on the CPU through PoCL). Every "
            "measured output is verified against a CPU reference. A run writes a folder of tidy CSV (results.csv, "
            "samples.csv, meta.json); gpumem plot draws it and sums it up in report.md and report.html, gpumem "
            "compare judges two runs or more and can fail a CI job on a regression, gpumem stress checks a "
            "device under memory pressure as TAP.");
    para(f, "Each command's options follow its description. An option's text starts with the suites or "
            "workloads it concerns; a profile (--profile) sets bench options by their long names, and the "
            "command line overrides it.");
    fputs(".SH COMMANDS\n", f);
    for (int i = 0; commands[i]; i++) {
        const gm_command *c = commands[i];
        if (c->hidden)
            continue;
        fprintf(f, ".SS \"gpumem %s\"\n", c->name);
        usage_lines(f, c);
        para(f, c->about ? c->about : c->summary);
        if (c->options)
            options(f, c);
        char status[600];
        snprintf(status, sizeof status, "Exit status: %s.", c->exit_status);
        para(f, status);
    }
    fputs(".SH ENVIRONMENT\n", f);
    for (size_t i = 0; i < sizeof environment / sizeof environment[0]; i++) {
        fputs(".TP\n\\fB", f);
        roff(f, environment[i][0]);
        fputs("\\fR\n", f);
        roff(f, environment[i][1]);
        fputc('\n', f);
    }
    fputs(".SH FILES\n", f);
    para(f, "PREFIX/share/gpumem: profiles/NAME.ini (bench profiles), models/NAME.json (model presets), "
            "plots/KIND.gp (plot scripts), reference/NAME/ (runs of real cards, gpumem compare reference:NAME). "
            "PREFIX/share/doc/gpumem: README.md and docs/, the reference of every measurement, the gate's "
            "statistics, fleets, stress checks and the results schema.");
    fputs(".SH SEE ALSO\n", f);
    para(f, "gnuplot(1), prove(1)");
    return ferror(f) ? -1 : 0;
}
