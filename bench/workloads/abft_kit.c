/* The checksum checks' device parts (bench/workloads/abft_kit.h). */
#include "bench/workloads/abft_kit.h"

#include "bench/bench.h"

gm_status gm_abft_kit_build(gm_device *dev, const char *variant, const char *const *names, gm_kernel **const *ks,
                            size_t n, gm_program **prog)
{
    *prog = NULL;
    for (size_t i = 0; i < n; i++)
        *ks[i] = NULL;
    gm_status rc = dev->backend->program_build(dev, "abft", variant, NULL, prog);
    for (size_t i = 0; i < n && rc == GM_OK; i++)
        rc = dev->backend->kernel_get(dev, *prog, names[i], ks[i]);
    if (rc != GM_OK) {
        gm_error saved = dev->err;
        for (size_t i = 0; i < n; i++) {
            if (*ks[i])
                dev->backend->kernel_release(dev, *ks[i]);
            *ks[i] = NULL;
        }
        if (*prog)
            dev->backend->program_release(dev, *prog);
        *prog = NULL;
        dev->err = saved;
    }
    return rc;
}

void gm_abft_kit_free(gm_device *dev, gm_buffer *const *bufs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gm_device_free(dev, bufs[i]);
}

void gm_abft_kit_release(gm_device *dev, gm_program *prog, gm_kernel *const *ks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ks[i])
            dev->backend->kernel_release(dev, ks[i]);
    if (prog)
        dev->backend->program_release(dev, prog);
}

gm_status gm_abft_kit_reserve(gm_device *dev, gm_buffer *buf, size_t bytes)
{
    if (buf->bytes >= bytes && buf->bytes)
        return GM_OK;
    gm_device_free(dev, buf);
    return gm_device_alloc(dev, GM_MEM_DEVICE, bytes ? bytes : 4, buf);
}

gm_status gm_abft_kit_launch(gm_device *dev, bool chunked, gm_kernel *k, size_t items, gm_arg *args, int n)
{
    size_t global, local;
    gm_launch_geometry(dev, chunked, items, &global, &local);
    return dev->backend->launch(dev, 0, k, global, local, args, n);
}
