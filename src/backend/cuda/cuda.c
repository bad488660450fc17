/*
 * The CUDA backend, on the driver API loaded at run time. Kernels are the
 * fatbins nvcc built from kernels/ at build time and embedded in the
 * binary (src/kernel_sources.h), one per program and variant.
 */
#include "backend/handle.h"
#include "backend/kernel_sources.h"
#include "backend/cuda/cuda_private.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver's API, from the first probe on (gm_cu_load). */
static const gm_cu_api *cu;
static int n_devices;

/* Our own opens of each CUDA device in this process (cu_open, cu_close). */
#define MAX_CU_DEVICES 64
static int opens[MAX_CU_DEVICES];

struct gm_program { CUmodule module; };
#define MAX_ARGS 32
/* A kernel, and the size of each of its parameters where the driver says
 * (cuFuncGetParamInfo): n_params -1 where it cannot. */
struct gm_kernel {
    CUfunction fn;
    int n_params;
    size_t param_size[MAX_ARGS];
    char name[64];
};
struct gm_event { CUevent ev; };

#define ST(dev) gm_cu_state_of(dev)

static gm_status cu_probe(int *count, char *why, size_t why_len)
{
    *count = 0;
    if (!(cu = gm_cu_load(why, why_len)))
        return GM_ERR_UNSUPPORTED;
    CUresult rc = cu->DeviceGetCount(&n_devices);
    if (rc != CUDA_SUCCESS || n_devices == 0) {
        snprintf(why, why_len, "no CUDA device (%s)", rc == CUDA_SUCCESS ? "none found" : gm_cu_error_name(rc));
        n_devices = 0;
        return GM_ERR_UNSUPPORTED;
    }
    *count = n_devices;
    return GM_OK;
}

static gm_status cu_describe(int index, gm_device_info *info, gm_error *err)
{
    memset(info, 0, sizeof *info);
    CUdevice d;
    if (!cu || index < 0 || index >= n_devices || cu->DeviceGet(&d, index) != CUDA_SUCCESS) {
        err->code = GM_ERR_INVALID;
        snprintf(err->msg, sizeof err->msg, "no CUDA device %d (%d found)", index, n_devices);
        return GM_ERR_INVALID;
    }
    cu->DeviceGetName(info->name, sizeof info->name, d);
    snprintf(info->vendor, sizeof info->vendor, "NVIDIA");
    snprintf(info->platform, sizeof info->platform, "CUDA");
    int version = 0;
    cu->DriverGetVersion(&version);
    snprintf(info->driver_version, sizeof info->driver_version, "CUDA %d.%d", version / 1000, version % 1000 / 10);
    snprintf(info->runtime_version, sizeof info->runtime_version, "driver API, compute capability %d.%d",
             gm_cu_attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
             gm_cu_attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    char bus[32] = "";
    if (cu->DeviceGetPCIBusId(bus, sizeof bus, d) == CUDA_SUCCESS)
        snprintf(info->uuid, sizeof info->uuid, "pci:%s", bus);
    info->type = GM_DEV_GPU;
    size_t total = 0;
    cu->DeviceTotalMem(&total, d);
    info->total_mem = total;
    info->max_alloc = total;
    info->llc_bytes = (uint64_t)gm_cu_attribute(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    info->compute_units = gm_cu_attribute(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info->clock_mhz = gm_cu_attribute(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
    info->mem_clock_mhz = gm_cu_attribute(d, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000;
    info->mem_bus_bits = gm_cu_attribute(d, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    info->has_managed = gm_cu_attribute(d, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) != 0;
    info->compute_capability = gm_cu_attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10
                               + gm_cu_attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    info->has_fp16_native = info->compute_capability >= 53;
    /* Free memory needs a context; open() fills it in. */
    info->free_mem_known = false;
    return GM_OK;
}

static void cu_close(gm_device *dev)
{
    gm_cu_state *s = ST(dev);
    if (!s)
        return;
    if (s->ctx && gm_cu_enter(dev) == GM_OK) {
        gm_cu_blas_release(dev);
        if (s->lt_workspace)
            cu->MemFree(s->lt_workspace);
        for (int q = 0; q < GM_MAX_QUEUES; q++)
            if (s->streams[q])
                cu->StreamDestroy(s->streams[q]);
    }
    if (s->ctx) {
        cu->DevicePrimaryCtxRelease(s->device);
        bool last = s->device >= 0 && s->device < MAX_CU_DEVICES && --opens[s->device] == 0;
        /* Our last reference is gone, but the CUDA runtime inside cuBLAS
         * keeps its own once a handle was made: a context still active now
         * is not ours to keep, and it would hold device memory (and, in
         * EXCLUSIVE_PROCESS mode, the device itself) from the processes
         * that use the device next. Reset destroys it; a later open
         * retains a fresh one. */
        unsigned int flags = 0;
        int active = 0;
        if (last && cu->DevicePrimaryCtxGetState(s->device, &flags, &active) == CUDA_SUCCESS && active)
            cu->DevicePrimaryCtxReset(s->device);
    }
    free(s);
    dev->priv = NULL;
}

static gm_status cu_mem_info(gm_device *dev, uint64_t *free_b, uint64_t *total_b)
{
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    size_t f = 0, t = 0;
    CUresult rc = cu->MemGetInfo(&f, &t);
    if (rc != CUDA_SUCCESS)
        return gm_cu_fail(dev, rc, "cuMemGetInfo");
    *free_b = f;
    *total_b = t;
    return GM_OK;
}

/*
 * Reserves now the local memory every kernel of the embedded images needs
 * (the largest stack frame ptxas reported, gm_cuda_stack_bytes), so that
 * the driver does not grow the context's reservation at a first launch,
 * after the run's memory snapshot (a false leak) and in the middle of a
 * measurement. The kernels keep their frames within the driver's default
 * (1 KiB, tests/40-cuda-compile.t), so this normally changes nothing and
 * reserves no more than every context has. A reservation the device has
 * no memory for now is left to the launches, as without it; only a lost
 * device fails the open.
 */
static gm_status reserve_stack(gm_device *dev)
{
    size_t have = 0;
    CUresult rc = cu->CtxGetLimit(&have, CU_LIMIT_STACK_SIZE);
    if (rc == CUDA_SUCCESS && have < gm_cuda_stack_bytes)
        rc = cu->CtxSetLimit(CU_LIMIT_STACK_SIZE, gm_cuda_stack_bytes);
    if (rc == CUDA_SUCCESS || gm_cu_status(rc) != GM_ERR_DEVICE_LOST)
        return GM_OK;
    return gm_cu_fail(dev, rc, "reserving the kernels' stack (cuCtxSetLimit)");
}

static gm_status cu_open(gm_device *dev, int index)
{
    gm_cu_state *s = calloc(1, sizeof *s);
    if (!s)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    dev->priv = s;
    CUresult rc = cu->DeviceGet(&s->device, index);
    if (rc == CUDA_SUCCESS)
        rc = cu->DevicePrimaryCtxRetain(&s->ctx, s->device);
    if (rc != CUDA_SUCCESS) {
        s->ctx = NULL;
        gm_status st = gm_cu_fail(dev, rc, "opening the device");
        cu_close(dev);
        return st;
    }
    if (s->device >= 0 && s->device < MAX_CU_DEVICES)
        opens[s->device]++;
    gm_status st = gm_cu_enter(dev);
    for (int q = 0; st == GM_OK && q < GM_MAX_QUEUES; q++) {
        rc = cu->StreamCreate(&s->streams[q], CU_STREAM_NON_BLOCKING);
        if (rc != CUDA_SUCCESS)
            st = gm_cu_fail(dev, rc, "cuStreamCreate");
    }
    if (st == GM_OK)
        st = reserve_stack(dev);
    uint64_t total;
    if (st == GM_OK && cu_mem_info(dev, &dev->info.free_mem, &total) == GM_OK)
        dev->info.free_mem_known = true;
    if (st != GM_OK)
        cu_close(dev);
    return st;
}

/* From the device's default stream-ordered pool on queue 0, waited for so
 * that a failure shows here. The pool keeps freed memory cached (release
 * threshold: unlimited), as frameworks that use it configure it, until
 * the trim op at the end of the point or probe (cu_trim). */
static CUresult async_alloc(gm_device *dev, CUdeviceptr *p, size_t bytes)
{
    gm_cu_state *s = ST(dev);
    if (!cu->MemAllocAsync || !cu->MemFreeAsync || !cu->DeviceGetDefaultMemPool || !cu->MemPoolSetAttribute)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (!s->async_pool_ready) {
        CUmemoryPool pool;
        cuuint64_t keep = ~(cuuint64_t)0;
        CUresult rc = cu->DeviceGetDefaultMemPool(&pool, s->device);
        if (rc == CUDA_SUCCESS)
            rc = cu->MemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
        if (rc != CUDA_SUCCESS)
            return rc;
        s->pool = pool;
        s->async_pool_ready = true;
    }
    CUstream stream = gm_cu_stream_of(dev, 0);
    CUresult rc = cu->MemAllocAsync(p, bytes, stream);
    return rc == CUDA_SUCCESS ? cu->StreamSynchronize(stream) : rc;
}

static gm_status cu_alloc(gm_device *dev, gm_mem_kind kind, size_t bytes, gm_buffer *out)
{
    out->kind = kind;
    out->bytes = bytes;
    if (kind == GM_MEM_HOST) {
        if (posix_memalign(&out->host, 4096, bytes) != 0)
            return gm_device_fail(dev, GM_ERR_OOM, 0, "host allocation of %zu bytes failed", bytes);
        return GM_OK;
    }
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    CUresult rc = CUDA_SUCCESS;
    CUdeviceptr p = 0;
    switch (kind) {
    case GM_MEM_DEVICE:
        rc = cu->MemAlloc(&p, bytes);
        break;
    case GM_MEM_PINNED: {
        void *h = NULL;
        rc = cu->MemAllocHost(&h, bytes);
        out->host = h;
        p = (CUdeviceptr)(uintptr_t)h;   /* unified addressing: usable by kernels and copies */
        break;
    }
    case GM_MEM_MANAGED:
        if (!dev->info.has_managed)
            return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "device has no managed memory");
        rc = cu->MemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL);
        out->host = (void *)(uintptr_t)p;
        break;
    case GM_MEM_ASYNC:
        rc = async_alloc(dev, &p, bytes);
        break;
    case GM_MEM_HOST:
        break;
    }
    if (rc != CUDA_SUCCESS) {
        out->host = NULL;
        return gm_cu_fail(dev, rc, "allocation");
    }
    out->handle = (uintptr_t)p;
    return GM_OK;
}

static gm_status cu_view(gm_device *dev, const gm_buffer *parent, size_t offset, size_t bytes, gm_buffer *out)
{
    (void)dev;
    out->kind = GM_MEM_DEVICE;
    out->bytes = bytes;
    out->handle = parent->handle + offset;
    return GM_OK;
}

static void mapping_release(gm_buffer *buf);

static void cu_free(gm_device *dev, gm_buffer *buf)
{
    if (buf->priv && gm_cu_enter(dev) == GM_OK)
        mapping_release(buf);   /* a mapped view's host memory too */
    if (buf->is_view)
        return;   /* a view owns no memory */
    if (buf->kind == GM_MEM_HOST) {
        free(buf->host);
        return;
    }
    if (gm_cu_enter(dev) != GM_OK)
        return;
    if (buf->kind == GM_MEM_PINNED) {
        cu->MemFreeHost(buf->host);
    } else if (buf->kind == GM_MEM_ASYNC) {
        CUstream s = gm_cu_stream_of(dev, 0);
        if (cu->MemFreeAsync && cu->MemFreeAsync((CUdeviceptr)buf->handle, s) == CUDA_SUCCESS)
            cu->StreamSynchronize(s);
    } else
        cu->MemFree((CUdeviceptr)buf->handle);
}

static gm_status cu_prefetch(gm_device *dev, int queue, gm_buffer *buf, bool to_device)
{
    if (buf->kind != GM_MEM_MANAGED)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "only managed memory is prefetched");
    if (!cu->MemPrefetchAsyncV2 && !cu->MemPrefetchAsync)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "the driver lacks cuMemPrefetchAsync");
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    CUstream s = gm_cu_stream_of(dev, queue);
    CUresult rc;
    if (cu->MemPrefetchAsyncV2) {
        CUmemLocation where = {0};
        where.type = to_device ? CU_MEM_LOCATION_TYPE_DEVICE : CU_MEM_LOCATION_TYPE_HOST;
        where.id = to_device ? ST(dev)->device : 0;   /* ignored for the host */
        rc = cu->MemPrefetchAsyncV2((CUdeviceptr)buf->handle, buf->bytes, where, 0, s);
    } else {
        rc = cu->MemPrefetchAsync((CUdeviceptr)buf->handle, buf->bytes, to_device ? ST(dev)->device : CU_DEVICE_CPU, s);
    }
    if (rc == CUDA_SUCCESS)
        rc = cu->StreamSynchronize(s);
    return rc == CUDA_SUCCESS ? GM_OK : gm_cu_fail(dev, rc, "cuMemPrefetchAsync");
}

/*
 * Mapping device memory into the host. CUDA cannot map device memory
 * itself, so a mapping is backed, as OpenCL drivers back it on discrete
 * GPUs, by mapped pinned host memory (cuMemHostAlloc with DEVICEMAP)
 * that the device copies through its device-side address: from the
 * buffer at map (for reading), into it at unmap (for writing). The host
 * memory is kept with the buffer (priv) for later maps, grown when a
 * larger region is mapped, and freed with the buffer.
 */
typedef struct {
    void *host;                  /* cuMemHostAlloc'd, mapped */
    CUdeviceptr device;          /* its address on the device */
    size_t capacity;
    size_t off, bytes;           /* the region mapped now */
    bool mapped, write;
} cu_mapping;

static void mapping_release(gm_buffer *buf)
{
    cu_mapping *m = buf->priv;
    if (!m)
        return;
    if (m->host)
        cu->MemFreeHost(m->host);
    free(m);
    buf->priv = NULL;
}

/* A mapping of at least `bytes` for buf, not mapped now. */
static gm_status mapping_get(gm_device *dev, gm_buffer *buf, size_t bytes, cu_mapping **out)
{
    cu_mapping *m = buf->priv;
    if (m && m->mapped)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "the buffer is mapped already");
    if (m && m->capacity < bytes)
        mapping_release(buf);
    m = buf->priv;
    if (!m) {
        m = calloc(1, sizeof *m);
        if (!m)
            return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
        CUresult rc = cu->MemHostAlloc(&m->host, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
        if (rc == CUDA_SUCCESS) {
            rc = cu->MemHostGetDevicePointer(&m->device, m->host, 0);
            if (rc != CUDA_SUCCESS) {
                cu->MemFreeHost(m->host);
                free(m);
                return gm_device_fail(dev, GM_ERR_UNSUPPORTED, (int)rc, "CUDA cuMemHostGetDevicePointer: %s (%s)",
                                      gm_cu_error_name(rc), gm_cu_error_text(rc));
            }
        }
        if (rc != CUDA_SUCCESS) {
            free(m);
            return gm_cu_fail(dev, rc, "cuMemHostAlloc");
        }
        m->capacity = bytes;
        buf->priv = m;
    }
    *out = m;
    return GM_OK;
}

static gm_status cu_map(gm_device *dev, int queue, gm_buffer *buf, size_t off, size_t bytes, bool write,
                        void **ptr)
{
    *ptr = NULL;
    if (buf->kind != GM_MEM_DEVICE || bytes == 0 || off > buf->bytes || bytes > buf->bytes - off)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "only device buffers are mapped, within their size");
    gm_status st = gm_cu_enter(dev);
    cu_mapping *m = NULL;
    if (st == GM_OK)
        st = mapping_get(dev, buf, bytes, &m);
    if (st != GM_OK)
        return st;
    if (!write) {
        CUstream s = gm_cu_stream_of(dev, queue);
        CUresult rc = cu->MemcpyAsync(m->device, (CUdeviceptr)buf->handle + off, bytes, s);
        if (rc == CUDA_SUCCESS)
            rc = cu->StreamSynchronize(s);
        if (rc != CUDA_SUCCESS)
            return gm_cu_fail(dev, rc, "copy into the mapping");
    }
    m->off = off;
    m->bytes = bytes;
    m->write = write;
    m->mapped = true;
    *ptr = m->host;
    return GM_OK;
}

static gm_status cu_unmap(gm_device *dev, int queue, gm_buffer *buf, void *ptr)
{
    cu_mapping *m = buf->priv;
    if (!m || !m->mapped || ptr != m->host)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "unmap of a pointer that map did not return");
    m->mapped = false;
    if (!m->write)
        return GM_OK;
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    CUstream s = gm_cu_stream_of(dev, queue);
    CUresult rc = cu->MemcpyAsync((CUdeviceptr)buf->handle + m->off, m->device, m->bytes, s);
    if (rc == CUDA_SUCCESS)
        rc = cu->StreamSynchronize(s);
    return rc == CUDA_SUCCESS ? GM_OK : gm_cu_fail(dev, rc, "copy from the mapping");
}

/* The address copies and fills use: device handle, else the host pointer. */
static CUdeviceptr address_of(const gm_buffer *b, size_t off)
{
    return (b->kind == GM_MEM_HOST ? (CUdeviceptr)(uintptr_t)b->host : (CUdeviceptr)b->handle) + off;
}

static gm_status cu_fill(gm_device *dev, int queue, gm_buffer *buf, size_t off, size_t bytes,
                         const void *pattern, size_t psize)
{
    if (psize == 0 || psize > 4 || psize == 3 || bytes % psize || off % psize || off + bytes > buf->bytes)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "fill outside the buffer or misaligned");
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    CUstream s = gm_cu_stream_of(dev, queue);
    if (buf->kind == GM_MEM_HOST) {
        CUresult rc = cu->StreamSynchronize(s);
        if (rc != CUDA_SUCCESS)
            return gm_cu_fail(dev, rc, "cuStreamSynchronize");
        for (size_t i = 0; i < bytes; i += psize)
            memcpy((char *)buf->host + off + i, pattern, psize);
        return GM_OK;
    }
    CUdeviceptr p = address_of(buf, off);
    CUresult rc;
    if (psize == 1) {
        rc = cu->MemsetD8Async(p, *(const unsigned char *)pattern, bytes, s);
    } else if (psize == 2) {
        unsigned short v;
        memcpy(&v, pattern, 2);
        rc = cu->MemsetD16Async(p, v, bytes / 2, s);
    } else {
        unsigned int v;
        memcpy(&v, pattern, 4);
        rc = cu->MemsetD32Async(p, v, bytes / 4, s);
    }
    return rc == CUDA_SUCCESS ? GM_OK : gm_cu_fail(dev, rc, "memset");
}

static gm_status cu_copy(gm_device *dev, int queue, gm_buffer *dst, size_t doff, const gm_buffer *src,
                         size_t soff, size_t bytes, bool async)
{
    if (doff + bytes > dst->bytes || soff + bytes > src->bytes)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "copy outside a buffer");
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    CUstream s = gm_cu_stream_of(dev, queue);
    /* Unified addressing: one call covers every direction and memory kind. */
    CUresult rc = cu->MemcpyAsync(address_of(dst, doff), address_of(src, soff), bytes, s);
    if (rc == CUDA_SUCCESS && !async)
        rc = cu->StreamSynchronize(s);
    return rc == CUDA_SUCCESS ? GM_OK : gm_cu_fail(dev, rc, "copy");
}

static gm_status cu_program_build(gm_device *dev, const char *program, const char *variant,
                                  const char *extra, gm_program **out)
{
    if (extra && *extra)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0,
                              "CUDA kernels are built ahead of time: no extra defines (%s)", extra);
    size_t len = 0;
    const unsigned char *image = gm_cuda_image(program, variant, &len);
    if (!image)
        return gm_device_fail(dev, GM_ERR_BUILD, 0,
                              "no CUDA image for %s.%s: the build compiles the variants kernels/variants.mk lists",
                              program, variant);
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    gm_program *p = malloc(sizeof *p);
    if (!p)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    CUresult rc = cu->ModuleLoadData(&p->module, image);
    if (rc != CUDA_SUCCESS) {
        free(p);
        return gm_cu_fail(dev, rc, "loading a kernel image");
    }
    *out = p;
    return GM_OK;
}

static void cu_program_release(gm_device *dev, gm_program *p)
{
    if (!p)
        return;
    if (gm_cu_enter(dev) == GM_OK)
        cu->ModuleUnload(p->module);
    free(p);
}

static gm_status cu_kernel_get(gm_device *dev, gm_program *p, const char *name, gm_kernel **out)
{
    gm_kernel *k = malloc(sizeof *k);
    if (!k)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    CUresult rc = cu->ModuleGetFunction(&k->fn, p->module, name);
    if (rc != CUDA_SUCCESS) {
        free(k);
        return gm_cu_fail(dev, rc, name);
    }
    snprintf(k->name, sizeof k->name, "%s", name);
    /* Its parameters' sizes: index after index until the driver says there
     * is none (CUDA_ERROR_INVALID_VALUE); unknown on a driver without the
     * call, where it fails otherwise, or past MAX_ARGS parameters. */
    k->n_params = -1;
    if (cu->FuncGetParamInfo) {
        int n = 0;
        size_t offset;
        while (n < MAX_ARGS &&
               (rc = cu->FuncGetParamInfo(k->fn, (size_t)n, &offset, &k->param_size[n])) == CUDA_SUCCESS)
            n++;
        if (n < MAX_ARGS && rc == CUDA_ERROR_INVALID_VALUE)
            k->n_params = n;
    }
    *out = k;
    return GM_OK;
}

static void cu_kernel_release(gm_device *dev, gm_kernel *k)
{
    (void)dev;
    free(k);   /* functions belong to their module */
}

/* The size an argument passes: a buffer as its device address. */
static size_t arg_size(const gm_arg *a)
{
    return a->kind == GM_ARG_VALUE ? a->size : sizeof(CUdeviceptr);
}

static gm_status cu_launch(gm_device *dev, int queue, gm_kernel *k, size_t global, size_t local,
                           const gm_arg *args, int nargs)
{
    if (nargs > MAX_ARGS)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "too many kernel arguments (%d)", nargs);
    if (local == 0)
        local = 256;
    if (global % local || global / local > 0x7fffffffu)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "launch of %zu items in groups of %zu", global, local);
    /* cuLaunchKernel copies each parameter's size from what its pointer
     * points to, whatever was meant: a mismatch is refused here, not run. */
    if (k->n_params >= 0) {
        if (nargs != k->n_params)
            return gm_device_fail(dev, GM_ERR_INVALID, 0, "kernel %s takes %d arguments, given %d", k->name,
                                  k->n_params, nargs);
        for (int i = 0; i < nargs; i++)
            if (arg_size(&args[i]) != k->param_size[i])
                return gm_device_fail(dev, GM_ERR_INVALID, 0, "kernel %s: argument %d is %zu bytes where it takes %zu",
                                      k->name, i, arg_size(&args[i]), k->param_size[i]);
    }
    CUdeviceptr ptrs[MAX_ARGS];
    void *params[MAX_ARGS];
    for (int i = 0; i < nargs; i++) {
        if (args[i].kind == GM_ARG_VALUE) {
            params[i] = (void *)args[i].value;
        } else if (args[i].buf->kind == GM_MEM_HOST) {
            return gm_device_fail(dev, GM_ERR_INVALID, 0, "kernel argument %d is pageable host memory", i);
        } else {
            ptrs[i] = (CUdeviceptr)args[i].buf->handle;
            params[i] = &ptrs[i];
        }
    }
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    CUresult rc = cu->LaunchKernel(k->fn, (unsigned int)(global / local), 1, 1, (unsigned int)local, 1, 1, 0,
                                   gm_cu_stream_of(dev, queue), params, NULL);
    return rc == CUDA_SUCCESS ? GM_OK : gm_cu_fail(dev, rc, "cuLaunchKernel");
}

static gm_status cu_event_record(gm_device *dev, int queue, gm_event **out)
{
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    gm_event *e = malloc(sizeof *e);
    if (!e)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    CUresult rc = cu->EventCreate(&e->ev, CU_EVENT_DEFAULT);
    if (rc == CUDA_SUCCESS) {
        rc = cu->EventRecord(e->ev, gm_cu_stream_of(dev, queue));
        if (rc != CUDA_SUCCESS)
            cu->EventDestroy(e->ev);
    }
    if (rc != CUDA_SUCCESS) {
        free(e);
        return gm_cu_fail(dev, rc, "event");
    }
    *out = e;
    return GM_OK;
}

static gm_status cu_event_elapsed_ms(gm_device *dev, gm_event *a, gm_event *b, double *ms)
{
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    float f = 0;
    CUresult rc = cu->EventSynchronize(b->ev);
    if (rc == CUDA_SUCCESS)
        rc = cu->EventElapsedTime(&f, a->ev, b->ev);
    if (rc != CUDA_SUCCESS)
        return gm_cu_fail(dev, rc, "event timing");
    *ms = f;
    return GM_OK;
}

static void cu_event_release(gm_device *dev, gm_event *e)
{
    if (!e)
        return;
    if (gm_cu_enter(dev) == GM_OK)
        cu->EventDestroy(e->ev);
    free(e);
}

/* The trim op: the pool's cached memory back to the device once the
 * frees enqueued on queue 0 have completed. */
static gm_status cu_trim(gm_device *dev)
{
    gm_cu_state *s = ST(dev);
    if (!s->async_pool_ready || !cu->MemPoolTrimTo)
        return GM_OK;   /* nothing was ever cached */
    gm_status st = gm_cu_enter(dev);
    if (st != GM_OK)
        return st;
    CUresult rc = cu->StreamSynchronize(gm_cu_stream_of(dev, 0));
    if (rc == CUDA_SUCCESS)
        rc = cu->MemPoolTrimTo(s->pool, 0);
    return rc == CUDA_SUCCESS ? GM_OK : gm_cu_fail(dev, rc, "cuMemPoolTrimTo");
}

static gm_status cu_synchronize(gm_device *dev, int queue)
{
    gm_status st = gm_cu_enter(dev);
    for (int q = 0; st == GM_OK && q < GM_MAX_QUEUES; q++) {
        if (queue >= 0 && q != queue)
            continue;
        CUresult rc = cu->StreamSynchronize(ST(dev)->streams[q]);
        if (rc != CUDA_SUCCESS)
            st = gm_cu_fail(dev, rc, "cuStreamSynchronize");
    }
    return st;
}

const gm_backend gm_backend_cuda = {
    .name = "cuda",
    .probe = cu_probe,
    .describe = cu_describe,
    .open = cu_open,
    .close = cu_close,
    .mem_info = cu_mem_info,
    .alloc = cu_alloc,
    .free = cu_free,
    .view = cu_view,
    .map = cu_map,
    .prefetch = cu_prefetch,
    .unmap = cu_unmap,
    .fill = cu_fill,
    .copy = cu_copy,
    .program_build = cu_program_build,
    .program_release = cu_program_release,
    .kernel_get = cu_kernel_get,
    .kernel_release = cu_kernel_release,
    .launch = cu_launch,
    .event_record = cu_event_record,
    .event_elapsed_ms = cu_event_elapsed_ms,
    .event_release = cu_event_release,
    .queue_hold = gm_cu_queue_hold,
    .queue_release = gm_cu_queue_release,
    .synchronize = cu_synchronize,
    .trim = cu_trim,
    .blas_impl = gm_cu_blas_impl,
    .blas_plan = gm_cu_blas_plan,
    .blas_gemm = gm_cu_blas_gemm,
};
