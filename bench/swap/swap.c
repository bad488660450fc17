/*
 * The swap suite: what moving memory between host and device costs, as
 * latency distributions and bandwidth, every payload checked.
 *   transfer   copies of each block size by three host-memory paths
 *              (bench/swap/transfer.c)
 *   kv-blocks  KV-cache blocks swapped out and in, in batches, under
 *              memory pressure (bench/swap/blocks.c)
 *   unified    managed memory: faults, prefetch, eviction, and the
 *              oversubscription sweep (bench/swap/unified.c)
 *   offload    the block workload with its weights streamed from host
 *              memory against the same run resident (bench/swap/offload.c)
 */
#include "bench/swap/parts.h"

static int swap_count(gm_bench *b)
{
    return gm_swap_transfer_count(b) + gm_swap_blocks_count(b) + gm_swap_unified_count(b) + gm_swap_offload_count(b);
}

static int swap_run(gm_bench *b)
{
    int rc = gm_swap_transfer_run(b);
    if (rc == 0)
        rc = gm_swap_blocks_run(b);
    if (rc == 0)
        rc = gm_swap_unified_run(b);
    if (rc == 0)
        rc = gm_swap_offload_run(b);
    return gm_bench_suite_end(b, rc);
}

const gm_suite gm_suite_swap = {
    .name = "swap",
    .summary = "host<->device transfers, KV-block swapping and unified-memory migration",
    .count_points = swap_count,
    .run = swap_run,
};
