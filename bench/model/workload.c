/*
 * What the workloads share: the list of them (GM_WORKLOAD_LIST), their
 * names, shapes, and the tensor-list builder of their memory models (each
 * workload's own model is in its file). Storage tensors use the
 * precision's element size; softmax statistics and score matrices are fp32
 * (the accumulation type).
 */
#include "bench/model/mem_plan.h"
#include "bench/model/workload.h"

#include <stdio.h>
#include <string.h>

const char *gm_tensor_role_name(gm_tensor_role r)
{
    static const char *const names[] = {"weight", "activation", "kv-cache", "workspace"};
    return r <= GM_ROLE_WORKSPACE ? names[r] : "?";
}

void gm_shape_complete(gm_shape *s)
{
    if (!s->head_dim && s->heads && s->hidden)
        s->head_dim = s->hidden / s->heads;
    if (!s->heads && s->head_dim && s->hidden)
        s->heads = s->hidden / s->head_dim;
    if (!s->hidden)
        s->hidden = s->heads * s->head_dim;
    if (!s->out)
        s->out = s->hidden;
    if (!s->ffn)
        s->ffn = 4 * s->hidden;
    if (!s->layers)
        s->layers = 1;
    if (!s->micro_batch || s->micro_batch > s->batch)
        s->micro_batch = s->batch;
    if (!s->block_tokens)
        s->block_tokens = 16;
}

uint64_t gm_tensor_mul(gm_tensor_list *l, uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        l->overflow = true;
        return 0;
    }
    return r;
}

void gm_tensor_list_add(gm_tensor_list *l, const char *name, gm_tensor_role role, uint64_t elems, uint64_t elem_size)
{
    if (l->n >= GM_MAX_TENSORS) {
        l->overflow = true;
        return;
    }
    gm_tensor *t = &l->t[l->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->role = role;
    t->bytes = gm_tensor_mul(l, elems, elem_size);
}

int gm_tensor_list_finish(const gm_tensor_list *l) { return l->overflow ? -1 : l->n; }

#define NAME_(n) #n,
const char *const gm_runnable_workloads[GM_RUNNABLE_WORKLOAD_COUNT] = {GM_WORKLOAD_LIST(NAME_)};
#undef NAME_

bool gm_workload_in_mode(const gm_workload *w, int m)
{
    if (w->serves || m == GM_PLAN_SERVE)
        return w->serves && m == GM_PLAN_SERVE;
    return m == GM_PLAN_INFERENCE || w->trains;
}

uint64_t gm_tensors_total(const gm_tensor *t, int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        if (__builtin_add_overflow(total, t[i].bytes, &total))
            return UINT64_MAX;
    return total;
}

int gm_impls_pick(const gm_shape *s, const char *ours, const char *vendor, const char *one, const char **out)
{
    int n = 0;
    if (s->impl_pick == GM_PICK_DEFAULT && one)
        out[n++] = one;
    else if (s->impl_pick == GM_PICK_VENDOR)
        n = vendor ? (out[n] = vendor, 1) : 0;
    else {
        out[n++] = ours;
        if (s->impl_pick != GM_PICK_OURS && vendor)
            out[n++] = vendor;
    }
    return n;
}
