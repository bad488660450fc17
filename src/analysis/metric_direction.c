/* The metric-direction table (see metric_direction.h). Entries marked
 * prefix cover every name that starts with them, so every latency
 * percentile (latency_p50, alloc_latency_p99, ...) is covered. */
#include "analysis/metric_direction.h"

#include <string.h>

static const struct {
    const char *name;
    gm_metric_direction dir;
    int prefix;                 /* matches names starting with `name` */
} table[] = {
    {"time", GM_BETTER_LOWER, 0},
    {"latency_", GM_BETTER_LOWER, 1},
    {"alloc_latency_", GM_BETTER_LOWER, 1},
    {"free_latency_", GM_BETTER_LOWER, 1},
    {"offload_penalty", GM_BETTER_LOWER, 0},
    /* a --zero-offload training step's parts (bench/workloads/model_offload.c) */
    {"offload_transfer_time", GM_BETTER_LOWER, 0},
    {"host_adamw_time", GM_BETTER_LOWER, 0},
    {"device_compute_time", GM_BETTER_LOWER, 0},
    {"max_batch_lost", GM_BETTER_LOWER, 0},
    {"fragmentation", GM_BETTER_LOWER, 0},
    {"errors", GM_BETTER_LOWER, 0},
    {"leaked", GM_BETTER_LOWER, 0},
    {"corrupt_payloads", GM_BETTER_LOWER, 0},
    {"wrong_buffers", GM_BETTER_LOWER, 0},
    {"bandwidth", GM_BETTER_HIGHER, 0},
    {"throughput", GM_BETTER_HIGHER, 0},
    {"tokens", GM_BETTER_HIGHER, 0},
    {"mfu", GM_BETTER_HIGHER, 0},       /* model FLOPs utilization, % of the device's peak */
    {"max_batch", GM_BETTER_HIGHER, 0},
    {"max_batch_halving", GM_BETTER_HIGHER, 0},
    {"degraded_batch", GM_BETTER_HIGHER, 0},
    {"largest_alloc", GM_BETTER_HIGHER, 0},
    {"largest_total", GM_BETTER_HIGHER, 0},
    {"largest_free_block", GM_BETTER_HIGHER, 0},
    {"overlap_hidden", GM_BETTER_HIGHER, 0},
    {"exhausted", GM_BETTER_HIGHER, 0},
    {"allocations", GM_BETTER_HIGHER, 0},
    /* serving: the KV pool a card keeps, the requests it holds, decode
     * against the memory's roofline (latency_per_* above) */
    {"kv_pool_tokens", GM_BETTER_HIGHER, 0},
    {"max_concurrency", GM_BETTER_HIGHER, 0},
    {"roofline_share", GM_BETTER_HIGHER, 0},
    /* Facts, not performances: the memory model's answer (the same on every
     * device), how many probes a search took, the model's share of memory. */
    {"max_batch_model", GM_BETTER_NEITHER, 0},
    {"probes", GM_BETTER_NEITHER, 0},
    {"device_fraction", GM_BETTER_NEITHER, 0},
    {"kv_pool_vs_plan", GM_BETTER_NEITHER, 0},
    {"occupancy", GM_BETTER_NEITHER, 0},
    {"step_bytes", GM_BETTER_NEITHER, 0},
    {"host_bytes", GM_BETTER_NEITHER, 0},
    {"roofline_time", GM_BETTER_NEITHER, 0},
    /* the check of a point's output on the host, outside its timing */
    {"verify_time", GM_BETTER_NEITHER, 0},
};

gm_metric_direction gm_metric_direction_of(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        size_t len = strlen(table[i].name);
        if (table[i].prefix ? strncmp(name, table[i].name, len) == 0 : strcmp(name, table[i].name) == 0)
            return table[i].dir;
    }
    return GM_BETTER_NEITHER;
}
