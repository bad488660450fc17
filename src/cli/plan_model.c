/* Printing a model's memory plan (src/cli/plan_model.h). */
#include "cli/plan_model.h"

#include "bench/model/precision_roles.h"
#include "bench/model/train_plan.h"

#include "device/select.h"
#include "lib/exit_codes.h"
#include "lib/host_memory.h"
#include "lib/units.h"
#include "report/report_figures.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const optim_names[] = {"adamw", "adamw-8bit", "sgd", "sgd-momentum"};
static const char *const recompute_names[] = {"none", "selective", "full"};

typedef struct {
    gm_precision prec;
    gm_plan_item items[GM_PLAN_MAX_ITEMS];
    int n;
    uint64_t subtotal[GM_PLAN_ROLE_COUNT];
    uint64_t total;         /* on the device */
    uint64_t host_total;    /* in host memory (--zero-offload) */
    uint64_t max_batch, max_seq;
    uint64_t min_total;     /* at batch 1, seq 1: what nothing less needs */
} plan_result;

/* The attention the plan counts: naive, tiled, or the vendor path's
 * (GEMMs over score chunks where the precisions allow). */
static const char *attention_name(const gm_plan_opts *o)
{
    return o->naive ? "naive" : o->vendor_gemm ? "vendor" : "tiled";
}

static void print_text_header(const gm_arch *a, const gm_plan_opts *o)
{
    printf("# model %s (%s): %llu parameters", a->name, a->model_type, (unsigned long long)gm_arch_params(a));
    if (a->experts)
        printf(", %llu active per token", (unsigned long long)gm_arch_active_params(a));
    printf("; L=%llu h=%llu a=%llu k=%llu d=%llu I=%llu V=%llu", (unsigned long long)a->layers,
           (unsigned long long)a->hidden, (unsigned long long)a->heads, (unsigned long long)a->kv_heads,
           (unsigned long long)a->head_dim, (unsigned long long)a->ffn, (unsigned long long)a->vocab);
    if (a->experts)
        printf(" experts=%llu/%llu", (unsigned long long)a->experts_per_token, (unsigned long long)a->experts);
    if (a->sliding_window)
        printf(" sliding_window=%llu on %llu of %llu layers", (unsigned long long)a->sliding_window,
               (unsigned long long)a->sliding_layers, (unsigned long long)a->layers);
    printf("\n");
    (void)o;
}

static gm_precision role_of(unsigned role, gm_precision p)
{
    return role ? (gm_precision)(role - 1) : p;
}

static size_t kv_size(const gm_plan_opts *o, const plan_result *r)
{
    return gm_precision_size(role_of(o->kv_prec, r->prec));
}

/* The plan's precision as the rows of a bench name it: "bf16", or with
 * its roles where they differ ("bf16-wint4-kvfp8e4m3", "-lmint4" after
 * them for an int4 LM head). */
static const char *label(const gm_arch *a, const gm_plan_opts *o, const plan_result *r)
{
    gm_shape s = {0};
    s.prec = role_of(o->act_prec, r->prec);
    s.weight_prec = (unsigned)role_of(o->weight_prec, r->prec) + 1;
    s.kv_prec = (unsigned)role_of(o->kv_prec, r->prec) + 1;
    s.arch = *a;
    s.int4_lm_head = o->int4_lm_head;
    return gm_roles_label(&s);
}

/* The LM head's precision: int4 with --int4-lm-head, else the weights'
 * but for int4 weights, which leave it in the activations' precision. */
static gm_precision lm_head_prec(const gm_plan_opts *o, const plan_result *r)
{
    gm_precision w = role_of(o->weight_prec, r->prec);
    return w == GM_INT4 && !o->int4_lm_head ? role_of(o->act_prec, r->prec) : w;
}

static const char *const offload_names[] = {"none", "optimizer", "params"};
static const char *const saved_names[] = {"gpumem", "pytorch"};

/* The adapted projections, comma separated ("q,k,v,o,gate,up,down"). */
static const char *targets_text(const gm_arch *a, const gm_plan_opts *o, char *buf, size_t len)
{
    unsigned t = gm_lora_targets(a, &o->tune);
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < GM_LORA_TARGET_COUNT && k < len; i++)
        if (t & (1u << i))
            k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? "," : "", gm_lora_target_names[i]);
    return buf;
}

static bool lora_mode(const gm_plan_opts *o) { return o->mode == GM_PLAN_LORA || o->mode == GM_PLAN_QLORA; }

static const char *adapter_prec_name(const gm_plan_opts *o)
{
    return gm_precision_name(o->tune.adapter_prec ? (gm_precision)(o->tune.adapter_prec - 1) : GM_FP32);
}

/* The training line's settings after "optimizer=... zero=N". */
static void print_tune_settings(const gm_arch *a, const gm_plan_opts *o)
{
    char targets[80];
    if (lora_mode(o))
        printf(" rank=%llu alpha=%g targets=%s adapters=%s adapter_params=%llu", (unsigned long long)gm_lora_rank(&o->tune),
               gm_lora_alpha(&o->tune), targets_text(a, o, targets, sizeof targets), adapter_prec_name(o),
               (unsigned long long)gm_lora_params(a, &o->tune));
    printf(" offload=%s saved=%s\n", offload_names[o->tune.offload], saved_names[o->tune.saved]);
}

static void print_text(const gm_arch *a, const gm_plan_opts *o, const plan_result *r, const gm_model_plan_args *args)
{
    char size[32], size2[32];
    printf("# kv_bytes_per_token %llu\n", (unsigned long long)gm_arch_kv_bytes_per_token(a, kv_size(o, r)));
    if (o->weight_prec || o->kv_prec || o->act_prec)
        printf("# roles weights=%s lm_head=%s kv_cache=%s activations=%s group_size=%llu\n",
               gm_precision_name(role_of(o->weight_prec, r->prec)), gm_precision_name(lm_head_prec(o, r)),
               gm_precision_name(role_of(o->kv_prec, r->prec)), gm_precision_name(role_of(o->act_prec, r->prec)),
               (unsigned long long)(o->group_size ? o->group_size : 128));
    printf("# %s %s batch=%llu seq=%llu gpus=%llu tp=%llu attention=%s", gm_plan_mode_names[o->mode],
           label(a, o, r), (unsigned long long)o->batch, (unsigned long long)o->seq,
           (unsigned long long)o->gpus, (unsigned long long)o->tp, attention_name(o));
    if (gm_plan_trains(o->mode)) {
        printf(" optimizer=%s recompute=%s zero=%d", optim_names[o->optimizer], recompute_names[o->recompute],
               o->zero);
        print_tune_settings(a, o);
    } else
        printf(" logits=%s\n", o->logits_all ? "all" : "last");
    for (int role = 0; role < GM_PLAN_ROLE_COUNT; role++) {
        int count = 0;
        for (int i = 0; i < r->n; i++) {
            if ((int)r->items[i].role != role || r->items[i].host)
                continue;
            count++;
            printf("%-12s %-22s %16llu  %s\n", gm_plan_role_name(role), r->items[i].name,
                   (unsigned long long)r->items[i].bytes, gm_format_size(r->items[i].bytes, size, sizeof size));
        }
        if (count)
            printf("%-12s %-22s %16llu  %s\n", "subtotal", gm_plan_role_name(role), (unsigned long long)r->subtotal[role],
                   gm_format_size(r->subtotal[role], size, sizeof size));
    }
    printf("total %llu  %s\n", (unsigned long long)r->total, gm_format_size(r->total, size, sizeof size));
    for (int i = 0; i < r->n; i++)
        if (r->items[i].host)
            printf("host %-7s %-22s %16llu  %s\n", gm_plan_role_name(r->items[i].role), r->items[i].name,
                   (unsigned long long)r->items[i].bytes, gm_format_size(r->items[i].bytes, size, sizeof size));
    if (r->host_total)
        printf("host_total %llu  %s\n", (unsigned long long)r->host_total,
               gm_format_size(r->host_total, size, sizeof size));
    if (args->fit) {
        printf("fit %s %s: max_batch %llu at seq %llu; max_seq %llu at batch %llu\n",
               gm_format_size(args->fit_bytes, size, sizeof size), label(a, o, r),
               (unsigned long long)r->max_batch, (unsigned long long)o->seq, (unsigned long long)r->max_seq,
               (unsigned long long)o->batch);
        if (r->max_batch == 0 && r->max_seq == 0)
            printf("fit %s %s: nothing fits: %s at batch 1, seq 1\n", gm_format_size(args->fit_bytes, size, sizeof size),
                   label(a, o, r), gm_format_size(r->min_total, size2, sizeof size2));
    }
}

/* CSV: tidy, one figure a row: precision,kind,name,value,unit. kind is a
 * role, "subtotal", "total" or "fit". */
static void print_csv(const gm_arch *a, const gm_plan_opts *o, const plan_result *r, const gm_model_plan_args *args)
{
    const char *p = label(a, o, r);
    for (int i = 0; i < r->n; i++)
        printf("%s,%s%s,%s,%llu,bytes\n", p, r->items[i].host ? "host_" : "", gm_plan_role_name(r->items[i].role),
               r->items[i].name, (unsigned long long)r->items[i].bytes);
    for (int role = 0; role < GM_PLAN_ROLE_COUNT; role++)
        if (r->subtotal[role])
            printf("%s,subtotal,%s,%llu,bytes\n", p, gm_plan_role_name(role), (unsigned long long)r->subtotal[role]);
    printf("%s,total,total,%llu,bytes\n", p, (unsigned long long)r->total);
    if (r->host_total)
        printf("%s,total,host_total,%llu,bytes\n", p, (unsigned long long)r->host_total);
    if (args->fit) {
        printf("%s,fit,budget,%llu,bytes\n", p, (unsigned long long)args->fit_bytes);
        printf("%s,fit,max_batch,%llu,batch\n", p, (unsigned long long)r->max_batch);
        printf("%s,fit,max_seq,%llu,tokens\n", p, (unsigned long long)r->max_seq);
    }
    (void)o;
}

static json_t *json_plan(const gm_arch *a, const gm_plan_opts *o, const plan_result *r, const gm_model_plan_args *args)
{
    json_t *items = json_array(), *sub = json_object();
    for (int i = 0; i < r->n; i++)
        json_array_append_new(items, json_pack("{s:s,s:s,s:I,s:b}", "role", gm_plan_role_name(r->items[i].role),
                                               "name", r->items[i].name, "bytes", (json_int_t)r->items[i].bytes,
                                               "host", r->items[i].host));
    for (int role = 0; role < GM_PLAN_ROLE_COUNT; role++)
        if (r->subtotal[role])
            json_object_set_new(sub, gm_plan_role_name(role), json_integer((json_int_t)r->subtotal[role]));
    json_t *j = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:i,s:s,s:o,s:o,s:I}", "precision", label(a, o, r),
                          "mode", gm_plan_mode_names[o->mode], "batch", (json_int_t)o->batch, "seq", (json_int_t)o->seq,
                          "gpus", (json_int_t)o->gpus, "tensor_parallel", (json_int_t)o->tp, "zero", o->zero,
                          "attention", attention_name(o), "items", items, "subtotals", sub, "total",
                          (json_int_t)r->total);
    json_object_set_new(j, "kv_bytes_per_token",
                        json_integer((json_int_t)gm_arch_kv_bytes_per_token(a, kv_size(o, r))));
    if (gm_plan_trains(o->mode)) {
        char targets[80];
        json_object_set_new(j, "optimizer", json_string(optim_names[o->optimizer]));
        json_object_set_new(j, "recompute", json_string(recompute_names[o->recompute]));
        json_object_set_new(j, "offload", json_string(offload_names[o->tune.offload]));
        json_object_set_new(j, "saved", json_string(saved_names[o->tune.saved]));
        json_object_set_new(j, "host_total", json_integer((json_int_t)r->host_total));
        if (lora_mode(o))
            json_object_set_new(j, "lora", json_pack("{s:I,s:f,s:s,s:s,s:I}", "rank", (json_int_t)gm_lora_rank(&o->tune),
                                                     "alpha", gm_lora_alpha(&o->tune), "targets",
                                                     targets_text(a, o, targets, sizeof targets), "adapter_precision",
                                                     adapter_prec_name(o), "adapter_params",
                                                     (json_int_t)gm_lora_params(a, &o->tune)));
    } else {
        json_object_set_new(j, "logits", json_string(o->logits_all ? "all" : "last"));
        json_object_set_new(j, "weight_precision", json_string(gm_precision_name(role_of(o->weight_prec, r->prec))));
        json_object_set_new(j, "lm_head_precision", json_string(gm_precision_name(lm_head_prec(o, r))));
        json_object_set_new(j, "kv_precision", json_string(gm_precision_name(role_of(o->kv_prec, r->prec))));
        json_object_set_new(j, "activation_precision", json_string(gm_precision_name(role_of(o->act_prec, r->prec))));
        if (role_of(o->weight_prec, r->prec) == GM_INT4)
            json_object_set_new(j, "group_size", json_integer((json_int_t)(o->group_size ? o->group_size : 128)));
    }
    if (args->fit)
        json_object_set_new(j, "fit",
                            json_pack("{s:I,s:I,s:I,s:I,s:I}", "budget", (json_int_t)args->fit_bytes, "max_batch",
                                      (json_int_t)r->max_batch, "at_seq", (json_int_t)o->seq, "max_seq",
                                      (json_int_t)r->max_seq, "at_batch", (json_int_t)o->batch));
    if (args->fit_run)
        json_object_set_new(json_object_get(j, "fit"), "measured_by", json_string(args->fit_run));
    return j;
}

/* The best device's free memory, for --fit device. */
static int device_budget(uint64_t *out)
{
    gm_device dev;
    char err[400];
    int rc = gm_select_device("auto", -1, &dev, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "gpumem plan: --fit device: %s\n", err);
        return rc;
    }
    uint64_t total = 0;
    gm_status st = gm_device_mem_info(&dev, out, &total);
    gm_device_close(&dev);
    if (st != GM_OK) {
        fprintf(stderr, "gpumem plan: --fit device: the device does not report its free memory\n");
        return GM_EXIT_DEVICE;
    }
    return 0;
}

/* The usable memory run folder `run` measured (the report's figure:
 * report_figures.h), for --fit RUN; `how` says where it comes from. */
static int run_budget(const char *run, uint64_t *out, char *how, size_t how_len)
{
    char csv[4200], err[600], cap[32];
    gm_plot_data d;
    snprintf(csv, sizeof csv, "%s/results.csv", run);
    if (gm_plot_data_load(csv, &d, err, sizeof err) != 0) {
        fprintf(stderr, "gpumem plan: --fit %s: %s\n", run, err);
        return GM_EXIT_USAGE;
    }
    gm_report_figures *f = malloc(sizeof *f);
    if (f)
        gm_report_figures_collect(&d, run, f);
    gm_plot_data_free(&d);
    int rc = f && f->has_usable ? 0 : GM_EXIT_USAGE;
    if (!f)
        fprintf(stderr, "gpumem plan: out of memory\n");
    else if (rc)
        fprintf(stderr, "gpumem plan: --fit %s: the run measured no usable memory (no ok largest_total row of the "
                        "oom suite: bench with --suite oom)\n", run);
    else {
        *out = f->usable;
        snprintf(how, how_len, "the usable memory %s measured (the oom suite's largest total%s%s)", run,
                 f->cap ? ", under its cap of " : "", f->cap ? gm_format_size(f->cap, cap, sizeof cap) : "");
    }
    free(f);
    return rc;
}

int gm_plan_model_main(const char *model, const gm_model_plan_args *in)
{
    gm_arch a;
    char err[600];
    int rc = gm_arch_load(model, &a, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "gpumem plan: %s\n", err);
        return GM_EXIT_USAGE;
    }
    gm_model_plan_args args = *in;
    char budget_how[4400] = "";
    if (args.fit && args.fit_device && (rc = device_budget(&args.fit_bytes)) != 0)
        return rc;
    if (args.fit && args.fit_run && (rc = run_budget(args.fit_run, &args.fit_bytes, budget_how, sizeof budget_how)) != 0)
        return rc;
    const char *mode = gm_plan_mode_names[args.plan.mode];
    if (gm_plan_trains(args.plan.mode) && (args.precisions & (1u << GM_INT8))) {
        /* Every precision but int8 and int4 (a weight precision only) trains. */
        char trains[160] = "";
        for (int p = 0, n = 0; p < GM_PREC_COUNT; p++)
            if (p != GM_INT8 && p != GM_INT4)
                n += snprintf(trains + n, sizeof trains - (size_t)n, "%s%s", n ? ", " : "",
                              gm_precision_name((gm_precision)p));
        fprintf(stderr, "gpumem plan: --precision int8 with --mode %s: training keeps its weights in one of %s\n",
                mode, trains);
        return GM_EXIT_USAGE;
    }
    if (gm_plan_trains(args.plan.mode)
        && ((args.plan.weight_prec && args.plan.mode != GM_PLAN_QLORA) || args.plan.kv_prec || args.plan.act_prec)) {
        fprintf(stderr, "gpumem plan: --weight-precision, --kv-precision and --activation-precision are for "
                "--mode inference (training: --precision; QLoRA's base: --weight-precision int4)\n");
        return GM_EXIT_USAGE;
    }
    if (gm_plan_tune_check(&a, &args.plan, err, sizeof err)) {
        fprintf(stderr, "gpumem plan: %s\n", err);
        return GM_EXIT_USAGE;
    }
    gm_shape head = {.prec = GM_FP32, .weight_prec = args.plan.weight_prec, .arch = a,
                     .int4_lm_head = args.plan.int4_lm_head};
    if (gm_int4_lm_head_check(NULL, &head, err, sizeof err)) {
        fprintf(stderr, "gpumem plan: %s\n", err);
        return GM_EXIT_USAGE;
    }
    if (args.plan.gpus % args.plan.tp) {
        fprintf(stderr, "gpumem plan: --tensor-parallel %llu does not divide --gpus %llu\n",
                (unsigned long long)args.plan.tp, (unsigned long long)args.plan.gpus);
        return GM_EXIT_USAGE;
    }
    if (args.plan.tp > a.kv_heads || a.kv_heads % args.plan.tp) {
        fprintf(stderr, "gpumem plan: --tensor-parallel %llu does not divide the model's %llu KV heads\n",
                (unsigned long long)args.plan.tp, (unsigned long long)a.kv_heads);
        return GM_EXIT_USAGE;
    }
    if (args.plan.mode != GM_PLAN_SERVE && a.context && args.plan.seq > a.context) {
        fprintf(stderr, "gpumem plan: --seq %llu: longer than %s's context, %llu tokens (max_position_embeddings)\n",
                (unsigned long long)args.plan.seq, a.name, (unsigned long long)a.context);
        return GM_EXIT_USAGE;
    }
    if (args.plan.mode == GM_PLAN_SERVE) {
        if (args.format == GM_PLAN_TEXT)
            print_text_header(&a, &args.plan);
        return gm_plan_serve_print(&a, &args, args.fit ? args.fit_bytes : 0);
    }
    json_t *plans = args.format == GM_PLAN_JSON ? json_array() : NULL;
    bool started = false;   /* the header waits for the first plan: a refused one prints nothing */
    for (int p = 0; p < GM_PREC_COUNT; p++) {
        if (!(args.precisions & (1u << p)))
            continue;
        gm_plan_opts o = args.plan;
        o.prec = (gm_precision)p;
        plan_result r = {.prec = o.prec};
        r.n = gm_plan_model(&a, &o, r.items);
        if (r.n < 0) {
            fprintf(stderr, "gpumem plan: inconsistent options for --model %s\n", model);
            json_decref(plans);
            return GM_EXIT_USAGE;
        }
        for (int role = 0; role < GM_PLAN_ROLE_COUNT; role++) {
            gm_plan_item group[GM_PLAN_MAX_ITEMS];
            int k = 0;
            for (int i = 0; i < r.n; i++)
                if ((int)r.items[i].role == role)
                    group[k++] = r.items[i];
            r.subtotal[role] = gm_plan_sum(group, k);
        }
        r.total = gm_plan_sum(r.items, r.n);
        r.host_total = gm_plan_host_sum(r.items, r.n);
        if (r.total == UINT64_MAX || r.host_total == UINT64_MAX) {
            fprintf(stderr, "gpumem plan: the shape is too large to count (bytes overflow 64 bits)\n");
            json_decref(plans);
            return GM_EXIT_USAGE;
        }
        uint64_t host = args.host_bytes ? args.host_bytes : gm_host_mem_total();
        if (r.host_total > host) {
            char need[32], have[32];
            fprintf(stderr, "gpumem plan: --zero-offload %s: the host would hold %s of %s's training state but has "
                    "%s of memory%s\n", offload_names[o.tune.offload], gm_format_size(r.host_total, need, sizeof need),
                    a.name, gm_format_size(host, have, sizeof have),
                    args.host_bytes ? "" : " (--host-memory SIZE plans for another host)");
            json_decref(plans);
            return GM_EXIT_USAGE;
        }
        if (args.fit) {
            gm_plan_fit(&a, &o, args.fit_bytes, &r.max_batch, &r.max_seq);
            gm_plan_opts one = o;
            one.batch = one.seq = 1;
            gm_plan_item it[GM_PLAN_MAX_ITEMS];
            r.min_total = gm_plan_sum(it, gm_plan_model(&a, &one, it));
        }
        if (!started && args.format == GM_PLAN_TEXT) {
            print_text_header(&a, &args.plan);
            if (budget_how[0]) {
                char size[32];
                printf("# fit budget %s: %s\n", gm_format_size(args.fit_bytes, size, sizeof size), budget_how);
            }
        } else if (!started && args.format == GM_PLAN_CSV)
            printf("precision,kind,name,value,unit\n");
        started = true;
        if (args.format == GM_PLAN_TEXT)
            print_text(&a, &o, &r, &args);
        else if (args.format == GM_PLAN_CSV)
            print_csv(&a, &o, &r, &args);
        else
            json_array_append_new(plans, json_plan(&a, &o, &r, &args));
    }
    if (plans) {
        json_t *doc = json_pack("{s:s,s:s,s:I,s:I,s:o}", "model", a.name, "model_type", a.model_type, "parameters",
                                (json_int_t)gm_arch_params(&a), "active_parameters", (json_int_t)gm_arch_active_params(&a),
                                "plans", plans);
        char *text = json_dumps(doc, JSON_INDENT(2));
        puts(text ? text : "{}");
        free(text);
        json_decref(doc);
    }
    return GM_EXIT_OK;
}
