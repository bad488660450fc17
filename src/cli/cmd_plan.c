/* gpumem plan: the memory model of a workload, one tensor a line. */
#include "cli/commands.h"
#include "bench/shape_opts.h"
#include "cli/plan_model.h"
#include "lib/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpumem plan --workload W [--model NAME] [SHAPE OPTIONS] [--precision LIST]\n"
            "       gpumem plan --model PRESET|CONFIG.json [--mode inference|train] [MODEL OPTIONS]\n"
            "\n"
            "Prints the tensors workload W holds at once (name, role, bytes), one a line,\n"
            "and a last line `total <bytes>`, for each precision.\n"
            "\n"
            "  --workload W       linear | attention | block | kvcache\n"
            "  --model NAME       a shape from share/models.ini (gpt-125m, llama-1b, llama-7b)\n"
            "  --batch N --seq N --hidden N --heads N --head-dim N --layers N\n"
            "  --out-features N (linear)  --ffn N --micro-batch N --checkpoint (block)\n"
            "  --variant naive|tiled (attention, block)  --paged --block-tokens N (kvcache)\n"
            "  --precision LIST   fp32,fp16,bf16,int8 (default fp32)\n"
            "\n"
            "Without --workload: the memory of a whole model per GPU, grouped by role with\n"
            "subtotals and the total, for each precision. --model takes a preset of\n"
            "share/models/ (gpt2, llama-2-7b, llama-3-8b, mistral-7b, mixtral-8x7b,\n"
            "tiny-llama-gqa, tiny-gpt2) or the path of a Hugging Face config.json.\n"
            "  --batch N --seq N  batch per data-parallel rank (default 1), tokens (512)\n"
            "  --mode M           inference (weights, KV cache, live layer, logits) | train\n"
            "  --logits all|last  inference: logits of every position or the last (last)\n"
            "  --variant V        attention: tiled (keeps row statistics; default) | naive (s x s)\n"
            "  --optimizer O      train: adamw | adamw-8bit | sgd | sgd-momentum (adamw)\n"
            "  --recompute R      train: none | selective | full (none)\n"
            "  --gpus N --tensor-parallel T --zero 0|1|2|3   bytes per GPU (1, 1, 0)\n"
            "  --format F         text | csv | json (text)\n"
            "  --fit SIZE|device  the largest batch at --seq and the largest seq at --batch\n"
            "                     that fit in SIZE (or the best device's free memory)\n");
}

/* Options of the whole-model plan (plan_model.h); all take a value. */
static bool is_model_option(const char *name)
{
    static const char *const names[] = {"mode", "logits", "optimizer", "recompute", "gpus",
                                        "tensor-parallel", "zero", "format", "fit"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

/* The index of value in the NULL-terminated list, or -1. */
static int pick(const char *value, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(value, list[i]))
            return i;
    return -1;
}

static int parse_count(const char *value, uint64_t max, uint64_t *out)
{
    char why[160];
    return gm_parse_uint(value, max, out, why, sizeof why) != 0 || *out < 1 ? -1 : 0;
}

/* One line naming the option, the value and what is allowed; exit 2. */
static int bad_value(const char *arg, const char *value, const char *allowed)
{
    fprintf(stderr, "gpumem plan: %s '%s': expected %s\n", arg, value, allowed);
    return GM_EXIT_USAGE;
}

static void print_plan(const gm_workload *w, const gm_shape *s, const gm_tensor *t, int n)
{
    char size[32];
    printf("# %s %s batch=%llu seq=%llu hidden=%llu heads=%llu head_dim=%llu layers=%llu\n", w->name,
           gm_precision_name(s->prec), (unsigned long long)s->batch, (unsigned long long)s->seq,
           (unsigned long long)s->hidden, (unsigned long long)s->heads, (unsigned long long)s->head_dim,
           (unsigned long long)s->layers);
    if (strcmp(w->name, "block") == 0)
        printf("# ffn=%llu micro_batch=%llu%s%s\n", (unsigned long long)s->ffn, (unsigned long long)s->micro_batch,
               s->checkpoint ? " checkpoint" : "", s->causal ? " causal" : "");
    for (int i = 0; i < n; i++)
        printf("%-22s %-10s %14llu  %s\n", t[i].name, gm_tensor_role_name(t[i].role),
               (unsigned long long)t[i].bytes, gm_format_size(t[i].bytes, size, sizeof size));
    uint64_t total = gm_tensors_total(t, n);
    printf("total %llu\n", (unsigned long long)total);
}

int gm_cmd_plan(int argc, char **argv)
{
    gm_shape s = {0};
    s.batch = 1;
    s.seq = 512;
    s.hidden = 768;
    s.heads = 12;
    unsigned precisions = 1u << GM_FP32;
    const gm_workload *w = NULL;
    char err[400];
    /* Whole-model plan (no --workload): its options, one branch each below. */
    const char *model = NULL;
    char model_err[400] = "";
    gm_model_plan_args m = {.format = GM_PLAN_TEXT};
    gm_plan_opts_init(&m.plan);
    bool seen_batch = false, seen_seq = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            usage(stdout);
            return GM_EXIT_OK;
        }
        const char *name = strncmp(arg, "--", 2) == 0 ? arg + 2 : NULL;
        int takes = !name ? -1
                    : (!strcmp(name, "workload") || !strcmp(name, "precision")) ? 1
                    : is_model_option(name)                                     ? 1
                                                                                : gm_shape_takes_value(name);
        if (takes < 0) {
            fprintf(stderr, "gpumem plan: unknown option '%s' (see gpumem plan --help)\n", arg);
            return GM_EXIT_USAGE;
        }
        if (takes && i + 1 >= argc) {
            fprintf(stderr, "gpumem plan: option '%s' needs a value\n", arg);
            return GM_EXIT_USAGE;
        }
        const char *value = takes ? argv[++i] : "";
        seen_batch |= !strcmp(name, "batch");
        seen_seq |= !strcmp(name, "seq");
        if (!strcmp(name, "workload")) {
            w = gm_workload_find(value);
            if (!w) {
                fprintf(stderr, "gpumem plan: --workload: unknown workload '%s' (allowed: linear, attention, block, kvcache)\n",
                        value);
                return GM_EXIT_USAGE;
            }
        } else if (!strcmp(name, "precision")) {
            precisions = 0;
            char buf[128];
            snprintf(buf, sizeof buf, "%s", value);
            char *save = NULL;
            for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                int p = gm_precision_parse(tok);
                if (p < 0) {
                    fprintf(stderr, "gpumem plan: --precision: unknown value '%s' (allowed: fp32,fp16,bf16,int8)\n", tok);
                    return GM_EXIT_USAGE;
                }
                precisions |= 1u << p;
            }
        } else if (!strcmp(name, "model")) {
            /* A models.ini shape for --workload, else a preset or config.json. */
            model = value;
            model_err[0] = '\0';
            gm_shape_set(&s, name, value, model_err, sizeof model_err);
        } else if (!strcmp(name, "mode")) {
            if (strcmp(value, "inference") && strcmp(value, "train"))
                return bad_value(arg, value, "inference, train");
            m.plan.mode = strcmp(value, "train") == 0 ? GM_PLAN_TRAIN : GM_PLAN_INFERENCE;
        } else if (!strcmp(name, "logits")) {
            if (strcmp(value, "all") && strcmp(value, "last"))
                return bad_value(arg, value, "all, last");
            m.plan.logits_all = strcmp(value, "all") == 0;
        } else if (!strcmp(name, "optimizer")) {
            int k = pick(value, (const char *const[]){"adamw", "adamw-8bit", "sgd", "sgd-momentum", NULL});
            if (k < 0)
                return bad_value(arg, value, "adamw, adamw-8bit, sgd, sgd-momentum");
            m.plan.optimizer = (gm_optimizer)k;
        } else if (!strcmp(name, "recompute")) {
            int k = pick(value, (const char *const[]){"none", "selective", "full", NULL});
            if (k < 0)
                return bad_value(arg, value, "none, selective, full");
            m.plan.recompute = (gm_recompute)k;
        } else if (!strcmp(name, "gpus")) {
            if (parse_count(value, 1u << 20, &m.plan.gpus) != 0)
                return bad_value(arg, value, "a whole number from 1 to 1048576");
        } else if (!strcmp(name, "tensor-parallel")) {
            if (parse_count(value, 4096, &m.plan.tp) != 0)
                return bad_value(arg, value, "a whole number from 1 to 4096");
        } else if (!strcmp(name, "zero")) {
            int k = pick(value, (const char *const[]){"0", "1", "2", "3", NULL});
            if (k < 0)
                return bad_value(arg, value, "0, 1, 2, 3");
            m.plan.zero = k;
        } else if (!strcmp(name, "format")) {
            int k = pick(value, (const char *const[]){"text", "csv", "json", NULL});
            if (k < 0)
                return bad_value(arg, value, "text, csv, json");
            m.format = (gm_plan_format)k;
        } else if (!strcmp(name, "fit")) {
            m.fit = true;
            m.fit_device = strcmp(value, "device") == 0;
            char why[160];
            if (!m.fit_device && (gm_parse_size(value, &m.fit_bytes, why, sizeof why) != 0 || m.fit_bytes == 0))
                return bad_value(arg, value, "a size such as 24GiB, or device");
        } else if (gm_shape_set(&s, name, value, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem plan: %s\n", err);
            return GM_EXIT_USAGE;
        }
    }
    if (!w && model) {
        m.precisions = precisions;
        m.plan.batch = seen_batch ? s.batch : 1;
        m.plan.seq = seen_seq ? s.seq : 512;
        m.plan.naive = s.naive;
        return gm_plan_model_main(model, &m);
    }
    if (!w) {
        fprintf(stderr, "gpumem plan: --workload or --model is required (workloads: linear, attention, block, kvcache)\n");
        return GM_EXIT_USAGE;
    }
    if (model_err[0]) {
        fprintf(stderr, "gpumem plan: %s\n", model_err);
        return GM_EXIT_USAGE;
    }
    bool uses_heads = strcmp(w->name, "linear") != 0;
    if (uses_heads && s.hidden && s.heads && s.hidden % s.heads) {
        fprintf(stderr, "gpumem plan: --hidden %llu is not a multiple of --heads %llu\n",
                (unsigned long long)s.hidden, (unsigned long long)s.heads);
        return GM_EXIT_USAGE;
    }
    gm_shape_complete(&s);
    for (int p = 0; p < GM_PREC_COUNT; p++) {
        if (!(precisions & (1u << p)))
            continue;
        gm_shape ps = s;
        ps.prec = (gm_precision)p;
        gm_tensor t[GM_MAX_TENSORS];
        int n = w->tensors(&ps, t);
        if (n < 0) {
            fprintf(stderr, "gpumem plan: the shape is too large to count (bytes overflow 64 bits)\n");
            return GM_EXIT_USAGE;
        }
        print_plan(w, &ps, t, n);
    }
    return GM_EXIT_OK;
}
