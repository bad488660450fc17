/* gpumem plan: the memory model of a workload, one tensor a line. */
#include "bench/model/precision_roles.h"
#include "cli/commands.h"
#include "cli/option_table.h"
#include "cli/option_rules.h"
#include "lib/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command as gpumem's list, --help and the man page show it (cli/command.h). */
const gm_command gm_command_plan = {
    .name = "plan",
    .run = gm_cmd_plan,
    .options = GM_CMD_PLAN,
    .summary = "print the memory a workload or a whole model holds, and what fits",
    .usage = "plan --workload W [--model NAME] [SHAPE OPTIONS] [--precision LIST]\n"
        "plan --model PRESET|CONFIG.json|FOLDER [--mode inference|train] [MODEL OPTIONS]",
    .about = "Prints the tensors workload W holds at once (name, role, bytes), one a line, and a last line `total "
        "<bytes>`, for each precision, at the shape options or a --model's. Without --workload: the memory of a "
        "whole model per GPU, grouped by role with subtotals and the total, for each precision (the options marked "
        "`model`, refused with --workload; the shape options are refused without it).",
    .exit_status = "0 success, 2 bad usage or input, 3 no usable device (--fit device)",
    .positional = GM_POSITIONAL_NONE,
};

static void usage(FILE *f)
{
    gm_command_help(f, &gm_command_plan);
}

static void print_plan(const gm_workload *w, const gm_shape *s, const gm_tensor *t, int n)
{
    char size[32];
    printf("# %s %s batch=%llu seq=%llu hidden=%llu heads=%llu head_dim=%llu layers=%llu\n", w->name,
           gm_roles_label(s), (unsigned long long)s->batch, (unsigned long long)s->seq,
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

/* Refuses an option given that concerns nothing this plan is of
 * (option_rules.h): prints the line, returns -1; else 0. */
static int refuse_unapplied(const gm_plan_args *args, const gm_cli_arg *cli, int n)
{
    gm_ask ask = {.whole_model = !args->workload && args->model,
                  .modes = 1u << args->whole.plan.mode,
                  .data_parallel = args->whole.plan.gpus / args->whole.plan.tp,
                  .offload = args->whole.plan.tune.offload,
                  .shape = &args->shape};
    for (int w = 0; args->workload && w < GM_RUNNABLE_WORKLOAD_COUNT; w++)
        if (strcmp(gm_runnable_workloads[w], args->workload->name) == 0)
            ask.workloads = 1u << w;
    char err[700];
    for (int i = 0; i < n; i++)
        if (gm_option_rule_check(cli[i].opt, cli[i].value, GM_CMD_PLAN, &ask, 1, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem plan: %s\n", err);
            return -1;
        }
    return 0;
}

int gm_cmd_plan(int argc, char **argv)
{
    gm_plan_args args = {.shape = {.batch = 1, .seq = 512, .hidden = 768, .heads = 12},
                         .precisions = 1u << GM_FP32,
                         .whole = {.format = GM_PLAN_TEXT}};
    gm_plan_opts_init(&args.whole.plan);
    gm_opt_dest dest = {.plan = &args};
    gm_cli_arg cli[128];
    int n_cli = 0;
    bool help = false;
    char err[400];
    int rc = gm_option_split("plan", GM_CMD_PLAN, "unknown option", argc, argv, cli, 128, &n_cli, &help);
    if (rc || help) {
        if (help)
            usage(stdout);
        return rc;
    }
    for (int i = 0; i < n_cli; i++) {
        if (!cli[i].opt) {
            fprintf(stderr, "gpumem plan: unexpected argument '%s' (see gpumem plan --help)\n", cli[i].value);
            return GM_EXIT_USAGE;
        }
        if (gm_option_apply(cli[i].opt, &dest, cli[i].value, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem plan: %s\n", err);
            return GM_EXIT_USAGE;
        }
    }
    const gm_workload *w = args.workload;
    gm_shape s = args.shape;
    unsigned precisions = args.precisions;
    if (refuse_unapplied(&args, cli, n_cli))
        return GM_EXIT_USAGE;
    if (!w && args.model) {
        gm_model_plan_args m = args.whole;
        m.precisions = precisions;
        m.plan.batch = args.seen_batch ? s.batch : 1;
        m.plan.seq = args.seen_seq ? s.seq : s.arch.context && s.arch.context < 512 ? s.arch.context : 512;
        m.plan.naive = s.naive;
        m.plan.vendor_gemm = s.impl_pick == GM_PICK_VENDOR;
        m.plan.weight_prec = s.weight_prec;
        m.plan.kv_prec = s.kv_prec;
        m.plan.act_prec = s.act_prec;
        m.plan.group_size = s.group_size;
        m.plan.int4_lm_head = s.int4_lm_head;
        m.serve = &s;
        return gm_plan_model_main(args.model, &m);
    }
    if (!w) {
        char allowed[256];
        gm_option_allowed(gm_option_find(GM_CMD_PLAN, "workload"), ", ", allowed, sizeof allowed);
        fprintf(stderr, "gpumem plan: --workload or --model is required (workloads: %s)\n", allowed);
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
        gm_shape_set_roles(&ps, &s, (gm_precision)p);
        char why[300];
        if (gm_roles_check(w->name, ps.prec, gm_weight_prec(&ps), gm_kv_prec(&ps), why, sizeof why)
            || gm_int4_lm_head_check(w->name, &ps, why, sizeof why)) {
            fprintf(stderr, "gpumem plan: %s\n", why);
            return GM_EXIT_USAGE;
        }
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
