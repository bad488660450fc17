#include "bench/model/precision_roles.h"

#include "bench/model/mem_plan.h"

#include <stdio.h>
#include <string.h>

gm_precision gm_weight_prec(const gm_shape *s)
{
    return s->weight_prec ? (gm_precision)(s->weight_prec - 1) : s->prec;
}

gm_precision gm_kv_prec(const gm_shape *s)
{
    return s->kv_prec ? (gm_precision)(s->kv_prec - 1) : s->prec;
}

uint64_t gm_group_size(const gm_shape *s)
{
    return s->group_size ? s->group_size : GM_DEFAULT_GROUP_SIZE;
}

void gm_shape_set_roles(gm_shape *s, const gm_shape *base, gm_precision p)
{
    s->prec = base->act_prec ? (gm_precision)(base->act_prec - 1) : p;
    s->weight_prec = (base->weight_prec ? base->weight_prec - 1 : (unsigned)p) + 1;
    s->kv_prec = (base->kv_prec ? base->kv_prec - 1 : (unsigned)p) + 1;
    s->act_prec = 0;
    s->sweep_prec = (unsigned)p + 1;
}

gm_precision gm_sweep_prec(const gm_shape *s)
{
    return s->sweep_prec ? (gm_precision)(s->sweep_prec - 1) : s->prec;
}

/* Does the point run an int4 LM head? */
static bool int4_lm_head(const gm_shape *s)
{
    return s->int4_lm_head && gm_weight_prec(s) == GM_INT4 && gm_shape_has_arch(s);
}

const char *gm_roles_label(const gm_shape *s)
{
    static char labels[GM_PREC_COUNT][GM_PREC_COUNT][GM_PREC_COUNT][2][48];
    gm_precision a = s->prec, w = gm_weight_prec(s), k = gm_kv_prec(s);
    bool head = int4_lm_head(s);
    char *l = labels[a][w][k][head];
    if (!l[0]) {
        char buf[48];
        gm_role_variant(a, w, k, false, buf, sizeof buf);
        buf[strlen(buf) - strlen("-grid")] = '\0';
        snprintf(l, sizeof labels[0][0][0][0], "%.40s%s", buf, head ? "-lmint4" : "");   /* labels are < 30 */
    }
    return l;
}

void gm_row_shape_fields(gm_row *row, const gm_shape *s)
{
    row->precision = gm_roles_label(s);
    row->weight_precision = gm_precision_name(gm_weight_prec(s));
    row->kv_precision = gm_precision_name(gm_kv_prec(s));
    row->activation_precision = gm_precision_name(s->prec);
    row->model = gm_shape_has_arch(s) ? s->arch.name : NULL;
    row->mode = gm_plan_mode_names[s->serve ? GM_PLAN_SERVE : s->tune ? s->tune : s->train ? GM_PLAN_TRAIN : GM_PLAN_INFERENCE];
}

const char *gm_role_variant(gm_precision act, gm_precision weight, gm_precision kv, bool chunked, char *buf,
                            size_t len)
{
    char w[24] = "", k[24] = "";
    if (weight != act)
        snprintf(w, sizeof w, "-w%s", gm_precision_name(weight));
    if (kv != act)
        snprintf(k, sizeof k, "-kv%s", gm_precision_name(kv));
    snprintf(buf, len, "%s%s%s-%s", gm_precision_name(act), w, k, chunked ? "chunked" : "grid");
    return buf;
}

int gm_roles_check(const char *name, gm_precision act, gm_precision w, gm_precision kv, char *err, size_t err_len)
{
    if (act == GM_INT4 || kv == GM_INT4) {
        snprintf(err, err_len, "int4 is a weight precision only: use --weight-precision int4 (with --precision "
                 "or --activation-precision for the rest)");
        return -1;
    }
    if (!name)
        return 0;
    bool linear = !strcmp(name, "linear"), kvcache = !strcmp(name, "kvcache"), block = !strcmp(name, "block");
    /* The roles a workload holds: linear weights and activations, kvcache
     * a KV cache and activations, attention activations only; block (and
     * the whole model) all three: one precision, or 16-bit activations
     * with int4 weights and/or an fp8 KV cache (the kernels built for it). */
    if (linear && w != act && act == GM_INT8 && w != GM_INT4) {
        snprintf(err, err_len, "linear: int8 activations take int8 or int4 weights, not %s", gm_precision_name(w));
        return -1;
    }
    if (kvcache && kv != act && (act == GM_INT8 || kv == GM_INT8)) {
        snprintf(err, err_len, "kvcache: an int8 KV cache or int8 activations need one precision for both");
        return -1;
    }
    bool sixteen = act == GM_FP16 || act == GM_BF16;
    if (block && (w != act || kv != act)
        && !(sixteen && (w == act || w == GM_INT4) && (kv == act || GM_PREC_IS_FP8(kv)))) {
        snprintf(err, err_len, "block: roles differ only as int4 weights and/or an fp8 KV cache beside fp16 or bf16 "
                 "activations (not weights %s, KV cache %s, activations %s)", gm_precision_name(w),
                 gm_precision_name(kv), gm_precision_name(act));
        return -1;
    }
    return 0;
}

int gm_int4_lm_head_check(const char *name, const gm_shape *s, char *err, size_t err_len)
{
    if (!s->int4_lm_head)
        return 0;
    if (gm_weight_prec(s) != GM_INT4)
        snprintf(err, err_len, "--int4-lm-head needs --weight-precision int4 (the head joins the layers' int4 "
                 "weights)");
    else if (!gm_shape_has_arch(s))
        snprintf(err, err_len, "--int4-lm-head needs a whole model: --model PRESET or a config.json (a block of "
                 "the shape options has no LM head)");
    else if (s->arch.tied)
        snprintf(err, err_len, "--int4-lm-head: %s ties its LM head to the embedding, which stays in the "
                 "activations' precision (only an untied head is quantised)", s->arch.name);
    else if (name && strcmp(name, "block") != 0)
        snprintf(err, err_len, "--int4-lm-head: %s has no LM head (block runs the whole model)", name);
    else
        return 0;
    return -1;
}
