/*
 * Fine-tuning's memory (bench/model/train_plan.h).
 *
 * Notation as mem_plan.c: L layers, h hidden, a query heads, k KV heads,
 * d head dim (qd = a d, kd = k d), I intermediate size, V vocabulary, P
 * parameters, b batch, s sequence length, e the compute precision's bytes,
 * T tensor-parallel degree, D = N / T data-parallel ranks, r the LoRA rank.
 */
#include "bench/model/train_plan.h"

#include "bench/model/saturate.h"

#include <stdio.h>
#include <string.h>

#define mul gm_sat_mul
#define add gm_sat_add
#define mul3 gm_sat_mul3
#define share gm_sat_share

const char *const gm_lora_target_names[GM_LORA_TARGET_COUNT] = {"q", "k", "v", "o", "gate", "up", "down"};

#define BIT(t) (1u << (t))
#define ATTN_INPUT_TARGETS (BIT(GM_LORA_Q) | BIT(GM_LORA_K) | BIT(GM_LORA_V))
#define MLP_INPUT_TARGETS (BIT(GM_LORA_GATE) | BIT(GM_LORA_UP))
#define MLP_TARGETS (MLP_INPUT_TARGETS | BIT(GM_LORA_DOWN))

uint64_t gm_optimizer_bytes(gm_optimizer opt, uint64_t n)
{
    switch (opt) {
    case GM_OPTIM_ADAMW:
        /* Two fp32 moments (Loshchilov & Hutter 2019; DESIGN section 6). */
        return mul(8, n);
    case GM_OPTIM_ADAMW_8BIT:
        /* Two 8-bit moments, each with one fp32 absmax per block of 256
         * values (Dettmers et al. 2022, bitsandbytes' blockwise 8-bit
         * optimizers; it keeps tensors under 4096 values in 32 bits,
         * which this count ignores). */
        return mul(2, add(n, mul(4, share(n, 256))));
    case GM_OPTIM_SGD:
        return 0;
    case GM_OPTIM_SGD_MOMENTUM:
        return mul(4, n);   /* one fp32 momentum buffer */
    }
    return 0;
}

bool gm_lora_shape(const gm_arch *a, gm_lora_target t, uint64_t *in, uint64_t *out)
{
    uint64_t h = a->hidden, qd = a->heads * a->head_dim, kd = a->kv_heads * a->head_dim, I = a->ffn;
    static const int shape[GM_LORA_TARGET_COUNT][2] = {{0, 1}, {0, 2}, {0, 2}, {1, 0}, {0, 3}, {0, 3}, {3, 0}};
    const uint64_t width[] = {h, qd, kd, I};
    if ((unsigned)t >= GM_LORA_TARGET_COUNT || (t == GM_LORA_GATE && !a->gated_mlp))
        return false;
    *in = width[shape[t][0]];
    *out = width[shape[t][1]];
    return true;
}

unsigned gm_lora_targets(const gm_arch *a, const gm_tune_opts *t)
{
    if (t->targets)
        return t->targets;
    unsigned m = 0;
    uint64_t in, out;
    for (int i = 0; i < GM_LORA_TARGET_COUNT; i++)
        m |= gm_lora_shape(a, (gm_lora_target)i, &in, &out) ? BIT(i) : 0u;
    return m;
}

uint64_t gm_lora_rank(const gm_tune_opts *t) { return t->rank ? t->rank : GM_LORA_RANK_DEFAULT; }

double gm_lora_alpha(const gm_tune_opts *t) { return t->alpha > 0 ? t->alpha : 2.0 * (double)gm_lora_rank(t); }

/* Matrices of projection t in the whole model: one a layer, or one a
 * layer and expert for the MLP's. */
static uint64_t matrices(const gm_arch *a, int t)
{
    return mul(a->layers, (BIT(t) & MLP_TARGETS) && a->experts ? a->experts : 1);
}

uint64_t gm_lora_params(const gm_arch *a, const gm_tune_opts *t)
{
    /* Hu et al. 2021 (LoRA), section 4: W x + B A x with A [r, in] and
     * B [out, r]: r (in + out) parameters a projection. */
    unsigned targets = gm_lora_targets(a, t);
    uint64_t n = 0, in, out;
    for (int i = 0; i < GM_LORA_TARGET_COUNT; i++)
        if ((targets & BIT(i)) && gm_lora_shape(a, (gm_lora_target)i, &in, &out))
            n = add(n, mul3(gm_lora_rank(t), add(in, out), matrices(a, i)));
    return n;
}

void gm_plan_nf4_weights(const gm_arch *a, size_t other_elem, uint64_t *codes, uint64_t *absmax, uint64_t *scales,
                         uint64_t *other)
{
    /* Dettmers et al. 2023 (QLoRA), section 3, as bitsandbytes stores it
     * (Params4bit with compress_statistics, quant_type nf4): every linear
     * projection of the layers in 4-bit codes, an absmax a block of 64
     * weights quantised to 8 bits, with one fp32 scale a block of 256
     * absmax values (its 256-entry code table and one fp32 offset a
     * matrix, about 1KiB, are left out). The embedding and LM head stay in
     * the compute precision (bitsandbytes quantises torch.nn.Linear layers
     * and skips the head), so do the norms and the routers. */
    uint64_t elems = 0;
    *codes = *absmax = *scales = 0;
    uint64_t in, out;
    for (int i = 0; i < GM_LORA_TARGET_COUNT; i++) {
        if (!gm_lora_shape(a, (gm_lora_target)i, &in, &out))
            continue;
        uint64_t n = mul(in, out), blocks = share(n, GM_NF4_BLOCK), count = matrices(a, i);
        *codes = add(*codes, mul(count, share(n, 2)));
        *absmax = add(*absmax, mul(count, blocks));
        *scales = add(*scales, mul3(count, share(blocks, GM_NF4_SCALE_BLOCK), 4));
        elems = add(elems, mul(count, n));
    }
    uint64_t P = gm_arch_params(a);
    *other = mul(P >= elems ? P - elems : 0, other_elem);
}

/*
 * The tensors one layer keeps for its backward pass, per token (times
 * s*b), e bytes an element unless said, with sbh = s*b*h. gpumem's
 * training step keeps each tensor once, in the precision it was computed:
 *   the layer's input and the attention's residual sum (the two RMSNorms'
 *     inputs; the backward recomputes their 1/rms)          2 e*sbh
 *   the first norm's output, where q, k or v learn (it is    e*sbh
 *     their input: full fine-tuning, or an adapter on one)
 *   q and k after the rotary embedding, v, the attention's   e*s*b*(2 qd + 2 kd) / T
 *     output (FlashAttention-2's backward reads all four; the output is
 *     o's input too)
 *   tiled attention: its fp32 log-sum-exp a row and head      4*a*s*b / T
 *     (naive: the score matrices, as mem_plan.c counts them)
 *   the second norm's output, where gate or up learns         e*sbh (MoE: its
 *                                                            routed copies too)
 *   gate and up outputs (SwiGLU's inputs; a plain MLP: the   2 e*s*b*I / T
 *     GELU's input only)                                     (1 e*s*b*I / T)
 *   SwiGLU's output, where down learns (down's input)        e*s*b*I / T
 *   each adapter's x A (the input of B)                      e*s*b*r
 *   MoE: the router's logits                                 e*s*b*experts
 * Full fine-tuning learns every projection, so it keeps every input: the
 * same bytes as gm_layer_train_activations (mem_plan.c).
 * PyTorch's eager autograd (a Llama as Hugging Face's modelling code
 * writes it, with scaled_dot_product_attention) keeps instead of the norm
 * inputs their fp32 upcasts and the fp32 1/rms a row (4*sbh + 4*s*b each;
 * full fine-tuning also the e-byte normalised input, for the weight's
 * gradient), and silu(gate) beside gate and up (the product's two
 * operands): e*s*b*I / T more.
 * Selective recomputation (Korthikanti et al. 2022, section 5) drops the
 * attention's row statistics (or scores); full recomputation keeps only
 * the layer's input, e*sbh.
 */
uint64_t gm_layer_tune_activations(const gm_arch *a, const gm_plan_opts *o, uint64_t b, uint64_t s, gm_recompute r)
{
    const uint64_t e = gm_precision_size(o->prec), T = o->tp ? o->tp : 1;
    const uint64_t sb = mul(s, b), sbh = mul(sb, a->hidden);
    if (r == GM_RECOMPUTE_FULL)
        return mul(e, sbh);
    const bool full = o->mode == GM_PLAN_TRAIN, torch = o->tune.saved == GM_SAVED_PYTORCH;
    const unsigned learns = full ? ~0u : gm_lora_targets(a, &o->tune);
    const uint64_t qd = a->heads * a->head_dim, kd = a->kv_heads * a->head_dim;
    const uint64_t routed = a->experts ? a->experts_per_token : 1;
    uint64_t norm_in = torch ? add(mul(4, sbh), mul(4, sb)) : mul(e, sbh);
    if (torch && full)
        norm_in = add(norm_in, mul(e, sbh));
    uint64_t n = mul(2, norm_in);
    if (learns & ATTN_INPUT_TARGETS)
        n = add(n, mul(e, sbh));
    n = add(n, share(mul3(e, sb, 2 * qd + 2 * kd), T));
    if (r == GM_RECOMPUTE_NONE) {
        if (o->naive)
            n = add(n, share(mul3(a->dropout ? 1 + 2 * e : e, mul3(a->heads, s, s), b), T));
        else
            n = add(n, share(mul3(4, a->heads, sb), T));
    }
    if (a->dropout)
        n = add(n, mul(2, sbh));                                /* the two dropout masks */
    if (learns & MLP_INPUT_TARGETS)
        n = add(n, mul3(e, sbh, routed + (a->experts ? 1 : 0)));
    if (a->experts)
        n = add(n, mul3(e, sb, a->experts));                   /* router logits */
    uint64_t kept_ffn = a->gated_mlp ? (torch ? 3 : 2) : 1;
    if (learns & BIT(GM_LORA_DOWN))
        kept_ffn++;
    n = add(n, share(mul3(kept_ffn * e, mul(sb, a->ffn), routed), T));
    if (!full) {
        uint64_t in, out;
        for (int i = 0; i < GM_LORA_TARGET_COUNT; i++)
            if ((learns & BIT(i)) && gm_lora_shape(a, (gm_lora_target)i, &in, &out))
                n = add(n, mul3(e, sb, mul(gm_lora_rank(&o->tune), (BIT(i) & MLP_TARGETS) ? routed : 1)));
    }
    return n;
}

/*
 * gpumem's backward of one layer holds, besides what the layers keep: the
 * residual stream's gradient (e*sbh), and the larger of the attention's
 * gradients (the output's dO, dq, dk, dv: e*s*b*(2 qd + 2 kd) / T; the
 * norm output's gradient e*sbh; FlashAttention-2's fp32 rowsum(dO * O)
 * 4*a*s*b / T) and the MLP's (SwiGLU's output gradient e*s*b*I / T, the
 * norm output's e*sbh; SwiGLU's backward writes d gate and d up over the
 * kept gate and up), and the fp32 1/rms of each row that RMSNorm's
 * backward passes from its dx kernel to its dw kernel (4*s*b). An
 * adapter's d(x A), e*s*b*r, lives one at a time.
 */
uint64_t gm_plan_backward_workspace(const gm_arch *a, const gm_plan_opts *o, uint64_t b, uint64_t s)
{
    const uint64_t e = gm_precision_size(o->prec), T = o->tp ? o->tp : 1;
    const uint64_t sb = mul(s, b), sbh = mul(sb, a->hidden), routed = a->experts ? a->experts_per_token : 1;
    const uint64_t qd = a->heads * a->head_dim, kd = a->kv_heads * a->head_dim;
    uint64_t attn = add(add(share(mul3(e, sb, 2 * qd + 2 * kd), T), mul(e, sbh)), share(mul3(4, a->heads, sb), T));
    uint64_t mlp = add(share(mul3(e, mul(sb, a->ffn), routed), T), mul(e, sbh));
    uint64_t ws = add(add(mul(e, sbh), attn > mlp ? attn : mlp), mul(4, sb));
    return o->mode == GM_PLAN_TRAIN ? ws : add(ws, mul3(e, sb, gm_lora_rank(&o->tune)));
}

uint64_t gm_plan_token_inputs(uint64_t b, uint64_t s) { return mul(4, add(mul3(4, b, s), 1)); }

uint64_t gm_plan_rope_tables(const gm_arch *a, uint64_t s)
{
    return a->positions ? 0 : mul3(4, s, a->head_dim / 2 * 2);
}

/* The largest projection's weights in the compute precision: QLoRA
 * dequantises one at a time into this buffer, before the forward's
 * product and again before the backward's (as bitsandbytes' MatMul4Bit). */
static uint64_t dequant_buffer(const gm_arch *a, uint64_t e, uint64_t T)
{
    uint64_t big = 0, in, out;
    for (int i = 0; i < GM_LORA_TARGET_COUNT; i++)
        if (gm_lora_shape(a, (gm_lora_target)i, &in, &out) && mul(in, out) > big)
            big = mul(in, out);
    return share(mul(big, e), T);
}

static int push(gm_plan_item *out, int n, const char *name, gm_plan_role role, uint64_t bytes)
{
    if (n < 0 || n >= GM_PLAN_MAX_ITEMS)
        return -1;
    out[n] = (gm_plan_item){name, role, bytes, false};
    return n + 1;
}

/* The frozen base of LoRA (the compute precision) or QLoRA (NF4), on one
 * GPU: split over T ranks, and over D with ZeRO-3. */
static int push_base(const gm_arch *a, const gm_plan_opts *o, gm_plan_item *out, int n, uint64_t D)
{
    const uint64_t e = gm_precision_size(o->prec), T = o->tp, z = o->zero >= 3 ? D : 1;
    if (o->mode == GM_PLAN_LORA)
        return push(out, n, "base_weights", GM_PLAN_WEIGHTS, share(mul(share(gm_arch_params(a), T), e), z));
    uint64_t codes, absmax, scales, other;
    gm_plan_nf4_weights(a, e, &codes, &absmax, &scales, &other);
    n = push(out, n, "base_nf4_codes", GM_PLAN_WEIGHTS, share(share(codes, T), z));
    n = push(out, n, "base_nf4_absmax_u8", GM_PLAN_WEIGHTS, share(share(absmax, T), z));
    n = push(out, n, "base_nf4_scales_fp32", GM_PLAN_WEIGHTS, share(share(scales, T), z));
    return push(out, n, "base_other", GM_PLAN_WEIGHTS, share(share(other, T), z));
}

/* Trainable parameters P at e_w bytes with fp32 master copies where e_w <
 * 4, gradients and optimizer states, ZeRO-sharded over D (mem_plan.c's
 * training state, named for what trains). */
static int push_state(const gm_plan_opts *o, gm_plan_item *out, int n, uint64_t P, uint64_t ew, uint64_t D,
                      bool adapters)
{
    static const char *const opt_names[] = {"adamw_moments", "adamw_8bit_moments", "sgd", "momentum"};
    if (adapters)
        n = push(out, n, "adapters", GM_PLAN_WEIGHTS, share(mul(P, ew), o->zero >= 3 ? D : 1));
    else
        n = push(out, n, "weights", GM_PLAN_WEIGHTS, share(mul(P, ew), o->zero >= 3 ? D : 1));
    if (ew < 4)
        n = push(out, n, adapters ? "adapter_master_fp32" : "master_weights_fp32", GM_PLAN_WEIGHTS,
                 share(mul(P, 4), o->zero >= 1 ? D : 1));
    n = push(out, n, adapters ? "adapter_gradients" : "gradients", GM_PLAN_GRADIENTS,
             share(mul(P, ew), o->zero >= 2 ? D : 1));
    if (o->optimizer != GM_OPTIM_SGD)
        n = push(out, n, opt_names[o->optimizer], GM_PLAN_OPTIMIZER,
                 share(gm_optimizer_bytes(o->optimizer, P), o->zero >= 1 ? D : 1));
    return n;
}

int gm_plan_tune(const gm_arch *a, const gm_plan_opts *o, gm_plan_item *out)
{
    if (o->gpus == 0 || o->tp == 0 || o->gpus % o->tp || o->zero < 0 || o->zero > 3 || !gm_plan_trains(o->mode))
        return -1;
    if (o->prec == GM_INT8 || o->prec == GM_INT4 || o->kv_prec || o->act_prec || o->int4_lm_head)
        return -1;
    if (o->weight_prec && !(o->mode == GM_PLAN_QLORA && o->weight_prec == GM_INT4 + 1))
        return -1;
    gm_precision pa = o->tune.adapter_prec ? (gm_precision)(o->tune.adapter_prec - 1) : GM_FP32;
    if (pa != GM_FP32 && pa != GM_FP16 && pa != GM_BF16)
        return -1;
    const bool full = o->mode == GM_PLAN_TRAIN, torch = o->tune.saved == GM_SAVED_PYTORCH;
    const uint64_t e = gm_precision_size(o->prec), T = o->tp, D = o->gpus / o->tp, b = o->batch, s = o->seq;
    const uint64_t tokens = mul(b, s), th = mul(tokens, a->hidden), tv = share(mul(tokens, a->vocab), T);
    int n = 0;
    if (full) {
        n = push_state(o, out, n, share(gm_arch_params(a), T), e, D, false);
    } else {
        n = push_base(a, o, out, n, D);
        n = push_state(o, out, n, share(gm_lora_params(a, &o->tune), T), gm_precision_size(pa), D, true);
    }
    n = push(out, n, "layers_saved", GM_PLAN_ACTIVATIONS,
             mul(gm_layer_tune_activations(a, o, b, s, o->recompute), a->layers));
    /* The final norm's input (its fp32 upcast and 1/rms in PyTorch), and
     * where the LM head learns its input too (PyTorch: and the normalised
     * input, for the norm's weight). */
    uint64_t head = torch ? add(mul(4, th), mul(4, tokens)) : mul(e, th);
    if (full)
        head = add(head, mul(torch ? 2 * e : e, th));
    n = push(out, n, "head_inputs", GM_PLAN_ACTIVATIONS, head);
    uint64_t layer = o->recompute == GM_RECOMPUTE_FULL ? gm_layer_tune_activations(a, o, b, s, GM_RECOMPUTE_NONE) : 0;
    uint64_t dequant = o->mode == GM_PLAN_QLORA ? dequant_buffer(a, e, T) : 0;
    uint64_t scores = o->naive && o->recompute != GM_RECOMPUTE_NONE ? share(mul3(4, mul(a->heads, s), mul(s, b)), T) : 0;
    if (torch) {
        /* PyTorch's peak is the larger of two moments. The loss's: F.
         * cross_entropy over the fp32 upcast of the logits keeps the fp32
         * log-softmax, and its backward holds that, the gradient
         * nll_loss gives it and the one it returns, three fp32 [tokens,
         * V] tensors. A recomputed layer's: its tensors again, its
         * projections' weights dequantised (QLoRA). */
        uint64_t loss = mul(3 * 4, tv), phase = add(add(layer, dequant), scores);
        if (loss >= phase)
            n = push(out, n, "loss_fp32", GM_PLAN_ACTIVATIONS, loss);
        else
            n = push(out, n, layer ? "recomputed_layer" : "dequant_buffer", GM_PLAN_WORKSPACE, phase);
        return gm_plan_offload(a, o, out, n);
    }
    /* gpumem's step allocates every tensor for the whole step: the fp32
     * logits, which one kernel turns into the loss and its gradient
     * (softmax - one-hot) / tokens in place, that gradient in the compute
     * precision for the head's backward products, one recomputed layer,
     * the backward's workspace and QLoRA's dequantisation buffer. */
    n = push(out, n, "logits_fp32", GM_PLAN_ACTIVATIONS, mul(4, tv));
    if (e < 4)
        n = push(out, n, "dlogits", GM_PLAN_ACTIVATIONS, mul(e, tv));
    if (layer)   /* all of its tensors but its input, which the layers keep (mem_plan.c's too) */
        n = push(out, n, "recomputed_layer", GM_PLAN_ACTIVATIONS,
                 layer - gm_layer_tune_activations(a, o, b, s, GM_RECOMPUTE_FULL));
    n = push(out, n, "backward_workspace", GM_PLAN_WORKSPACE, gm_plan_backward_workspace(a, o, b, s));
    /* Each token's target (the frozen embedding needs no segments) and
     * the rotary tables. */
    n = push(out, n, "targets", GM_PLAN_WORKSPACE, mul(4, tokens));
    if (gm_plan_rope_tables(a, s))
        n = push(out, n, "rope_tables", GM_PLAN_WORKSPACE, gm_plan_rope_tables(a, s));
    if (dequant)
        n = push(out, n, "dequant_buffer", GM_PLAN_WORKSPACE, dequant);
    if (scores)
        n = push(out, n, "attention_scores", GM_PLAN_WORKSPACE, scores);
    return gm_plan_offload(a, o, out, n);
}

/* One layer's trainable parameters' bytes at e_w: its projections (and
 * experts) and norms, or its adapters. */
static uint64_t layer_trainable(const gm_arch *a, const gm_plan_opts *o, uint64_t ew)
{
    if (o->mode != GM_PLAN_TRAIN)
        return share(mul(gm_lora_params(a, &o->tune), ew), a->layers);
    uint64_t elems = 0, in, out;
    for (int i = 0; i < GM_LORA_TARGET_COUNT; i++)
        if (gm_lora_shape(a, (gm_lora_target)i, &in, &out))
            elems = add(elems, mul3(in, out, (BIT(i) & MLP_TARGETS) && a->experts ? a->experts : 1));
    return mul(add(elems, mul(2, a->hidden)), ew);
}

/*
 * ZeRO-Offload (Ren et al. 2021, section 4.1): the fp32 master weights,
 * the optimizer states and the step live in host memory, and so do the
 * 16-bit gradients, moved there as the backward produces them; the
 * device keeps its weights and one module's gradients on their way out
 * (a layer's, or the LM head's where larger: gpumem's step, model_offload.c).
 * With parameters too (ZeRO-3's offload_param, ZeRO-Infinity) the
 * weights live in host memory and the device holds the modules it runs:
 * two layers' weights (the one running, the next one fetched) or the LM
 * head's, whichever is larger.
 */
int gm_plan_offload(const gm_arch *a, const gm_plan_opts *o, gm_plan_item *out, int n)
{
    if (o->tune.offload == GM_OFFLOAD_NONE || n < 0 || !gm_plan_trains(o->mode))
        return n;
    const uint64_t e = gm_precision_size(o->prec), T = o->tp ? o->tp : 1;
    const bool full = o->mode == GM_PLAN_TRAIN;
    gm_precision pa = o->tune.adapter_prec ? (gm_precision)(o->tune.adapter_prec - 1) : GM_FP32;
    const uint64_t ew = full ? e : gm_precision_size(pa);
    uint64_t weights = 0;
    for (int i = 0; i < n; i++) {
        gm_plan_item *it = &out[i];
        bool state = it->role == GM_PLAN_GRADIENTS || it->role == GM_PLAN_OPTIMIZER
                     || (it->role == GM_PLAN_WEIGHTS && strstr(it->name, "master"));
        bool param = it->role == GM_PLAN_WEIGHTS && !strstr(it->name, "master");
        if (state || (param && o->tune.offload == GM_OFFLOAD_PARAMS)) {
            it->host = true;
            weights = param ? add(weights, it->bytes) : weights;
        }
    }
    /* The device's buffer holds the gradients of one module at a time on
     * their way out: a layer's, or in full fine-tuning the LM head's (and
     * the embedding's), which one product writes whole, where larger
     * (Llama-3-8B's head: 525M parameters against a layer's 218M). */
    uint64_t buffer = share(layer_trainable(a, o, ew), T), head_grad = share(mul3(a->hidden, a->vocab, ew), T);
    n = push(out, n, "gradient_buffer", GM_PLAN_GRADIENTS, full && head_grad > buffer ? head_grad : buffer);
    if (o->tune.offload == GM_OFFLOAD_PARAMS) {
        uint64_t two_layers = mul(2, share(weights, a->layers));
        uint64_t head = share(mul3(a->hidden, a->vocab, e), T);
        n = push(out, n, "fetched_weights", GM_PLAN_WEIGHTS, two_layers > head ? two_layers : head);
    }
    return n;
}

int gm_plan_tune_check(const gm_arch *a, const gm_plan_opts *o, char *err, size_t err_len)
{
    const gm_tune_opts *t = &o->tune;
    if (o->mode != GM_PLAN_LORA && o->mode != GM_PLAN_QLORA)
        return 0;
    uint64_t in, out;
    for (int i = 0; i < GM_LORA_TARGET_COUNT; i++) {
        if (!(t->targets & BIT(i)) || gm_lora_shape(a, (gm_lora_target)i, &in, &out))
            continue;
        char has[80] = "";
        for (int j = 0, k = 0; j < GM_LORA_TARGET_COUNT; j++)
            if (gm_lora_shape(a, (gm_lora_target)j, &in, &out))
                k += snprintf(has + k, sizeof has - (size_t)k, "%s%s", k ? "," : "", gm_lora_target_names[j]);
        snprintf(err, err_len, "--lora-targets %s: model %s has no %s projection (its plain MLP is not gated; it "
                 "has %s)", gm_lora_target_names[i], a->name, gm_lora_target_names[i], has);
        return -1;
    }
    unsigned targets = gm_lora_targets(a, t);
    uint64_t r = gm_lora_rank(t);
    for (int i = 0; i < GM_LORA_TARGET_COUNT; i++) {
        if (!(targets & BIT(i)) || !gm_lora_shape(a, (gm_lora_target)i, &in, &out) || (r <= in && r <= out))
            continue;
        snprintf(err, err_len, "--lora-rank %llu: above the width of %s in %s (%llu inputs, %llu outputs: a rank "
                 "of at most %llu)", (unsigned long long)r, gm_lora_target_names[i], a->name,
                 (unsigned long long)in, (unsigned long long)out, (unsigned long long)(in < out ? in : out));
        return -1;
    }
    if (o->mode == GM_PLAN_QLORA && o->weight_prec && o->weight_prec != GM_INT4 + 1) {
        snprintf(err, err_len, "--weight-precision %s with --mode qlora: QLoRA's frozen base is 4-bit (NF4 codes "
                 "with double-quantised block scales); give int4 or leave it out (--mode lora keeps a 16-bit base)",
                 gm_precision_name((gm_precision)(o->weight_prec - 1)));
        return -1;
    }
    return 0;
}
