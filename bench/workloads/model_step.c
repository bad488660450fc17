/* One iteration of the whole model (bench/workloads/model_private.h): the
 * forward pass, or a whole training step. */
#include "bench/workloads/model_private.h"

#include "lib/stats.h"

/* Inference: the forward pass. Training: AdamW over the gradients of the
 * iteration before (or set-up's step), then the forward pass, the loss
 * and the backward pass: a whole training step, rotated so that the
 * logits, loss and gradients the check replays belong to the weights the
 * device holds after it. */
gm_status block_model_enqueue(void *state)
{
    model_state *st = state;
    st->xfer_ms = st->host_opt_ms = 0;
    gm_status rc = st->train ? model_adamw(st) : GM_OK;
    if (rc == GM_OK)
        rc = model_forward_pass(st);
    if (rc == GM_OK && st->train)
        rc = model_loss(st);
    return rc == GM_OK && st->train ? model_backward(st) : rc;
}

bool block_model_host_parts(void *state, double *transfer_ms, double *host_ms, uint64_t *host_bytes)
{
    model_state *st = state;
    *transfer_ms = st->xfer_ms;
    *host_ms = st->host_opt_ms;
    *host_bytes = st->host_bytes;
    return st->zoff;
}

static gm_status forward_alone(void *state) { return model_forward_pass(state); }

gm_status model_time_forward_and_step(model_state *st, double *fwd_ms, double *step_ms, double *ratio)
{
    double f[MODEL_STEP_PAIRS], s[MODEL_STEP_PAIRS], r[MODEL_STEP_PAIRS];
    gm_status rc = GM_OK;
    for (int i = 0; i < MODEL_STEP_PAIRS && rc == GM_OK; i++) {
        rc = gm_time_work(st->dev, 0, forward_alone, st, &f[i]);
        if (rc == GM_OK)
            rc = gm_time_work(st->dev, 0, block_model_enqueue, st, &s[i]);
        if (rc == GM_OK)
            r[i] = s[i] > 0 ? 3.0 * f[i] / s[i] : 0.0;
    }
    if (rc != GM_OK)
        return rc;
    *fwd_ms = gm_median_in_place(f, MODEL_STEP_PAIRS);
    *step_ms = gm_median_in_place(s, MODEL_STEP_PAIRS);
    *ratio = gm_median_in_place(r, MODEL_STEP_PAIRS);
    return GM_OK;
}
