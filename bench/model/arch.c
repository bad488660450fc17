/* Parameter counts of decoder architectures (bench/model/arch.h). */
#include "bench/model/arch.h"

uint64_t gm_arch_norm_params(const gm_arch *a)
{
    /* RMSNorm: a weight of h; LayerNorm: weight and bias. */
    return a->layernorm ? 2 * a->hidden : a->hidden;
}

uint64_t gm_arch_attn_params(const gm_arch *a)
{
    uint64_t q = a->heads * a->head_dim, kv = a->kv_heads * a->head_dim;
    /* q_proj h x a*d, k_proj and v_proj h x k*d, o_proj a*d x h. */
    uint64_t n = a->hidden * q + 2 * a->hidden * kv + q * a->hidden;
    if (a->qkv_bias)
        n += q + 2 * kv;
    if (a->o_bias)
        n += a->hidden;
    return n;
}

/* One expert (or the dense MLP): gate, up (h x I) and down (I x h). */
static uint64_t expert_params(const gm_arch *a)
{
    uint64_t ins = a->gated_mlp ? 2 : 1;       /* gate and up, or up */
    uint64_t n = (ins + 1) * a->hidden * a->ffn;
    if (a->mlp_bias)
        n += ins * a->ffn + a->hidden;
    return n;
}

uint64_t gm_arch_mlp_params(const gm_arch *a)
{
    if (a->experts == 0)
        return expert_params(a);
    /* Mixtral: `experts` MLPs and a bias-free router gate h x experts. */
    return a->experts * expert_params(a) + a->hidden * a->experts;
}

/* Norms a layer: two (before attention and before the MLP) unless the
 * config says otherwise. */
static uint64_t layer_norms(const gm_arch *a)
{
    return a->layer_norms ? a->layer_norms : 2;
}

static uint64_t params_with(const gm_arch *a, uint64_t mlp)
{
    uint64_t layer = gm_arch_attn_params(a) + mlp + layer_norms(a) * gm_arch_norm_params(a);
    uint64_t n = a->vocab * a->hidden + a->positions * a->hidden;
    n += a->layers * layer + gm_arch_norm_params(a);
    if (!a->tied)
        n += a->vocab * a->hidden;
    return n;
}

uint64_t gm_arch_params(const gm_arch *a)
{
    return params_with(a, gm_arch_mlp_params(a));
}

uint64_t gm_arch_active_params(const gm_arch *a)
{
    if (a->experts == 0)
        return gm_arch_params(a);
    return params_with(a, a->experts_per_token * expert_params(a) + a->hidden * a->experts);
}

uint64_t gm_arch_kv_bytes_per_token(const gm_arch *a, size_t elem_size)
{
    /* DESIGN section 6: K and V, each k heads of d elements, per layer. */
    return 2 * a->layers * a->kv_heads * a->head_dim * (uint64_t)elem_size;
}

uint64_t gm_arch_kv_bytes_per_sequence(const gm_arch *a, size_t elem_size, uint64_t seq)
{
    uint64_t per_layer_token = 2 * a->kv_heads * a->head_dim * (uint64_t)elem_size, tokens, r;
    uint64_t sliding = a->sliding_window ? a->sliding_layers : 0;
    uint64_t window = sliding && seq > a->sliding_window ? a->sliding_window : seq;
    /* (L - sliding) layers hold seq tokens, `sliding` layers the window. */
    if (__builtin_mul_overflow(a->layers - sliding, seq, &tokens) || __builtin_mul_overflow(sliding, window, &r)
        || __builtin_add_overflow(tokens, r, &tokens) || __builtin_mul_overflow(tokens, per_layer_token, &r))
        return UINT64_MAX;
    return r;
}
