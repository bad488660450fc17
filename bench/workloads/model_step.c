/* One iteration of the whole model (bench/workloads/model_private.h): the
 * forward pass, or a whole training step. */
#include "bench/workloads/model_private.h"

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
