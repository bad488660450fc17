#include "bench/model/shape_opts.h"

#include "bench/model/arch.h"

#include "lib/datafile.h"
#include "lib/units.h"

#include <ini.h>
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
};
#define N_NUMBER_OPTS (sizeof number_opts / sizeof number_opts[0])
static const char *const flag_opts[] = {"checkpoint", "paged", "causal", "offload"};

int gm_shape_takes_value(const char *name)
{
    for (size_t i = 0; i < N_NUMBER_OPTS; i++)
        if (strcmp(name, number_opts[i].name) == 0)
            return 1;
    for (size_t i = 0; i < sizeof flag_opts / sizeof flag_opts[0]; i++)
        if (strcmp(name, flag_opts[i]) == 0)
            return 0;
    if (strcmp(name, "variant") == 0 || strcmp(name, "model") == 0 || strcmp(name, "optimizer") == 0)
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

int gm_shape_set(gm_shape *s, const char *name, const char *value, char *err, size_t err_len)
{
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
        if (strcmp(value, "naive") && strcmp(value, "tiled")) {
            snprintf(err, err_len, "--variant '%s': expected naive or tiled", value);
            return -1;
        }
        s->naive = strcmp(value, "naive") == 0;
    } else if (strcmp(name, "model") == 0) {
        return gm_shape_load_model(s, value, err, err_len);
    } else if (strcmp(name, "optimizer") == 0) {
        /* The device runs AdamW alone (bench/workloads/block_model.c); plan counts the others. */
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

typedef struct {
    gm_shape *s;
    const char *model;
    int found;
    char why[300];
} model_ctx;

static int on_model_entry(void *user, const char *section, const char *name, const char *value)
{
    model_ctx *c = user;
    if (c->why[0] || strcmp(section, c->model) != 0)
        return c->why[0] ? 0 : 1;
    c->found = 1;
    if (gm_shape_set(c->s, name, value, c->why, sizeof c->why) != 0 && !c->why[0])
        snprintf(c->why, sizeof c->why, "bad entry '%s'", name);
    return c->why[0] ? 0 : 1;
}

/* A whole model (a preset of share/models/ or a config.json): its
 * architecture, and the shape fields the workloads read from it. */
static int load_arch(gm_shape *s, const char *model, char *err, size_t err_len)
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

int gm_shape_load_model(gm_shape *s, const char *model, char *err, size_t err_len)
{
    memset(&s->arch, 0, sizeof s->arch);
    if (strchr(model, '/') || (strlen(model) > 5 && strcmp(model + strlen(model) - 5, ".json") == 0))
        return load_arch(s, model, err, err_len);
    char path[4200];
    if (!gm_find_data_file("models.ini", path, sizeof path)) {
        snprintf(err, err_len, "--model: models.ini not found in the data folders (gpumem info lists them)");
        return -1;
    }
    model_ctx c = {s, model, 0, ""};
    int rc = ini_parse(path, on_model_entry, &c);
    if (rc != 0) {
        snprintf(err, err_len, "%s:%d: %s", path, rc, c.why[0] ? c.why : "malformed line");
        return -1;
    }
    if (!c.found) {
        /* Not a models.ini shape: a whole-model preset, or neither. */
        char why[300];
        if (load_arch(s, model, why, sizeof why) == 0)
            return 0;
        snprintf(err, err_len, "--model '%s': no such shape in %s, and %s", model, path, why);
        return -1;
    }
    return 0;
}
