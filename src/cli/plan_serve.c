/* gpumem plan --model M --mode serve: a serving engine's KV-cache budget
 * (bench/model/serve_plan.h), printed as text, CSV or JSON. */
#include "cli/plan_model.h"

#include "bench/model/precision_roles.h"
#include "bench/model/serve_plan.h"
#include "lib/exit_codes.h"
#include "lib/units.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

/* n with a comma every three digits, as vLLM's f"{n:,}" writes it. */
static const char *thousands(uint64_t n, char *buf, size_t len)
{
    char digits[24];
    int k = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n), j = 0;
    for (int i = 0; i < k && (size_t)j + 2 < len; i++) {
        if (i && (k - i) % 3 == 0)
            buf[j++] = ',';
        buf[j++] = digits[i];
    }
    buf[j] = '\0';
    return buf;
}

typedef struct {
    const char *kind, *name, *unit;
    uint64_t value;
} figure;

/* The budget's figures in print order; returns how many. */
static int figures(const gm_serve_budget *b, bool given, figure *f)
{
    int n = 0;
    f[n++] = (figure){"budget", given ? "kv_cache_memory" : "requested", "bytes", b->requested};
    if (!given) {
        f[n++] = (figure){"weights", "weights", "bytes", b->weights};
        f[n++] = (figure){"activations", "profile_peak", "bytes", b->layer_peak};
        f[n++] = (figure){"activations", "logits", "bytes", b->logits};
        f[n++] = (figure){"workspace", "reserve", "bytes", b->reserve};
        f[n++] = (figure){"subtotal", "non_kv", "bytes", b->non_kv};
    }
    f[n++] = (figure){"kv_cache", "available", "bytes", b->available};
    f[n++] = (figure){"kv_cache", "page_bytes", "bytes", b->page_bytes};
    f[n++] = (figure){"kv_cache", "blocks", "blocks", b->blocks};
    f[n++] = (figure){"kv_cache", "tokens", "tokens", b->tokens};
    f[n++] = (figure){"kv_cache", "blocks_per_request", "blocks", b->blocks_per_request};
    return n;
}

static void print_text(const gm_serve_opts *o, const gm_serve_budget *b, const char *label)
{
    char size[32], t1[32], t2[32];
    figure f[16];
    int n = figures(b, o->kv_cache_memory != 0, f);
    printf("# serve %s: the KV cache as vLLM V1 sizes it (vllm/v1/worker/gpu_worker.py "
           "determine_available_memory, vllm/v1/core/kv_cache_utils.py get_num_blocks); weights and "
           "activations modelled, not measured\n", label);
    if (o->kv_cache_memory)
        printf("# kv_cache_memory %llu block_tokens=%llu max_model_len=%llu\n",
               (unsigned long long)o->kv_cache_memory, (unsigned long long)b->block_tokens,
               (unsigned long long)b->max_model_len);
    else
        printf("# memory %llu gpu_memory_utilization=%g max_batched_tokens=%llu max_seqs=%llu block_tokens=%llu "
               "max_model_len=%llu logit_rows=%llu\n", (unsigned long long)o->total, o->utilization,
               (unsigned long long)b->max_batched_tokens, (unsigned long long)b->max_seqs,
               (unsigned long long)b->block_tokens, (unsigned long long)b->max_model_len,
               (unsigned long long)b->logit_rows);
    for (int i = 0; i < n; i++)
        printf("%-12s %-20s %16llu  %s\n", f[i].kind, f[i].name, (unsigned long long)f[i].value,
               f[i].unit[0] == 'b' && f[i].unit[1] == 'y' ? gm_format_size(f[i].value, size, sizeof size) : f[i].unit);
    printf("GPU KV cache size: %s tokens\n", thousands(b->tokens, t1, sizeof t1));
    printf("Maximum concurrency for %s tokens per request: %.2fx\n", thousands(b->max_model_len, t2, sizeof t2),
           b->concurrency);
}

static void print_csv(const gm_serve_opts *o, const gm_serve_budget *b, const char *label)
{
    figure f[16];
    int n = figures(b, o->kv_cache_memory != 0, f);
    for (int i = 0; i < n; i++)
        printf("%s,%s,%s,%llu,%s\n", label, f[i].kind, f[i].name, (unsigned long long)f[i].value, f[i].unit);
    printf("%s,serve,max_concurrency,%.6f,requests\n", label, b->concurrency);
}

static json_t *json_plan(const gm_serve_opts *o, const gm_serve_budget *b, const char *label)
{
    figure f[16];
    int n = figures(b, o->kv_cache_memory != 0, f);
    json_t *items = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(items, json_pack("{s:s,s:s,s:I,s:s}", "kind", f[i].kind, "name", f[i].name, "value",
                                               (json_int_t)f[i].value, "unit", f[i].unit));
    return json_pack("{s:s,s:s,s:I,s:f,s:I,s:I,s:I,s:I,s:o,s:I,s:I,s:f}", "precision", label, "mode", "serve",
                     "memory", (json_int_t)o->total, "gpu_memory_utilization", o->utilization, "max_batched_tokens",
                     (json_int_t)b->max_batched_tokens, "max_seqs", (json_int_t)b->max_seqs, "block_tokens",
                     (json_int_t)b->block_tokens, "max_model_len", (json_int_t)b->max_model_len, "items", items,
                     "kv_cache_tokens", (json_int_t)b->tokens, "kv_cache_blocks", (json_int_t)b->blocks,
                     "max_concurrency", b->concurrency);
}

int gm_plan_serve_print(const gm_arch *a, const gm_model_plan_args *args, uint64_t total)
{
    const gm_shape *sv = args->serve;
    if (!total && !sv->kv_cache_memory) {
        fprintf(stderr, "gpumem plan: --mode serve needs the card's memory: --fit SIZE or --fit device (or the "
                "KV cache's own bytes, --kv-cache-memory)\n");
        return GM_EXIT_USAGE;
    }
    json_t *plans = args->format == GM_PLAN_JSON ? json_array() : NULL;
    if (args->format == GM_PLAN_CSV)
        printf("precision,kind,name,value,unit\n");
    for (int p = 0; p < GM_PREC_COUNT; p++) {
        if (!(args->precisions & (1u << p)))
            continue;
        gm_plan_opts po = args->plan;
        po.mode = GM_PLAN_INFERENCE;
        po.prec = (gm_precision)p;
        gm_plan_item it[GM_PLAN_MAX_ITEMS];
        int n = gm_plan_model(a, &po, it);
        gm_shape roles = {.prec = (gm_precision)p, .weight_prec = po.weight_prec, .kv_prec = po.kv_prec,
                          .arch = *a, .int4_lm_head = po.int4_lm_head};
        gm_serve_opts o = {.total = total, .utilization = sv->gpu_util, .kv_cache_memory = sv->kv_cache_memory,
                           .max_batched_tokens = sv->max_batched_tokens, .max_seqs = sv->max_seqs,
                           .max_model_len = sv->max_model_len, .block_tokens = sv->block_tokens,
                           .reserve = sv->serve_reserve, .act = roles.prec, .kv = gm_kv_prec(&roles), .tp = po.tp};
        for (int i = 0; i < n; i++)
            if (it[i].role == GM_PLAN_WEIGHTS)
                o.weights += it[i].bytes;
        gm_serve_budget b;
        char err[400];
        int rc = n < 0 ? (snprintf(err, sizeof err, "inconsistent options for --model %s", a->name), 2)
                       : gm_serve_plan(a, &o, &b, err, sizeof err);
        if (rc != 0) {
            fprintf(stderr, "gpumem plan: %s\n", err);
            json_decref(plans);
            return GM_EXIT_USAGE;
        }
        gm_serve_defaults(a, &o);
        const char *label = gm_roles_label(&roles);
        if (args->format == GM_PLAN_TEXT)
            print_text(&o, &b, label);
        else if (args->format == GM_PLAN_CSV)
            print_csv(&o, &b, label);
        else
            json_array_append_new(plans, json_plan(&o, &b, label));
    }
    if (plans) {
        json_t *doc = json_pack("{s:s,s:s,s:I,s:I,s:o}", "model", a->name, "model_type", a->model_type, "parameters",
                                (json_int_t)gm_arch_params(a), "context", (json_int_t)a->context, "plans", plans);
        char *text = json_dumps(doc, JSON_INDENT(2));
        puts(text ? text : "{}");
        free(text);
        json_decref(doc);
    }
    return GM_EXIT_OK;
}
