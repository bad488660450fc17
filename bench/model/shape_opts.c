#include "bench/model/shape_opts.h"

#include "bench/model/arch.h"

#include "lib/units.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    size_t offset;          /* of a uint64_t field in gm_shape; 0 for flags */
    uint64_t min, max;
} number_opts[] = {
    {"batch", offsetof(gm_shape, batch), 1, 1u << 24},
    {"seq", offsetof(gm_shape, seq), 1, 1u << 24},
    {"hidden", offsetof(gm_shape, hidden), 1, 1u << 20},
    {"heads", offsetof(gm_shape, heads), 1, 4096},
    {"head-dim", offsetof(gm_shape, head_dim), 1, 4096},
    {"out-features", offsetof(gm_shape, out), 1, 1u << 20},
    {"ffn", offsetof(gm_shape, ffn), 1, 1u << 22},
    {"layers", offsetof(gm_shape, layers), 1, 4096},
    {"micro-batch", offsetof(gm_shape, micro_batch), 1, 1u << 24},
    {"block-tokens", offsetof(gm_shape, block_tokens), 1, 1u << 16},
    {"max-batched-tokens", offsetof(gm_shape, max_batched_tokens), 1, 1u << 24},
    {"max-seqs", offsetof(gm_shape, max_seqs), 1, 1u << 20},
    {"max-model-len", offsetof(gm_shape, max_model_len), 1, 1u << 24},
    {"output-tokens", offsetof(gm_shape, output_tokens), 1, 1u << 24},
    {"prefill-requests", offsetof(gm_shape, prefill_requests), 1, 1u << 24},
};
/* The serving engine's options that are not whole numbers (serve_value). */
static const char *const serve_opts[] = {"gpu-memory-utilization", "kv-cache-memory", "serve-reserve", "preempt"};
#define N_NUMBER_OPTS (sizeof number_opts / sizeof number_opts[0])
static const char *const flag_opts[] = {"checkpoint", "paged", "causal", "offload"};

bool gm_shape_from_model(const char *name)
{
    static const char *const fixed[] = {"hidden", "heads", "head-dim", "layers", "ffn"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strcmp(name, fixed[i]) == 0)
            return true;
    return false;
}

void gm_shape_model_conflict(const gm_shape *s, char *why, size_t len)
{
    snprintf(why, len, "shapes the workloads without a whole model, and --model %s sets the shape from its config "
             "(drop one of them)", s->arch.name);
}

int gm_shape_takes_value(const char *name)
{
    for (size_t i = 0; i < N_NUMBER_OPTS; i++)
        if (strcmp(name, number_opts[i].name) == 0)
            return 1;
    for (size_t i = 0; i < sizeof flag_opts / sizeof flag_opts[0]; i++)
        if (strcmp(name, flag_opts[i]) == 0)
            return 0;
    if (strcmp(name, "variant") == 0 || strcmp(name, "model") == 0 || strcmp(name, "optimizer") == 0
        || strcmp(name, "recompute") == 0)
        return 1;
    for (size_t i = 0; i < sizeof serve_opts / sizeof serve_opts[0]; i++)
        if (strcmp(name, serve_opts[i]) == 0)
            return 1;
    return -1;
}

int gm_shape_bounds(const char *name, uint64_t *min, uint64_t *max)
{
    for (size_t i = 0; i < N_NUMBER_OPTS; i++)
        if (strcmp(name, number_opts[i].name) == 0) {
            *min = number_opts[i].min;
            *max = number_opts[i].max;
            return 0;
        }
    return -1;
}

/* --gpu-memory-utilization (a share in (0, 1]), --kv-cache-memory and
 * --serve-reserve (sizes), --preempt (swap, recompute or both). Returns
 * 0, -1 with err, or 1 if name is none of them. */
static int serve_value(gm_shape *s, const char *name, const char *value, char *err, size_t err_len)
{
    char why[160];
    if (strcmp(name, "gpu-memory-utilization") == 0) {
        double v;
        if (gm_parse_share(value, &v, why, sizeof why) != 0 || !(v > 0 && v <= 1)) {
            snprintf(err, err_len, "--%s '%s': expected a share above 0, at most 1 (0.9 or 90%%)", name, value);
            return -1;
        }
        s->gpu_util = v;
        return 0;
    }
    if (strcmp(name, "kv-cache-memory") == 0 || strcmp(name, "serve-reserve") == 0) {
        uint64_t v;
        bool kv = name[0] == 'k';
        if (gm_parse_size(value, &v, why, sizeof why) != 0 || (kv && v == 0)) {
            snprintf(err, err_len, "--%s '%s': expected a size such as 8GiB%s", name, value, kv ? ", above 0" : "");
            return -1;
        }
        *(kv ? &s->kv_cache_memory : &s->serve_reserve) = v;
        return 0;
    }
    if (strcmp(name, "preempt") == 0) {
        unsigned bits = 0;
        char buf[64];
        snprintf(buf, sizeof buf, "%s", value);
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            unsigned bit = strcmp(t, "swap") == 0 ? GM_PREEMPT_SWAP : strcmp(t, "recompute") == 0 ? GM_PREEMPT_RECOMPUTE : 0;
            if (!bit) {
                snprintf(err, err_len, "--%s '%s': expected swap, recompute or swap,recompute", name, value);
                return -1;
            }
            bits |= bit;
        }
        if (!bits || strlen(value) >= sizeof buf) {
            snprintf(err, err_len, "--%s '%s': expected swap, recompute or swap,recompute", name, value);
            return -1;
        }
        s->preempt = bits;
        return 0;
    }
    return 1;
}

int gm_shape_set(gm_shape *s, const char *name, const char *value, char *err, size_t err_len)
{
    if (gm_shape_has_arch(s) && gm_shape_from_model(name)) {
        char why[300];
        gm_shape_model_conflict(s, why, sizeof why);
        snprintf(err, err_len, "--%s %s", name, why);
        return -1;
    }
    int served = serve_value(s, name, value, err, err_len);
    if (served <= 0)
        return served;
    for (size_t i = 0; i < N_NUMBER_OPTS; i++) {
        if (strcmp(name, number_opts[i].name) != 0)
            continue;
        uint64_t v;
        char why[160];
        if (gm_parse_uint(value, number_opts[i].max, &v, why, sizeof why) != 0 || v < number_opts[i].min) {
            snprintf(err, err_len, "--%s '%s': expected a whole number from %llu to %llu", name, value,
                     (unsigned long long)number_opts[i].min, (unsigned long long)number_opts[i].max);
            return -1;
        }
        *(uint64_t *)((char *)s + number_opts[i].offset) = v;
        return 0;
    }
    if (strcmp(name, "checkpoint") == 0)
        s->checkpoint = true;
    else if (strcmp(name, "paged") == 0)
        s->paged = true;
    else if (strcmp(name, "causal") == 0)
        s->causal = true;
    else if (strcmp(name, "offload") == 0)
        s->offload = true;
    else if (strcmp(name, "variant") == 0) {
        static const char *const picks[] = {"tiled", "ours", "vendor", "all"};   /* tiled: the default */
        int pick = -1;
        for (int i = 0; i < 4; i++)
            pick = strcmp(value, picks[i]) == 0 ? i : pick;
        if (pick < 0 && strcmp(value, "naive")) {
            snprintf(err, err_len, "--variant '%s': expected tiled, naive, ours, vendor or all", value);
            return -1;
        }
        s->naive = strcmp(value, "naive") == 0;
        s->impl_pick = pick > 0 ? (unsigned)pick : GM_PICK_DEFAULT;
    } else if (strcmp(name, "model") == 0) {
        return gm_shape_load_model(s, value, err, err_len);
    } else if (strcmp(name, "recompute") == 0) {
        static const char *const kinds[] = {"none", "selective", "full"};   /* gm_recompute's order */
        int kind = -1;
        for (int i = 0; i < 3; i++)
            kind = strcmp(value, kinds[i]) == 0 ? i : kind;
        if (kind < 0) {
            snprintf(err, err_len, "--recompute '%s': expected none, selective or full", value);
            return -1;
        }
        s->recompute = (unsigned)kind;
    } else if (strcmp(name, "optimizer") == 0) {
        /* The device runs AdamW alone (bench/workloads/model_*.c); plan counts the others. */
        if (strcmp(value, "adamw")) {
            snprintf(err, err_len, "--optimizer '%s': the device runs adamw only (plan counts the others)", value);
            return -1;
        }
    } else {
        snprintf(err, err_len, "unknown option '--%s'", name);
        return 1;
    }
    return 0;
}

int gm_shape_load_model(gm_shape *s, const char *model, char *err, size_t err_len)
{
    gm_arch a;
    if (gm_arch_load(model, &a, err, err_len) != 0)
        return -1;
    s->arch = a;
    s->hidden = a.hidden;
    s->heads = a.heads;
    s->head_dim = a.head_dim;
    s->ffn = a.ffn;
    s->layers = a.layers;
    return 0;
}
