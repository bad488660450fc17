/*
 * Reading the option table (option_table.h): lookup, the command-line
 * split, and --help.
 */
#include "cli/option_table.h"

#include "bench/model/shape_opts.h"
#include "lib/exit_codes.h"

#include <string.h>

const gm_option *gm_option_find(unsigned cmd, const char *name)
{
    for (size_t i = 0; i < gm_option_count; i++)
        if ((gm_option_table[i].commands & cmd) && strcmp(gm_option_table[i].name, name) == 0)
            return &gm_option_table[i];
    return NULL;
}

int gm_option_apply(const gm_option *opt, gm_opt_dest *d, const char *value, char *err, size_t err_len)
{
    err[0] = '\0';
    if (opt->apply(opt, d, value, err, err_len) == 0)
        return 0;
    if (!err[0])
        snprintf(err, err_len, "--%s '%.100s': not a valid value", opt->name, value);
    return -1;
}

/* Appends to buf what opt allows, after its help line, and its default
 * (and what profile t sets instead, t not NULL). */
static void describe(const gm_option *opt, char *buf, size_t len, gm_profile_text *t)
{
    char allowed[512];
    size_t used = strlen(buf);
    uint64_t min = opt->min, max = opt->max;
    if (opt->kind == GM_OPTARG_NUMBER && !min && !max)
        gm_shape_bounds(opt->name, &min, &max);
    if (opt->kind == GM_OPTARG_ENUM || opt->kind == GM_OPTARG_LIST) {
        gm_option_allowed(opt, opt->kind == GM_OPTARG_ENUM ? " | " : ", ", allowed, sizeof allowed);
        used += (size_t)snprintf(buf + used, len - used, "%s %s", opt->kind == GM_OPTARG_ENUM ? ": one of"
                                 : ": any of", allowed);
    } else if (opt->values) {       /* a name or a path: the names known */
        gm_option_allowed(opt, ", ", allowed, sizeof allowed);
        used += (size_t)snprintf(buf + used, len - used, " (known: %s)", allowed);
    } else if (opt->kind == GM_OPTARG_NUMBER && max) {
        used += (size_t)snprintf(buf + used, len - used, " (%llu to %llu)", (unsigned long long)min,
                                 (unsigned long long)max);
    }
    const char *set = t && !(opt->flags & GM_OPT_NO_PROFILE) ? gm_profile_says(t, opt->name) : NULL;
    if ((opt->dflt || set) && used < len)
        used += (size_t)snprintf(buf + used, len - used,  " (default: %s%s%s%s%s)",
                                 opt->dflt ? opt->dflt : opt->kind == GM_OPTARG_FLAG ? "off" : "none",
                                 set ? "; profile " : "", set ? t->name : "", set ? ": " : "", set ? set : "");
}

void gm_help_wrap(FILE *f, const char *text, int col, int indent)
{
    while (*text) {
        int room = 79 - col;
        int n = (int)strlen(text);
        if (n > room) {
            n = room;
            while (n > 0 && text[n] != ' ')
                n--;
            if (n == 0)                 /* one long word: break after it */
                n = (int)strcspn(text, " ");
        }
        fprintf(f, "%.*s\n", n, text);
        text += n;
        while (*text == ' ')
            text++;
        if (*text)
            fprintf(f, "%*s", indent, "");
        col = indent;
    }
}

const gm_option *gm_option_next(unsigned cmd, size_t *i)
{
    for (; *i < gm_option_count; (*i)++)
        if (gm_option_table[*i].commands & cmd)
            return &gm_option_table[(*i)++];
    return NULL;
}

void gm_option_text_profile(const gm_option *opt, gm_profile_text *t, char *head, size_t head_len, char *text,
                            size_t text_len)
{
    snprintf(head, head_len, "--%s%s%s", opt->name, opt->metavar ? " " : "", opt->metavar ? opt->metavar : "");
    snprintf(text, text_len, "%s%s%s", opt->scope ? opt->scope : "", opt->scope ? ": " : "", opt->help);
    describe(opt, text, text_len, t);
}

void gm_option_text(const gm_option *opt, char *head, size_t head_len, char *text, size_t text_len)
{
    gm_option_text_profile(opt, NULL, head, head_len, text, text_len);
}

void gm_option_help(FILE *f, unsigned cmd)
{
    gm_option_help_profile(f, cmd, NULL);
}

void gm_option_help_profile(FILE *f, unsigned cmd, gm_profile_text *t)
{
    enum { HELP_COL = 24 };
    size_t i = 0;
    for (const gm_option *opt; (opt = gm_option_next(cmd, &i));) {
        char head[64], text[1024];
        gm_option_text_profile(opt, t, head, sizeof head, text, sizeof text);
        int n = (int)strlen(head) + 2;
        if (n + 1 >= HELP_COL) {
            fprintf(f, "  %s\n%*s", head, HELP_COL, "");
        } else {
            fprintf(f, "  %-*s", HELP_COL - 2, head);
        }
        gm_help_wrap(f, text, HELP_COL, HELP_COL);
    }
}

int gm_option_split(const char *prog, unsigned cmd, const char *unknown, int argc, char **argv, gm_cli_arg *out,
                    int max, int *n, bool *help)
{
    *n = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help = true;
            return 0;
        }
        if (*n >= max) {
            fprintf(stderr, "gpumem %s: too many arguments (at most %d)\n", prog, max);
            return GM_EXIT_USAGE;
        }
        if (arg[0] != '-') {
            out[*n].opt = NULL;
            out[(*n)++].value = arg;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0 || !arg[2]) {
            fprintf(stderr, "gpumem %s: unexpected argument '%s' (options start with --)\n", prog, arg);
            return GM_EXIT_USAGE;
        }
        char name[64];
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        const gm_option *opt = NULL;
        if (len < sizeof name) {
            memcpy(name, arg + 2, len);
            name[len] = '\0';
            opt = gm_option_find(cmd, name);
        }
        if (!opt) {
            fprintf(stderr, "gpumem %s: %s '%s' (see gpumem %s --help)\n", prog, unknown,
                    len < sizeof name ? (snprintf(name, sizeof name, "--%.*s", (int)len, arg + 2), name) : arg,
                    prog);
            return GM_EXIT_USAGE;
        }
        const char *value = "";
        bool takes = opt->kind != GM_OPTARG_FLAG;
        if (takes && eq)
            value = eq + 1;
        else if (takes && i + 1 < argc)
            value = argv[++i];
        else if (takes) {
            fprintf(stderr, "gpumem %s: option '--%s' needs a value\n", prog, opt->name);
            return GM_EXIT_USAGE;
        } else if (eq) {
            fprintf(stderr, "gpumem %s: option '--%s' takes no value\n", prog, opt->name);
            return GM_EXIT_USAGE;
        }
        out[*n].opt = opt;
        out[(*n)++].value = value;
    }
    return 0;
}
