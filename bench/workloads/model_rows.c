/*
 * What the whole model's rows say (bench/workloads/block_model.h): which
 * implementation ran each kind of product, and the parts of its model
 * FLOPs utilization.
 */
#include "bench/workloads/model_private.h"

#include <stdio.h>

double model_flops(const model_state *st)
{
    double T = (double)st->run_T, L = (double)st->L, h = (double)st->h;
    double layers = L * (double)st->per_layer + h;          /* and the final norm */
    double forward = 2.0 * layers * T + 2.0 * h * (double)st->V * (double)model_head_rows(st)
                     + 4.0 * L * (double)st->run_seq * (double)st->ad * T;
    /* Training: the backward's two products for each of the forward's
     * (dX and dW; attention's dQ and dK, dV), PaLM's 6 a parameter and token. */
    /* LoRA: the frozen base's backward is dX alone (as many as its
     * forward), the adapters' 6 a parameter and token (model_lora.c). */
    if (st->lora)
        return 2.0 * forward + 6.0 * T * (double)st->lora_p;
    return st->train ? 3.0 * forward : forward;
}

void block_model_describe(void *state, char *note, size_t len)
{
    model_state *st = state;
    char proj[96], attn[160], head[96];
    gm_mm_tally_describe(&st->mm, &st->tally_proj, proj, sizeof proj);
    if (st->attn_gemm) {
        char gemm[96];
        gm_mm_tally_describe(&st->mm, &st->tally_attn, gemm, sizeof gemm);
        snprintf(attn, sizeof attn, "%s QK^T and PV over %llu-query chunks, softmax ours", gemm,
                 (unsigned long long)st->attn_rows);
    } else {
        snprintf(attn, sizeof attn, "attention_tiled (ours)");
    }
    if ((st->vendor || st->train) && !st->int4_head)
        gm_mm_tally_describe(&st->mm, &st->tally_head, head, sizeof head);
    else
        snprintf(head, sizeof head, "%s (ours)", st->int4_head ? "model_lm_head_int4" : "model_lm_head");
    int n = snprintf(note, len, "projections: %s; attention: %s; LM head: %s%s%s", proj, attn, head,
                     st->pcheck_note[0] ? "; " : "", st->pcheck_note);
    if (st->train && n > 0 && (size_t)n < len) {
        static const char *const kept[] = {"", "; attention recomputed", "; layers recomputed"};
        char bwd[96];
        gm_mm_tally_describe(&st->mm, &st->tally_bwd, bwd, sizeof bwd);
        n += snprintf(note + n, len - (size_t)n, "; backward products: %s%s%s%s", bwd,
                      st->pcheck_bwd_note[0] ? ", " : "", st->pcheck_bwd_note, kept[st->recompute]);
    }
    /* Full training: the step's FLOP rate beside the forward's, timed here
     * (model_time_forward_and_step), where nothing times it otherwise. */
    double fwd, step, ratio;
    if (st->train && !st->lora && n > 0 && (size_t)n < len
        && model_time_forward_and_step(st, &fwd, &step, &ratio) == GM_OK)
        n += snprintf(note + n, len - (size_t)n,
                      "; step FLOP rate %.2f x the forward's (3 x forward %.3g ms over step %.3g ms, medians of "
                      "%d pairs timed in turn)",
                      ratio, fwd, step, MODEL_STEP_PAIRS);
    if (st->lora && n > 0 && (size_t)n < len)
        n += snprintf(note + n, len - (size_t)n, "; LoRA r %llu on %llu projections a layer, alpha/r %g%s",
                      (unsigned long long)st->rank, (unsigned long long)st->n_adapted, (double)st->lora_scale,
                      st->nf4 ? ", the base in NF4 dequantised for each product (train_nf4_dequant)" : "");
    if (st->zoff && n > 0 && (size_t)n < len)
        n += snprintf(note + n, len - (size_t)n, "; ZeRO-Offload: fp32 master weights, AdamW moments and gradients in "
                      "pinned host memory, AdamW on the host");
    if (st->mm.refused[0] && n > 0 && (size_t)n < len)
        snprintf(note + n, len - (size_t)n, "; ours where the vendor refused: %s", st->mm.refused);
}

bool block_model_utilization(void *state, double *flops, double *peak, char *basis, size_t len)
{
    model_state *st = state;
    *flops = model_flops(st);
    *peak = st->peak;
    snprintf(basis, len, "model FLOPs %.4g an iteration (PaLM's: 2 a token for each of the %.4g non-embedding "
             "parameters, the LM head on %s; attention 4 x layers x seq x heads x head_dim a token, causal "
             "masking not discounted%s) over %s", *flops,
             (double)st->L * (double)st->per_layer + (double)st->h + (st->tied ? 0.0 : (double)st->h * (double)st->V),
             st->train ? "every token" : "each sequence's last token",
             st->lora    ? "; LoRA: 2 x the forward's, the frozen base's backward its dX alone, and 6 a token for "
                           "each adapter parameter"
             : st->train ? "; training: 3 x the forward's, its backward twice its products"
                         : "", st->peak_basis);
    return st->peak > 0;
}
