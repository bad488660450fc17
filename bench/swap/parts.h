/* The swap suite's parts (bench/swap/swap.c runs them in this order). */
#ifndef GM_SWAP_PARTS_H
#define GM_SWAP_PARTS_H

#include "bench/swap/common.h"
#include "lib/units.h"

/* Each part: how many points it has, and running them (0, or -1 when the
 * run must stop). */
int gm_swap_transfer_count(gm_bench *b);
int gm_swap_transfer_run(gm_bench *b);
int gm_swap_blocks_count(gm_bench *b);
int gm_swap_blocks_run(gm_bench *b);
int gm_swap_unified_count(gm_bench *b);
int gm_swap_unified_run(gm_bench *b);
int gm_swap_offload_count(gm_bench *b);
int gm_swap_offload_run(gm_bench *b);

#endif
