#include "bench/workloads/device_check.h"

#include "bench/bench.h"

#include <stdlib.h>

gm_status gm_device_check_run(gm_device *dev, gm_kernel *kernel, bool chunked, size_t items, gm_arg *args, int n_args,
                              int verdict_arg, gm_buffer *verdict, uint64_t of, gm_device_verdict *v)
{
    *v = (gm_device_verdict){0, of, of};
    size_t global, local;
    gm_launch_geometry(dev, chunked, items, &global, &local);
    size_t groups = global / local, bytes = groups * 2 * sizeof(uint64_t);
    gm_status rc = GM_OK;
    if (verdict->bytes < bytes) {
        gm_device_free(dev, verdict);
        rc = gm_device_alloc(dev, GM_MEM_DEVICE, bytes, verdict);
    }
    uint64_t *host = malloc(bytes);
    if (rc == GM_OK && !host)
        rc = gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    args[verdict_arg] = gm_arg_buf(verdict);
    if (rc == GM_OK)
        rc = dev->backend->launch(dev, 0, kernel, global, local, args, n_args);
    gm_buffer copy = {.kind = GM_MEM_HOST, .bytes = bytes, .host = host};
    if (rc == GM_OK)
        rc = dev->backend->copy(dev, 0, &copy, 0, verdict, 0, bytes, false);
    for (size_t g = 0; rc == GM_OK && g < groups; g++) {
        v->wrong += host[2 * g];
        if (host[2 * g] && host[2 * g + 1] < v->first)
            v->first = host[2 * g + 1];
    }
    free(host);
    return rc;
}
