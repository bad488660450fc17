/* The serve suite's scheduler (bench/serve/sched.h). */
#include "bench/serve/sched.h"

#include <stdlib.h>
#include <string.h>

static uint64_t cdiv(uint64_t x, uint64_t y) { return x / y + (x % y != 0); }

/* Tokens a request's prefill brings into the pool: its prompt (the last
 * prompt row samples its first token), or after a recompute its prompt
 * and every generated token but the last (which its next decode row
 * runs). */
static uint64_t target(const serve_request *r)
{
    return r->generated ? r->prompt + r->generated - 1 : r->prompt;
}

/* The token at position p of request i. */
static uint32_t token_at(const serve_sched *s, uint64_t i, uint64_t p)
{
    const serve_request *r = &s->req[i];
    if (p >= r->prompt)
        return r->tokens[p - r->prompt];
    return serve_prompt_token(i >= s->copy_from ? 0 : i, p, s->e->V);
}

gm_status serve_sched_init(serve_sched *s, serve_engine *e, uint64_t n, uint64_t prompt, uint64_t output,
                           uint64_t copy_from, unsigned preempt, uint64_t host_blocks)
{
    memset(s, 0, sizeof *s);
    s->e = e;
    s->n_req = n;
    s->copy_from = copy_from ? copy_from : n;
    s->preempt = preempt;
    s->host_blocks = host_blocks;
    uint64_t blocks = e->d.pool_blocks, slots = e->d.max_seqs, mb = e->d.max_blocks;
    s->req = calloc(n, sizeof *s->req);
    s->free_blocks = malloc(blocks * sizeof *s->free_blocks);
    s->free_slots = malloc(slots * sizeof *s->free_slots);
    s->running = malloc(slots * sizeof *s->running);
    s->queue = malloc((n ? n : 1) * sizeof *s->queue);
    s->host_free = malloc((host_blocks ? host_blocks : 1) * sizeof *s->host_free);
    s->sampled = malloc(slots * sizeof *s->sampled);
    bool ok = s->req && s->free_blocks && s->free_slots && s->running && s->queue && s->host_free && s->sampled;
    for (uint64_t i = 0; ok && i < n; i++) {
        serve_request *r = &s->req[i];
        r->prompt = prompt;
        r->output = output;
        r->slot = -1;
        r->blocks = malloc(mb * sizeof *r->blocks);
        r->tokens = malloc((output ? output : 1) * sizeof *r->tokens);
        r->host = malloc(mb * sizeof *r->host);
        ok = r->blocks && r->tokens && r->host;
    }
    if (!ok)
        return gm_device_fail(e->dev, GM_ERR_OOM, 0, "out of host memory");
    /* Blocks are handed out from the top of the stack: block 0 first. */
    for (uint64_t b = 0; b < blocks; b++)
        s->free_blocks[b] = (int32_t)(blocks - 1 - b);
    s->n_free = blocks;
    for (uint64_t k = 0; k < slots; k++)
        s->free_slots[k] = (int)(slots - 1 - k);
    s->n_free_slots = slots;
    for (uint64_t h = 0; h < host_blocks; h++)
        s->host_free[h] = host_blocks - 1 - h;
    s->n_host_free = host_blocks;
    s->resuming = -1;
    if (host_blocks)
        return gm_device_alloc(e->dev, GM_MEM_PINNED, (size_t)(host_blocks * serve_block_bytes(&e->d)), &s->host);
    return GM_OK;
}

void serve_sched_release(serve_sched *s)
{
    for (uint64_t i = 0; s->req && i < s->n_req; i++) {
        free(s->req[i].blocks);
        free(s->req[i].tokens);
        free(s->req[i].host);
    }
    free(s->req);
    free(s->free_blocks);
    free(s->free_slots);
    free(s->running);
    free(s->queue);
    free(s->host_free);
    free(s->sampled);
    if (s->e)
        gm_device_free(s->e->dev, &s->host);
    memset(s, 0, sizeof *s);
}

uint64_t serve_sched_used_blocks(const serve_sched *s) { return s->e->d.pool_blocks - s->n_free; }

uint64_t serve_sched_held_tokens(const serve_sched *s)
{
    uint64_t n = 0;
    for (uint64_t k = 0; k < s->n_running; k++)
        n += s->req[s->running[k]].computed;
    return n;
}

uint64_t serve_sched_decoding(const serve_sched *s)
{
    uint64_t n = 0;
    for (uint64_t k = 0; k < s->n_running; k++)
        n += s->req[s->running[k]].generated > 0;
    return n;
}

uint64_t serve_sched_done(const serve_sched *s)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < s->n_req; i++)
        n += s->req[i].state == REQ_DONE;
    return n;
}

/* Gives request r blocks until it holds `tokens` tokens' worth; false
 * (and none taken) if the pool has too few free. */
static bool take_blocks(serve_sched *s, serve_request *r, uint64_t tokens)
{
    uint64_t want = cdiv(tokens, s->e->d.block_tokens);
    if (want > s->e->d.max_blocks || (want > r->n_blocks && want - r->n_blocks > s->n_free))
        return false;
    while (r->n_blocks < want) {
        int32_t b = s->free_blocks[--s->n_free];
        r->blocks[r->n_blocks] = b;
        serve_table_set(s->e, (unsigned)r->slot, (unsigned)r->n_blocks++, b);
    }
    uint64_t used = serve_sched_used_blocks(s);
    s->peak_blocks = used > s->peak_blocks ? used : s->peak_blocks;
    return true;
}

static void give_back_blocks(serve_sched *s, serve_request *r)
{
    while (r->n_blocks)
        s->free_blocks[s->n_free++] = r->blocks[--r->n_blocks];
}

static void take_slot(serve_sched *s, uint64_t i)
{
    serve_request *r = &s->req[i];
    r->slot = s->free_slots[--s->n_free_slots];
    r->state = REQ_RUNNING;
    s->running[s->n_running++] = i;
}

/* Takes request i off the running list and gives its slot back. */
static void leave_running(serve_sched *s, uint64_t i)
{
    serve_request *r = &s->req[i];
    for (uint64_t k = 0; k < s->n_running; k++)
        if (s->running[k] == i) {
            memmove(&s->running[k], &s->running[k + 1], (s->n_running - k - 1) * sizeof *s->running);
            s->n_running--;
            break;
        }
    s->free_slots[s->n_free_slots++] = r->slot;
    r->slot = -1;
}

typedef struct {
    serve_sched *s;
    serve_request *r;
    bool in;
} swap_ctx;

static gm_status swap_copies(void *ctx)
{
    swap_ctx *c = ctx;
    size_t bytes = (size_t)serve_block_bytes(&c->s->e->d);
    gm_status rc = GM_OK;
    for (uint64_t k = 0; k < c->r->n_blocks && rc == GM_OK; k++)
        rc = c->in ? serve_block_in(c->s->e, c->r->blocks[k], &c->s->host, (size_t)c->r->host[k] * bytes)
                   : serve_block_out(c->s->e, c->r->blocks[k], &c->s->host, (size_t)c->r->host[k] * bytes);
    return rc;
}

/* Preempts the request admitted last: its blocks to host memory (swap,
 * where the host pool has room) or dropped (recompute); it waits at the
 * front of the queue. */
static gm_status preempt_last(serve_sched *s)
{
    uint64_t i = s->running[s->n_running - 1];
    serve_request *r = &s->req[i];
    bool both = s->preempt == (GM_PREEMPT_SWAP | GM_PREEMPT_RECOMPUTE);
    unsigned mode = !both                ? (s->preempt == GM_PREEMPT_SWAP ? 0u : 1u)
                    : !s->cost[0].count ? 0u
                    : !s->cost[1].count ? 1u
                                        : s->next_mode++ % 2;
    if (mode == 0 && r->n_blocks > s->n_host_free)
        mode = 1;
    gm_status rc = GM_OK;
    serve_preempt_cost *c = &s->cost[mode];
    if (mode == 0) {
        for (uint64_t k = 0; k < r->n_blocks; k++)
            r->host[k] = s->host_free[--s->n_host_free];
        swap_ctx ctx = {s, r, false};
        double ms = 0;
        rc = gm_time_on_queue(s->e->dev, 0, swap_copies, &ctx, &ms);
        c->out_ms += ms;
        r->state = REQ_SWAPPED;
    } else {
        r->state = REQ_WAITING;
    }
    r->recompute = mode == 1;
    c->count++;
    c->blocks += r->n_blocks;
    c->tokens += r->computed;
    if (mode == 1) {
        give_back_blocks(s, r);
        r->computed = 0;
    }
    leave_running(s, i);
    if (mode == 0) {
        /* The host holds its blocks now: the device's are free. */
        uint64_t n = r->n_blocks;
        give_back_blocks(s, r);
        r->n_blocks = n;        /* how many it will take back */
    }
    memmove(&s->queue[1], &s->queue[0], s->n_queue * sizeof *s->queue);
    s->queue[0] = i;
    s->n_queue++;
    return rc;
}

/* A decoding request i found no free block: the request admitted last is
 * preempted; with both ways asked and neither taken yet, one request each
 * way, so that both are timed. */
static gm_status shortage(serve_sched *s, uint64_t i)
{
    bool first = s->preempt == (GM_PREEMPT_SWAP | GM_PREEMPT_RECOMPUTE) && !s->cost[0].count && !s->cost[1].count;
    gm_status rc = preempt_last(s);
    if (rc == GM_OK && first && s->n_running && s->running[s->n_running - 1] != i)
        rc = preempt_last(s);
    return rc;
}

/* Swaps the first queued request back in when blocks and a slot are
 * free: its blocks into free ones, copied back and compared with the
 * host's copy byte for byte (*same false if they differ). */
static gm_status swap_in(serve_sched *s, uint64_t i, double *ms, bool *same)
{
    serve_request *r = &s->req[i];
    uint64_t n = r->n_blocks;
    r->n_blocks = 0;
    take_slot(s, i);
    take_blocks(s, r, n * s->e->d.block_tokens);
    swap_ctx ctx = {s, r, true};
    gm_status rc = gm_time_on_queue(s->e->dev, 0, swap_copies, &ctx, ms);
    size_t bytes = (size_t)serve_block_bytes(&s->e->d);
    gm_buffer back;
    if (rc == GM_OK)
        rc = gm_device_alloc(s->e->dev, GM_MEM_HOST, bytes, &back);
    for (uint64_t k = 0; k < n && rc == GM_OK && *same; k++) {
        rc = s->e->dev->backend->copy(s->e->dev, 0, &back, 0, &s->e->buf[SB_POOL], (size_t)r->blocks[k] * bytes, bytes,
                                      false);
        *same = rc != GM_OK || memcmp(back.host, (const char *)s->host.host + r->host[k] * bytes, bytes) == 0;
    }
    if (rc == GM_OK)
        gm_device_free(s->e->dev, &back);
    for (uint64_t k = 0; k < n; k++)
        s->host_free[s->n_host_free++] = r->host[k];
    r->state = REQ_RUNNING;
    return rc;
}

/* Request i takes request 0's prompt: its blocks hold copies of request
 * 0's prompt blocks, and its first token is request 0's. */
static gm_status clone_first(serve_sched *s, uint64_t i)
{
    serve_request *r = &s->req[i], *first = &s->req[0];
    take_slot(s, i);
    take_blocks(s, r, r->prompt);
    size_t bytes = (size_t)serve_block_bytes(&s->e->d);
    gm_status rc = GM_OK;
    for (uint64_t k = 0; k < r->n_blocks && rc == GM_OK; k++)
        rc = s->e->dev->backend->copy(s->e->dev, 0, &s->e->buf[SB_POOL], (size_t)r->blocks[k] * bytes,
                                      &s->e->buf[SB_POOL], (size_t)first->blocks[k] * bytes, bytes, true);
    r->computed = r->prompt;
    r->tokens[0] = first->tokens[0];
    r->generated = 1;
    return rc;
}

static bool first_ready(const serve_sched *s)
{
    const serve_request *f = &s->req[0];
    return f->state == REQ_RUNNING && f->generated >= 1 && f->computed >= f->prompt;
}

/* Prefill rows of request i from its `computed` on, at most `budget`,
 * taking blocks as far as the pool allows. Returns the rows added. */
static uint32_t add_prefill(serve_sched *s, uint64_t i, uint32_t budget)
{
    serve_request *r = &s->req[i];
    uint64_t to = target(r), chunk = to - r->computed < budget ? to - r->computed : budget;
    uint64_t room = (r->n_blocks + s->n_free) * s->e->d.block_tokens;    /* tokens the blocks could hold */
    if (r->computed + chunk > room)
        chunk = room > r->computed ? room - r->computed : 0;
    if (chunk && !take_blocks(s, r, r->computed + chunk))
        chunk = 0;
    for (uint64_t p = r->computed; p < r->computed + chunk; p++)
        serve_step_add(s->e, (unsigned)r->slot, p, token_at(s, i, p), false, p + 1 == to && !r->generated);
    return (uint32_t)chunk;
}

gm_status serve_sched_step(serve_sched *s, unsigned what, uint64_t max_running, bool verify, unsigned rep,
                           serve_step_info *info, bool *correct, char *note, size_t note_len)
{
    serve_engine *e = s->e;
    memset(info, 0, sizeof *info);
    *correct = true;
    gm_status rc = GM_OK;
    uint32_t budget = (uint32_t)e->d.max_tokens;
    int64_t *pos_of = NULL;
    serve_step_begin(e);
    if (what & SCHED_RESUME) {
        /* A recompute under way goes on; else the first queued request
         * resumes when a slot and its blocks are free. */
        if (s->resuming < 0) {
            if (!s->n_queue || !s->n_free_slots)
                return GM_OK;
            uint64_t i = s->queue[0];
            serve_request *r = &s->req[i];
            uint64_t need = r->recompute ? cdiv(target(r) + 1, e->d.block_tokens) : r->n_blocks;
            if (need > s->n_free)
                return GM_OK;
            memmove(&s->queue[0], &s->queue[1], --s->n_queue * sizeof *s->queue);
            info->resume = true;
            info->requests = 1;
            if (!r->recompute) {
                s->cost[0].restored++;
                rc = swap_in(s, i, &info->ms, correct);
                s->cost[0].in_ms += info->ms;
                if (!*correct)
                    snprintf(note, note_len, "a swapped sequence's blocks differ from its host copy after the "
                             "swap in");
                s->verify_next_decode = true;
                return rc;
            }
            take_slot(s, i);
            s->resuming = (int64_t)i;
        }
        info->resume = true;
        info->prefill_rows = add_prefill(s, (uint64_t)s->resuming, budget);
    } else {
        /* Decode rows first, in admission order; a request that needs a
         * block when none is free preempts the request admitted last. */
        for (uint64_t k = 0; (what & SCHED_DECODE) && k < s->n_running && rc == GM_OK; k++) {
            uint64_t i = s->running[k];
            serve_request *r = &s->req[i];
            if (!r->generated || r->computed != target(r))
                continue;
            while (!take_blocks(s, r, r->computed + 1) && rc == GM_OK && s->running[s->n_running - 1] != i)
                rc = shortage(s, i);
            if (rc != GM_OK || r->slot < 0 || r->n_blocks * e->d.block_tokens <= r->computed) {
                if (rc == GM_OK && r->slot >= 0)
                    rc = preempt_last(s);       /* itself: nothing left to take from */
                k--;
                continue;
            }
            serve_step_add(e, (unsigned)r->slot, r->computed, r->tokens[r->generated - 1], false, true);
            info->decode_rows++;
            info->kv_tokens += r->computed + 1;
            budget--;
        }
        for (uint64_t k = 0; (what & SCHED_PREFILL) && k < s->n_running && budget; k++) {
            uint64_t i = s->running[k];
            if (s->req[i].computed < target(&s->req[i]) && (int64_t)i != s->resuming) {
                uint32_t n = add_prefill(s, i, budget);
                info->prefill_rows += n;
                budget -= n;
            }
        }
        while ((what & SCHED_ADMIT) && !s->n_queue && s->next_new < s->n_req && s->n_running < max_running
               && s->n_free_slots && rc == GM_OK) {
            uint64_t i = s->next_new;
            serve_request *r = &s->req[i];
            if (i >= s->copy_from && first_ready(s)) {
                if (cdiv(r->prompt, e->d.block_tokens) > s->n_free)
                    break;
                rc = clone_first(s, i);
            } else {
                if (!budget || cdiv(r->prompt < budget ? r->prompt : budget, e->d.block_tokens) > s->n_free)
                    break;
                take_slot(s, i);
                uint32_t n = add_prefill(s, i, budget);
                info->prefill_rows += n;
                budget -= n;
            }
            s->next_new++;
        }
    }
    info->rows = e->n_rows;
    if (rc != GM_OK || !info->rows)
        return rc;
    /* The requests the step's rows belong to, by slot. */
    pos_of = calloc(e->d.max_seqs, sizeof *pos_of);
    int64_t *req_of = malloc(e->d.max_seqs * sizeof *req_of);
    if (!pos_of || !req_of) {
        free(pos_of);
        free(req_of);
        return gm_device_fail(e->dev, GM_ERR_OOM, 0, "out of host memory");
    }
    for (uint64_t k = 0; k < s->n_running; k++)
        req_of[s->req[s->running[k]].slot] = (int64_t)s->running[k];
    rc = serve_step_upload(e);
    if (rc == GM_OK)
        rc = gm_time_work(e->dev, 0, serve_step_enqueue, e, &info->ms);
    if (rc == GM_OK && verify && s->fault.kind != GM_OUTPUT_FAULT_NONE)
        rc = serve_step_corrupt(e, &s->fault, rep);
    if (rc == GM_OK && verify)
        rc = serve_step_verify(e, rep, correct, note, note_len);
    if (rc == GM_OK)
        rc = serve_step_commit(e, s->sampled);
    for (uint32_t row = 0; rc == GM_OK && row < e->n_rows; row++) {
        const uint32_t *w = &e->rows[(size_t)row * SERVE_ROW_WORDS];
        pos_of[w[0]] = (int64_t)w[1] + 1;
    }
    for (uint64_t slot = 0; rc == GM_OK && slot < e->d.max_seqs; slot++)
        if (pos_of[slot]) {
            s->req[req_of[slot]].computed = (uint64_t)pos_of[slot];
            info->requests++;
        }
    for (uint32_t l = 0; rc == GM_OK && l < e->n_logits; l++) {
        serve_request *r = &s->req[req_of[e->logit_slot[l]]];
        r->tokens[r->generated++] = s->sampled[l];
    }
    if (info->resume && rc == GM_OK) {
        serve_request *r = &s->req[s->resuming];
        s->cost[1].in_ms += info->ms;
        if (r->computed >= target(r)) {
            s->cost[1].restored++;
            r->recompute = false;
            s->resuming = -1;
        }
    }
    /* Finished requests give their blocks and slots back. */
    for (uint64_t k = s->n_running; rc == GM_OK && k-- > 0;) {
        uint64_t i = s->running[k];
        serve_request *r = &s->req[i];
        if (r->generated >= r->output) {
            give_back_blocks(s, r);
            leave_running(s, i);
            r->state = REQ_DONE;
        }
    }
    free(pos_of);
    free(req_of);
    return rc;
}
