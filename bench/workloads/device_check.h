/*
 * A workload's whole-output check on the device: a verify kernel
 * (attention_verify in kernels/attention.cl, kv_verify in
 * kernels/kvcache.cl) recomputes every element of the output outside the
 * timed region and writes, per work group, how many it found wrong and
 * the least index of one (gm_verdict_write in kernels/gm_portable.h).
 * This runs such a kernel and sums its groups' verdicts.
 */
#ifndef GM_DEVICE_CHECK_H
#define GM_DEVICE_CHECK_H

#include "device/device.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    uint64_t wrong;    /* elements found wrong */
    uint64_t first;    /* the least index of one; `of` where none */
    uint64_t of;       /* elements checked */
} gm_device_verdict;

/*
 * Launches kernel over `items` work items (gm_launch_geometry: chunked on
 * a CPU device, groups of 256 otherwise), with args[verdict_arg] set to
 * *verdict, a device buffer grown here to two 64-bit words a group (free
 * it with gm_device_free when done), waits, reads the verdicts back and
 * sums them into *v (v->of = of). Returns the device's status (on error
 * *v says nothing wrong was found and dev->err says why).
 */
gm_status gm_device_check_run(gm_device *dev, gm_kernel *kernel, bool chunked, size_t items, gm_arg *args, int n_args,
                              int verdict_arg, gm_buffer *verdict, uint64_t of, gm_device_verdict *v);

#endif
