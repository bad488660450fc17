/* gpumem plan: the memory model of a workload, one tensor a line. */
#include "cli/commands.h"
#include "bench/shape_opts.h"
#include "lib/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpumem plan --workload W [--model NAME] [SHAPE OPTIONS] [--precision LIST]\n"
            "\n"
            "Prints the tensors workload W holds at once (name, role, bytes), one a line,\n"
            "and a last line `total <bytes>`, for each precision.\n"
            "\n"
            "  --workload W       linear | attention | block | kvcache\n"
            "  --model NAME       a shape from share/models.ini (gpt-125m, llama-1b, llama-7b)\n"
            "  --batch N --seq N --hidden N --heads N --head-dim N --layers N\n"
            "  --out-features N (linear)  --ffn N --micro-batch N --checkpoint (block)\n"
            "  --variant naive|tiled (attention, block)  --paged --block-tokens N (kvcache)\n"
            "  --precision LIST   fp32,fp16,bf16,int8 (default fp32)\n");
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
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            usage(stdout);
            return GM_EXIT_OK;
        }
        const char *name = strncmp(arg, "--", 2) == 0 ? arg + 2 : NULL;
        int takes = !name ? -1
                    : (!strcmp(name, "workload") || !strcmp(name, "precision")) ? 1
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
        } else if (gm_shape_set(&s, name, value, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem plan: %s\n", err);
            return GM_EXIT_USAGE;
        }
    }
    if (!w) {
        fprintf(stderr, "gpumem plan: --workload is required (linear, attention, block, kvcache)\n");
        return GM_EXIT_USAGE;
    }
    bool uses_heads = w->uses_heads;
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
