/*
 * The serve suite's scheduler: requests of a prompt and a number of
 * output tokens run on a serving engine (bench/workloads/serve_engine.h)
 * as vLLM's V1 scheduler runs them: a request is admitted while the pool
 * has free blocks for its next chunk and a sequence slot is free; each
 * step takes one decode token of every running request whose prompt is
 * done (decode rows first) and fills the rest of its max_tokens rows with
 * prompt chunks; a request's blocks are taken from the pool as its tokens
 * need them and given back when it finishes. When a decoding request
 * needs a block and none is free, the request admitted last is preempted
 * (vLLM preempts the lowest priority, the last of its running queue) and
 * goes back to the front of the queue:
 *   swap       its blocks are copied to pinned host memory and freed; it
 *              resumes by copying them back into free blocks (vLLM's V0
 *              swap preemption);
 *   recompute  its blocks are freed; it resumes by prefilling its prompt
 *              and the tokens it had generated (vLLM V1's preemption).
 * With both asked for, the first shortage preempts the last two requests,
 * one each way, and later ones alternate. Resumption runs in steps of its
 * own, so that what it costs is timed alone.
 *
 * Requests from `copy_from` on do not prefill: their prompt is request
 * 0's, whose blocks are copied into theirs once request 0 is prefilled
 * (and its first token sampled): each sequence reads its own blocks, as
 * if it had prefilled them, without their compute.
 */
#ifndef GM_SERVE_SCHED_H
#define GM_SERVE_SCHED_H

#include "bench/workloads/serve_engine.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum { REQ_WAITING, REQ_RUNNING, REQ_SWAPPED, REQ_DONE } serve_req_state;

typedef struct {
    uint64_t prompt, output;
    uint64_t computed;          /* tokens whose keys and values are in the pool */
    uint64_t generated;         /* output tokens sampled */
    int slot;                   /* -1: none */
    serve_req_state state;
    int32_t *blocks;            /* physical blocks, in order (n_blocks of them) */
    uint64_t n_blocks;
    uint32_t *tokens;           /* the generated tokens */
    uint64_t *host;             /* swapped: the host pool's block of each */
    bool recompute;             /* preempted by recompute (resumes by prefill) */
} serve_request;

/* What a step did. */
typedef struct {
    uint32_t rows, decode_rows, prefill_rows, requests;
    double ms;                  /* its device time */
    uint64_t kv_tokens;         /* tokens the decode rows' sequences hold (what attention reads) */
    bool resume;                /* a resumption step (swap in, or a recompute's prefill) */
} serve_step_info;

/* Preemption costs so far, per mode (0 swap, 1 recompute). */
typedef struct {
    unsigned count;             /* preemptions */
    unsigned restored;          /* of them, resumed */
    uint64_t blocks, tokens;    /* blocks freed and tokens they held, by the restored ones */
    double out_ms, in_ms;       /* swap: copies out and back; recompute: its prefill (in_ms) */
} serve_preempt_cost;

typedef struct {
    serve_engine *e;
    serve_request *req;
    uint64_t n_req, next_new;   /* requests; the first never admitted */
    uint64_t copy_from;         /* requests from here on copy request 0's prompt blocks */
    int32_t *free_blocks;
    uint64_t n_free;
    int *free_slots;
    uint64_t n_free_slots;
    uint64_t *running;          /* request indices, in admission order */
    uint64_t n_running;
    uint64_t *queue;            /* preempted requests waiting, first to resume first */
    uint64_t n_queue;
    unsigned preempt;           /* GM_PREEMPT_* bits */
    unsigned next_mode;         /* alternation when both are asked */
    gm_buffer host;             /* pinned: swapped blocks */
    uint64_t host_blocks;
    uint64_t *host_free;
    uint64_t n_host_free;
    uint64_t peak_blocks;       /* the most blocks held at once */
    serve_preempt_cost cost[2];
    int64_t resuming;           /* the request whose recompute is under way (-1: none) */
    bool verify_next_decode;    /* a swapped-in request is back: check the next decode step */
    gm_output_fault fault;      /* test-only: strike each checked step's output before its check */
    uint32_t *sampled;          /* a step's sampled tokens */
} serve_sched;

/* n requests of `prompt` and `output` tokens on engine e (its pool and
 * slots all free), preempting by `preempt` (GM_PREEMPT_* bits), the swap
 * mode with room for `host_blocks` blocks in pinned host memory. Returns
 * GM_OK, or the status with e->dev->err set. */
gm_status serve_sched_init(serve_sched *s, serve_engine *e, uint64_t n, uint64_t prompt, uint64_t output,
                           uint64_t copy_from, unsigned preempt, uint64_t host_blocks);
void serve_sched_release(serve_sched *s);

/* Which rows a step may take. */
enum {
    SCHED_DECODE = 1u,          /* a decode token of each running request past its prompt */
    SCHED_PREFILL = 2u,         /* prompt chunks of running requests */
    SCHED_ADMIT = 4u,           /* admit new requests */
    SCHED_RESUME = 8u,          /* resume one preempted request (in a step of its own) */
};

/* Builds and runs one step of the rows `what` allows, admitting at most
 * up to `max_running` running requests, times it (gm_time_work), verifies
 * it when `verify` (serve_step_verify; *correct false and note set on a
 * mismatch; with s->fault, the test-only fault, an element of its
 * output struck first) and commits it. info->rows is 0 when there was nothing to do.
 * Returns GM_OK or the failed call's status. */
gm_status serve_sched_step(serve_sched *s, unsigned what, uint64_t max_running, bool verify, unsigned rep,
                           serve_step_info *info, bool *correct, char *note, size_t note_len);

/* Requests running, past their prompt (decoding), and finished. */
uint64_t serve_sched_decoding(const serve_sched *s);
uint64_t serve_sched_done(const serve_sched *s);
/* Blocks in use. */
uint64_t serve_sched_used_blocks(const serve_sched *s);
/* Tokens whose keys and values the blocks in use hold (the running
 * requests' computed tokens): over the blocks' slots, the share of the
 * held KV memory holding token states, the rest the unfilled tail of each
 * sequence's last block (the PagedAttention paper's measure). */
uint64_t serve_sched_held_tokens(const serve_sched *s);

#endif
