/*
 * The option table: every option of every command is declared once in
 * option_table.c (its long name, argument kind, default, the commands and
 * suites or workloads it belongs to, one help line, and the function that
 * applies it). The command-line parser (gm_option_split), the bench
 * profiles (gm_opts_set, gm_profile_load: keys are the long names) and
 * every command's --help (gm_option_help) are driven by it. To add an
 * option, add its entry there; --help and the parser follow.
 */
#ifndef GM_OPTION_TABLE_H
#define GM_OPTION_TABLE_H

#include "bench/options.h"
#include "bench/model/workload.h"
#include "cli/plan_model.h"
#include "cli/profile_text.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The commands an option belongs to (bits). */
enum {
    GM_CMD_BENCH = 1u << 0,
    GM_CMD_STRESS = 1u << 1,
    GM_CMD_PLAN = 1u << 2,
    GM_CMD_PLOT = 1u << 3,
    GM_CMD_COMPARE = 1u << 4,
    GM_CMD_FLEET = 1u << 5,
};

typedef enum {
    GM_OPTARG_FLAG,     /* no value */
    GM_OPTARG_TEXT,     /* a name or a path */
    GM_OPTARG_NUMBER,   /* a whole number within [min, max] */
    GM_OPTARG_REAL,     /* a real number */
    GM_OPTARG_SIZE,     /* bytes with a unit: 2GiB */
    GM_OPTARG_SHARE,    /* a share: 50% or 0.5 */
    GM_OPTARG_RANGE,    /* values: 4MiB:1GiB:x2, 1:64:+8 or a,b,c */
    GM_OPTARG_LIST,     /* a comma-separated list of allowed names */
    GM_OPTARG_ENUM,     /* one allowed name */
} gm_opt_kind;

/* Which paths a text option's value may be, for shell completion. */
typedef enum {
    GM_FILES_NONE,                /* no path */
    GM_FILES_ANY,                 /* a file or a folder */
    GM_FILES_DIR,                 /* a folder */
} gm_opt_files;

/* What `gpumem stress` runs with. */
typedef struct {
    char backend[16];
    int device;
    unsigned checks;              /* bit per gm_stress_checks entry */
    double duration, fill, throttle;
    uint64_t seed, mem_limit;
    const char *out;
    unsigned hang_timeout;        /* watchdog.h; 0: none */
} gm_stress_args;

/* What `gpumem plan` prints: a workload's tensors (--workload), or without
 * it a whole model's memory (--model PRESET|config.json, plan_model.h). */
typedef struct {
    const gm_workload *workload;  /* NULL until --workload */
    gm_shape shape;
    unsigned precisions;          /* bit (1 << gm_precision) per precision */
    const char *model;            /* --model as given; NULL: none */
    bool seen_batch, seen_seq;    /* given on the command line */
    gm_model_plan_args whole;     /* the whole-model plan's own options */
} gm_plan_args;

/* What plot, compare and fleet read. */
typedef struct {
    const char *out;              /* NULL: none given */
    const char *format;           /* table | markdown | csv */
    double threshold, alpha, outlier_mad;
    bool gate, cards, points;
} gm_report_args;

/* Where a command's options go: the command sets the pointer it has. */
typedef struct {
    gm_bench_opts *bench;
    gm_stress_args *stress;
    gm_plan_args *plan;
    gm_report_args *report;
} gm_opt_dest;

#define GM_OPT_NO_PROFILE 1u      /* command line only: not a profile key */

typedef struct gm_option {
    const char *name;             /* long name, without -- */
    gm_opt_kind kind;
    const char *metavar;          /* what help shows after the name; NULL for flags */
    unsigned commands;            /* GM_CMD_* bits */
    /* The suites or workloads it concerns ("swap", "block"); NULL: the
     * whole command. Help starts the line with it. */
    const char *scope;
    const char *help;
    const char *dflt;             /* the default as help shows it; NULL: none said */
    /* Enumerations and lists: fills names (at most max) with the allowed
     * values, in order, and returns how many. Text: the names to suggest
     * (model presets, profiles), which the option takes besides paths.
     * NULL for other kinds. */
    int (*values)(const char **names, int max);
    gm_opt_files files;           /* what shell completion offers besides values */
    uint64_t min, max;            /* numbers: the bounds (shape options: from shape_opts) */
    unsigned flags;               /* GM_OPT_* */
    /* Validates value and writes it into d. Returns 0, or -1 with one line
     * in err naming the option, the value and what is allowed. */
    int (*apply)(const struct gm_option *opt, gm_opt_dest *d, const char *value, char *err, size_t err_len);
} gm_option;

/* The whole table and its length. */
extern const gm_option gm_option_table[];
extern const size_t gm_option_count;

/* The option `name` of command cmd (a GM_CMD_* bit); NULL if it has none. */
const gm_option *gm_option_find(unsigned cmd, const char *name);

/* Applies opt with value ("" for flags) to d: 0, or -1 with err. */
int gm_option_apply(const gm_option *opt, gm_opt_dest *d, const char *value, char *err, size_t err_len);

/* Writes the allowed values of an enumeration or list, joined by sep, into
 * buf ("" for other kinds). */
void gm_option_allowed(const gm_option *opt, const char *sep, char *buf, size_t len);

/* The options of cmd (GM_CMD_* bits), in table order: the first with *i
 * 0, then each after the one before; NULL after the last. */
const gm_option *gm_option_next(unsigned cmd, size_t *i);

/* What help says of opt: into head its name and argument ("--reps N"),
 * into text its scope, help line, allowed values or bounds and default. */
void gm_option_text(const gm_option *opt, char *head, size_t head_len, char *text, size_t text_len);

/* Prints text from column `col` on, wrapped before column 79, each further
 * line indented to `indent`. */
void gm_help_wrap(FILE *f, const char *text, int col, int indent);

/* The most values an option's list may have. */
#define GM_OPTION_MAX_VALUES 32

/* One of opt's allowed names: its index in opt->values, or -1 with err
 * naming the option and what is allowed. */
int gm_option_parse_enum(const gm_option *opt, const char *value, char *err, size_t err_len);
/* A comma-separated list of opt's allowed names as a bit mask (bit i: the
 * i-th name): 0, or -1 with err. */
int gm_option_parse_names(const gm_option *opt, const char *value, unsigned *mask, char *err, size_t err_len);

/* Prints every option of cmd, in table order, one entry each: the name,
 * its argument, the scope, the help line, the allowed values or bounds
 * and the default. */
void gm_option_help(FILE *f, unsigned cmd);

/* gm_option_text, its default followed by what profile t sets in its
 * place ("(default: 1; profile quick: 1:16:x4, [swap] 1)"); t NULL: as
 * gm_option_text. */
void gm_option_text_profile(const gm_option *opt, gm_profile_text *t, char *head, size_t head_len, char *text,
                            size_t text_len);

/* gm_option_help with gm_option_text_profile's entries. */
void gm_option_help_profile(FILE *f, unsigned cmd, gm_profile_text *t);

/* One argument of a command line: an option with its value, or (opt NULL)
 * a positional argument in value. */
typedef struct {
    const gm_option *opt;
    const char *value;
} gm_cli_arg;

/* Splits argv[1..argc) of command `prog` (its name: "bench") into options
 * of cmd and positional arguments. --name value and --name=value; --help
 * and -h set *help and stop. An option unknown to cmd is reported as
 * "<unknown> '--name'" (e.g. "unknown option"). Returns 0, or 2 with one
 * line printed on stderr. At most max arguments. */
int gm_option_split(const char *prog, unsigned cmd, const char *unknown, int argc, char **argv, gm_cli_arg *out,
                    int max, int *n, bool *help);

#endif
