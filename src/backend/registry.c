#include "backend/backend.h"

#include <string.h>

/* Order matters: `--backend auto` takes the first backend with a GPU. */
const gm_backend *const gm_backends[] = {
#ifdef GM_HAVE_CUDA
    &gm_backend_cuda,
#endif
    &gm_backend_opencl,
    NULL,
};

const gm_backend *gm_backend_find(const char *name)
{
    for (int i = 0; gm_backends[i]; i++)
        if (strcmp(gm_backends[i]->name, name) == 0)
            return gm_backends[i];
    return NULL;
}

const char *gm_status_name(gm_status s)
{
    switch (s) {
    case GM_OK: return "ok";
    case GM_ERR_OOM: return "out of memory";
    case GM_ERR_UNSUPPORTED: return "unsupported";
    case GM_ERR_BUILD: return "build failed";
    case GM_ERR_DEVICE_LOST: return "device lost";
    case GM_ERR_INVALID: return "invalid";
    }
    return "unknown";
}

const char *gm_device_type_name(gm_device_type t)
{
    switch (t) {
    case GM_DEV_GPU: return "gpu";
    case GM_DEV_CPU: return "cpu";
    case GM_DEV_ACCEL: return "accelerator";
    case GM_DEV_OTHER: break;
    }
    return "other";
}

const char *gm_mem_kind_name(gm_mem_kind k)
{
    switch (k) {
    case GM_MEM_DEVICE: return "device";
    case GM_MEM_HOST: return "pageable";
    case GM_MEM_PINNED: return "pinned";
    case GM_MEM_MANAGED: return "managed";
    case GM_MEM_ASYNC: return "async-pool";
    }
    return "unknown";
}
