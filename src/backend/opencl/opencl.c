/*
 * The OpenCL backend: every OpenCL platform and device, flattened into one
 * list. Runs for real on the CPU through PoCL.
 */
#include "backend/handle.h"
#include "lib/host_memory.h"
#include "backend/kernel_sources.h"
#include "backend/opencl/opencl_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define GM_HUGE_PAGE ((uintptr_t)2 << 20)

#define MAX_DEVICES 64

static const gm_cl_api *cl;
static cl_device_id devices[MAX_DEVICES];
static cl_platform_id device_platform[MAX_DEVICES];
static int n_devices = -1;

struct gm_program { cl_program prog; };
struct gm_kernel { cl_kernel kernel; };
struct gm_event { cl_event ev; };
/* A held queue: a barrier waiting on a user event that release completes. */
struct gm_hold { cl_event user, barrier; };

#define ST(dev) gm_cl_state_of(dev)

/* Maps an OpenCL error to the suite's enum. Memory exhaustion is OOM
 * wherever it happens; other resource failures mean the device failed. */
static gm_status map_error(cl_int code)
{
    switch (code) {
    case CL_SUCCESS: return GM_OK;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE:
        return GM_ERR_OOM;
    case CL_OUT_OF_RESOURCES:
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
        return GM_ERR_DEVICE_LOST;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILER_NOT_AVAILABLE:
    case CL_INVALID_PROGRAM_EXECUTABLE:
        return GM_ERR_BUILD;
    default:
        return GM_ERR_INVALID;
    }
}

static gm_status fail(gm_device *dev, cl_int code, const char *what)
{
    return gm_device_fail(dev, map_error(code), code, "OpenCL %s: %s", what, gm_cl_error_name(code));
}

static gm_status cl_probe(int *count, char *why, size_t why_len)
{
    if (n_devices >= 0) {
        *count = n_devices;
        if (n_devices == 0)
            snprintf(why, why_len, "no OpenCL device found");
        return n_devices > 0 ? GM_OK : GM_ERR_UNSUPPORTED;
    }
    cl = gm_cl_load(why, why_len);
    n_devices = 0;
    if (!cl)
        return GM_ERR_UNSUPPORTED;
    cl_platform_id plats[16];
    cl_uint np = 0;
    cl_int rc = cl->clGetPlatformIDs(16, plats, &np);
    if (rc != CL_SUCCESS || np == 0) {
        snprintf(why, why_len, "no OpenCL platform (%s); install pocl-opencl-icd for the CPU",
                 rc == CL_SUCCESS ? "none registered" : gm_cl_error_name(rc));
        *count = 0;
        return GM_ERR_UNSUPPORTED;
    }
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_device_id ids[MAX_DEVICES];
        cl_uint nd = 0;
        if (cl->clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && n_devices < MAX_DEVICES; d++) {
            device_platform[n_devices] = plats[p];
            devices[n_devices++] = ids[d];
        }
    }
    *count = n_devices;
    if (n_devices == 0) {
        snprintf(why, why_len, "no OpenCL device found");
        return GM_ERR_UNSUPPORTED;
    }
    return GM_OK;
}

static void info_str(cl_device_id d, cl_device_info what, char *out, size_t len)
{
    char tmp[4096] = "";
    if (cl->clGetDeviceInfo(d, what, sizeof tmp - 1, tmp, NULL) != CL_SUCCESS)
        tmp[0] = '\0';
    snprintf(out, len, "%s", tmp);
}

static uint64_t info_u64(cl_device_id d, cl_device_info what)
{
    cl_ulong v = 0;
    return cl->clGetDeviceInfo(d, what, sizeof v, &v, NULL) == CL_SUCCESS ? v : 0;
}

static unsigned info_uint(cl_device_id d, cl_device_info what)
{
    cl_uint v = 0;
    return cl->clGetDeviceInfo(d, what, sizeof v, &v, NULL) == CL_SUCCESS ? v : 0;
}

static cl_device_svm_capabilities svm_caps(cl_device_id d)
{
    cl_device_svm_capabilities caps = 0;
    if (!cl->clSVMAlloc
        || cl->clGetDeviceInfo(d, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL) != CL_SUCCESS)
        return 0;
    return caps;
}

/* OpenCL cannot report free memory. A CPU device's memory is the host's,
 * so there the host's available memory (MemAvailable) is the honest
 * answer: what it reports is measured, not derived from our own books. */
static bool free_mem_of(const gm_device_info *info, uint64_t *free_b)
{
    if (info->type != GM_DEV_CPU)
        return false;
    *free_b = gm_host_mem_available();
    return *free_b != 0;
}

/*
 * The device's stable identity: its PCI bus id (cl_khr_pci_bus_info) or
 * UUID (cl_khr_device_uuid) where the driver tells one; otherwise (PoCL's
 * CPU devices) "opencl:" with a hash of the platform and device names and
 * the device's index, the same on every run of the same machine set-up.
 */
#define GM_CL_DEVICE_UUID 0x106A          /* cl_khr_device_uuid */
#define GM_CL_DEVICE_PCI_BUS_INFO 0x410F  /* cl_khr_pci_bus_info: four cl_uint */

static void device_identity(cl_device_id d, const char *ext, int index, gm_device_info *info)
{
    if (strstr(ext, "cl_khr_pci_bus_info")) {
        cl_uint pci[4];   /* domain, bus, device, function */
        if (cl->clGetDeviceInfo(d, GM_CL_DEVICE_PCI_BUS_INFO, sizeof pci, pci, NULL) == CL_SUCCESS) {
            snprintf(info->uuid, sizeof info->uuid, "pci:%04x:%02x:%02x.%x", pci[0], pci[1], pci[2], pci[3]);
            return;
        }
    }
    unsigned char u[16];
    if (strstr(ext, "cl_khr_device_uuid")
        && cl->clGetDeviceInfo(d, GM_CL_DEVICE_UUID, sizeof u, u, NULL) == CL_SUCCESS) {
        int n = snprintf(info->uuid, sizeof info->uuid, "uuid:");
        for (int i = 0; i < 16; i++)
            n += snprintf(info->uuid + n, sizeof info->uuid - (size_t)n, "%02x%s", u[i],
                          i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
        return;
    }
    uint32_t h = 2166136261u;   /* FNV-1a over platform, NUL, name */
    for (const char *p = info->platform;; p++) {
        h = (h ^ (unsigned char)*p) * 16777619u;
        if (!*p)
            break;
    }
    for (const char *p = info->name; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    snprintf(info->uuid, sizeof info->uuid, "opencl:%08x:%d", (unsigned)h, index);
}

static gm_status cl_describe(int index, gm_device_info *info, gm_error *err)
{
    memset(info, 0, sizeof *info);
    if (index < 0 || index >= n_devices) {
        err->code = GM_ERR_INVALID;
        snprintf(err->msg, sizeof err->msg, "no OpenCL device %d (%d found)", index, n_devices);
        return GM_ERR_INVALID;
    }
    cl_device_id d = devices[index];
    info_str(d, CL_DEVICE_NAME, info->name, sizeof info->name);
    info_str(d, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    info_str(d, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
    info_str(d, CL_DEVICE_VERSION, info->runtime_version, sizeof info->runtime_version);
    cl->clGetPlatformInfo(device_platform[index], CL_PLATFORM_NAME, sizeof info->platform,
                          info->platform, NULL);
    info->platform[sizeof info->platform - 1] = '\0';
    cl_device_type type = 0;
    cl->clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    info->type = (type & CL_DEVICE_TYPE_GPU)           ? GM_DEV_GPU
                 : (type & CL_DEVICE_TYPE_CPU)         ? GM_DEV_CPU
                 : (type & CL_DEVICE_TYPE_ACCELERATOR) ? GM_DEV_ACCEL
                                                       : GM_DEV_OTHER;
    info->total_mem = info_u64(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    info->max_alloc = info_u64(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    info->llc_bytes = info_u64(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    info->compute_units = (int)info_uint(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    info->clock_mhz = (int)info_uint(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
    info->has_managed = (svm_caps(d) & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0;
    char ext[4096];
    info_str(d, CL_DEVICE_EXTENSIONS, ext, sizeof ext);   /* truncated lists only lose the tail */
    info->has_fp16_native = strstr(ext, "cl_khr_fp16") != NULL;
    device_identity(d, ext, index, info);
    info->free_mem_known = free_mem_of(info, &info->free_mem);
    return GM_OK;
}

static void cl_close(gm_device *dev)
{
    gm_cl_state *s = ST(dev);
    if (!s)
        return;
    for (int q = 0; q < GM_MAX_QUEUES; q++)
        if (s->queues[q])
            cl->clReleaseCommandQueue(s->queues[q]);
    if (s->ctx)
        cl->clReleaseContext(s->ctx);
    free(s);
    dev->priv = NULL;
}

static gm_status cl_open(gm_device *dev, int index)
{
    gm_cl_state *s = calloc(1, sizeof *s);
    if (!s)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    dev->priv = s;
    s->id = devices[index];
    s->svm = svm_caps(s->id);
    cl_int rc;
    s->ctx = cl->clCreateContext(NULL, 1, &s->id, NULL, NULL, &rc);
    if (!s->ctx) {
        cl_close(dev);
        return fail(dev, rc, "clCreateContext");
    }
    for (int q = 0; q < GM_MAX_QUEUES; q++) {
        s->queues[q] = cl->clCreateCommandQueue(s->ctx, s->id, CL_QUEUE_PROFILING_ENABLE, &rc);
        if (!s->queues[q]) {
            gm_status st = fail(dev, rc, "clCreateCommandQueue");
            cl_close(dev);
            return st;
        }
    }
    return GM_OK;
}

static gm_status cl_query_mem(gm_device *dev, uint64_t *free_b, uint64_t *total_b)
{
    *total_b = dev->info.total_mem;
    if (!free_mem_of(&dev->info, free_b))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "OpenCL does not report free memory");
    return GM_OK;
}

static cl_command_queue queue_of(gm_device *dev, int q) { return gm_cl_queue(dev, q); }

/* On a CPU device a buffer is this process's memory: asks the kernel to
 * back its whole 2MiB-aligned interior with transparent huge pages, so
 * that first touch takes one fault each 2MiB, not each 4KiB (a 1GiB
 * buffer's 262144 faults cost a second of system time). Advice only:
 * where the kernel has no huge pages, or the mapping fails, the buffer is
 * touched as before. */
static void advise_huge_pages(gm_device *dev, cl_mem mem, size_t bytes)
{
    if (dev->info.type != GM_DEV_CPU || bytes < GM_HUGE_PAGE * 2)
        return;
    cl_int rc;
    cl_command_queue q = queue_of(dev, 0);
    void *p = cl->clEnqueueMapBuffer(q, mem, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes, 0, NULL, NULL, &rc);
    if (!p)
        return;
    uintptr_t first = ((uintptr_t)p + GM_HUGE_PAGE - 1) & ~(uintptr_t)(GM_HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t)p + bytes) & ~(uintptr_t)(GM_HUGE_PAGE - 1);
    if (end > first)
        (void)madvise((void *)first, end - first, MADV_HUGEPAGE);
    cl->clEnqueueUnmapMemObject(q, mem, p, 0, NULL, NULL);
}

/* Touches every byte, so that a lazy driver must back the buffer now. */
static cl_int touch(gm_device *dev, cl_mem mem, size_t bytes)
{
    const cl_uchar zero = 0;
    cl_command_queue q = queue_of(dev, 0);
    advise_huge_pages(dev, mem, bytes);
    cl_int rc = cl->clEnqueueFillBuffer(q, mem, &zero, 1, 0, bytes, 0, NULL, NULL);
    return rc == CL_SUCCESS ? cl->clFinish(q) : rc;
}

static gm_status cl_alloc(gm_device *dev, gm_mem_kind kind, size_t bytes, gm_buffer *out)
{
    gm_cl_state *s = ST(dev);
    cl_int rc = CL_SUCCESS;
    out->kind = kind;
    out->bytes = bytes;
    switch (kind) {
    case GM_MEM_HOST:
        if (posix_memalign(&out->host, 4096, bytes) != 0)
            return gm_device_fail(dev, GM_ERR_OOM, 0, "host allocation of %zu bytes failed", bytes);
        return GM_OK;
    case GM_MEM_DEVICE:
    case GM_MEM_PINNED: {
        cl_mem_flags flags = CL_MEM_READ_WRITE | (kind == GM_MEM_PINNED ? CL_MEM_ALLOC_HOST_PTR : 0);
        cl_mem mem = cl->clCreateBuffer(s->ctx, flags, bytes, NULL, &rc);
        if (!mem)
            return fail(dev, rc, "clCreateBuffer");
        rc = touch(dev, mem, bytes);
        if (rc != CL_SUCCESS) {
            cl->clReleaseMemObject(mem);
            /* A failure at first touch is the allocation failing. */
            return gm_device_fail(dev, GM_ERR_OOM, rc, "OpenCL buffer of %zu bytes failed at first touch: %s",
                                  bytes, gm_cl_error_name(rc));
        }
        out->handle = (uintptr_t)mem;
        if (kind == GM_MEM_PINNED) {
            out->host = cl->clEnqueueMapBuffer(queue_of(dev, 0), mem, CL_TRUE,
                                               CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &rc);
            if (!out->host) {
                cl->clReleaseMemObject(mem);
                return fail(dev, rc, "clEnqueueMapBuffer");
            }
        }
        return GM_OK;
    }
    case GM_MEM_MANAGED: {
        if (!(s->svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER))
            return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "device has no fine-grained SVM");
        void *p = cl->clSVMAlloc(s->ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, bytes, 0);
        if (!p)
            return gm_device_fail(dev, GM_ERR_OOM, 0, "clSVMAlloc of %zu bytes failed", bytes);
        memset(p, 0, bytes);
        out->host = p;
        out->handle = (uintptr_t)p;
        return GM_OK;
    }
    case GM_MEM_ASYNC:
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "OpenCL has no stream-ordered allocator");
    }
    return gm_device_fail(dev, GM_ERR_INVALID, 0, "unknown memory kind %d", (int)kind);
}

static void cl_free(gm_device *dev, gm_buffer *buf)
{
    gm_cl_state *s = ST(dev);
    switch (buf->kind) {
    case GM_MEM_HOST:
        free(buf->host);
        break;
    case GM_MEM_PINNED:
        cl->clEnqueueUnmapMemObject(queue_of(dev, 0), (cl_mem)buf->handle, buf->host, 0, NULL, NULL);
        cl->clFinish(queue_of(dev, 0));
        cl->clReleaseMemObject((cl_mem)buf->handle);
        break;
    case GM_MEM_DEVICE:
        cl->clReleaseMemObject((cl_mem)buf->handle);
        break;
    case GM_MEM_MANAGED:
        for (int q = 0; q < GM_MAX_QUEUES; q++)
            cl->clFinish(s->queues[q]);
        cl->clSVMFree(s->ctx, buf->host);
        break;
    case GM_MEM_ASYNC:
        break;      /* never allocated here */
    }
}

static gm_status cl_view(gm_device *dev, const gm_buffer *parent, size_t offset, size_t bytes, gm_buffer *out)
{
    cl_buffer_region region = {offset, bytes};
    cl_int rc;
    cl_mem sub = cl->clCreateSubBuffer((cl_mem)parent->handle, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                       &region, &rc);
    if (!sub)
        return fail(dev, rc, "clCreateSubBuffer");
    out->kind = GM_MEM_DEVICE;
    out->bytes = bytes;
    out->handle = (uintptr_t)sub;
    return GM_OK;
}

static bool is_cl_mem(const gm_buffer *b)
{
    return b->kind == GM_MEM_DEVICE;
}

static gm_status cl_fill(gm_device *dev, int queue, gm_buffer *buf, size_t off, size_t bytes,
                         const void *pattern, size_t psize)
{
    cl_int rc;
    if (psize == 0 || bytes % psize || off % psize || off + bytes > buf->bytes)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "fill outside the buffer or misaligned");
    if (buf->kind == GM_MEM_DEVICE || buf->kind == GM_MEM_PINNED) {
        rc = cl->clEnqueueFillBuffer(queue_of(dev, queue), (cl_mem)buf->handle, pattern, psize, off,
                                     bytes, 0, NULL, NULL);
        return rc == CL_SUCCESS ? GM_OK : fail(dev, rc, "clEnqueueFillBuffer");
    }
    cl->clFinish(queue_of(dev, queue));
    unsigned char *p = (unsigned char *)buf->host + off;
    for (size_t i = 0; i < bytes; i += psize)
        memcpy(p + i, pattern, psize);
    return GM_OK;
}

static gm_status cl_copy(gm_device *dev, int queue, gm_buffer *dst, size_t doff,
                         const gm_buffer *src, size_t soff, size_t bytes, bool async)
{
    cl_command_queue q = queue_of(dev, queue);
    cl_bool block = async ? CL_FALSE : CL_TRUE;
    cl_int rc;
    if (doff + bytes > dst->bytes || soff + bytes > src->bytes)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "copy outside a buffer");
    if (is_cl_mem(dst) && is_cl_mem(src)) {
        rc = cl->clEnqueueCopyBuffer(q, (cl_mem)src->handle, (cl_mem)dst->handle, soff, doff, bytes, 0,
                                     NULL, NULL);
        if (rc == CL_SUCCESS && !async)
            rc = cl->clFinish(q);
        return rc == CL_SUCCESS ? GM_OK : fail(dev, rc, "clEnqueueCopyBuffer");
    }
    if (is_cl_mem(dst)) {
        rc = cl->clEnqueueWriteBuffer(q, (cl_mem)dst->handle, block, doff, bytes,
                                      (const char *)src->host + soff, 0, NULL, NULL);
        return rc == CL_SUCCESS ? GM_OK : fail(dev, rc, "clEnqueueWriteBuffer");
    }
    if (is_cl_mem(src)) {
        rc = cl->clEnqueueReadBuffer(q, (cl_mem)src->handle, block, soff, bytes,
                                     (char *)dst->host + doff, 0, NULL, NULL);
        return rc == CL_SUCCESS ? GM_OK : fail(dev, rc, "clEnqueueReadBuffer");
    }
    if ((dst->kind == GM_MEM_MANAGED || src->kind == GM_MEM_MANAGED) && cl->clEnqueueSVMMemcpy) {
        rc = cl->clEnqueueSVMMemcpy(q, block, (char *)dst->host + doff, (const char *)src->host + soff,
                                    bytes, 0, NULL, NULL);
        return rc == CL_SUCCESS ? GM_OK : fail(dev, rc, "clEnqueueSVMMemcpy");
    }
    cl->clFinish(q);
    memcpy((char *)dst->host + doff, (const char *)src->host + soff, bytes);
    return GM_OK;
}

static gm_status cl_map(gm_device *dev, int queue, gm_buffer *buf, size_t off, size_t bytes, bool write,
                        void **ptr)
{
    if (!is_cl_mem(buf) || off + bytes > buf->bytes)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "only device buffers are mapped, within their size");
    cl_int rc;
    *ptr = cl->clEnqueueMapBuffer(queue_of(dev, queue), (cl_mem)buf->handle, CL_TRUE,
                                  write ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ, off, bytes, 0, NULL, NULL,
                                  &rc);
    return *ptr ? GM_OK : fail(dev, rc, "clEnqueueMapBuffer");
}

static gm_status cl_unmap(gm_device *dev, int queue, gm_buffer *buf, void *ptr)
{
    cl_command_queue q = queue_of(dev, queue);
    cl_int rc = cl->clEnqueueUnmapMemObject(q, (cl_mem)buf->handle, ptr, 0, NULL, NULL);
    if (rc == CL_SUCCESS)
        rc = cl->clFinish(q);
    return rc == CL_SUCCESS ? GM_OK : fail(dev, rc, "clEnqueueUnmapMemObject");
}

static gm_status cl_prefetch(gm_device *dev, int queue, gm_buffer *buf, bool to_device)
{
    if (buf->kind != GM_MEM_MANAGED)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "only managed memory is prefetched");
    if (!cl->clEnqueueSVMMigrateMem)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "the OpenCL library lacks clEnqueueSVMMigrateMem");
    cl_command_queue q = queue_of(dev, queue);
    const void *ptr = buf->host;
    size_t size = buf->bytes;
    cl_int rc = cl->clEnqueueSVMMigrateMem(q, 1, &ptr, &size, to_device ? 0 : CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL,
                                           NULL);
    if (rc == CL_SUCCESS)
        rc = cl->clFinish(q);
    /* A platform of OpenCL 2.0 or less answers that it cannot. */
    return rc == CL_SUCCESS ? GM_OK
                            : gm_device_fail(dev, GM_ERR_UNSUPPORTED, rc, "clEnqueueSVMMigrateMem: %s",
                                             gm_cl_error_name(rc));
}

static gm_status cl_program_build(gm_device *dev, const char *program, const char *variant,
                                  const char *extra, gm_program **out)
{
    size_t hlen = 0, tlen = 0;
    const char *header = gm_kernel_header(&hlen);
    const char *text = gm_kernel_text(program, &tlen);
    if (!header || !text)
        return gm_device_fail(dev, GM_ERR_BUILD, 0, "no kernel source for program '%s'", program);
    char options[1024];
    if (gm_variant_defines(variant, options, sizeof options - 256) != 0)
        return gm_device_fail(dev, GM_ERR_INVALID, 0, "bad kernel variant '%s'", variant);
    if (extra && *extra)
        snprintf(options + strlen(options), sizeof options - strlen(options), " %s", extra);
    const char *parts[3] = {header, "\n#line 1\n", text};
    size_t lens[3] = {hlen, strlen(parts[1]), tlen};
    cl_int rc;
    gm_cl_state *s = ST(dev);
    cl_program prog = cl->clCreateProgramWithSource(s->ctx, 3, parts, lens, &rc);
    if (!prog)
        return fail(dev, rc, "clCreateProgramWithSource");
    rc = cl->clBuildProgram(prog, 1, &s->id, options, NULL, NULL);
    if (rc != CL_SUCCESS) {
        char log[2048] = "";
        cl->clGetProgramBuildInfo(prog, s->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        log[sizeof log - 1] = '\0';
        for (char *c = log; *c; c++)
            if (*c == '\n')
                *c = ' ';
        cl->clReleaseProgram(prog);
        return gm_device_fail(dev, GM_ERR_BUILD, rc, "building %s (%s): %.180s", program, variant, log);
    }
    gm_program *p = malloc(sizeof *p);
    if (!p) {
        cl->clReleaseProgram(prog);
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    }
    p->prog = prog;
    *out = p;
    return GM_OK;
}

static void cl_program_release(gm_device *dev, gm_program *p)
{
    (void)dev;
    if (!p)
        return;
    cl->clReleaseProgram(p->prog);
    free(p);
}

static gm_status cl_kernel_get(gm_device *dev, gm_program *p, const char *name, gm_kernel **out)
{
    cl_int rc;
    cl_kernel k = cl->clCreateKernel(p->prog, name, &rc);
    if (!k)
        return gm_device_fail(dev, GM_ERR_BUILD, rc, "no kernel %s: %s", name, gm_cl_error_name(rc));
    gm_kernel *gk = malloc(sizeof *gk);
    if (!gk) {
        cl->clReleaseKernel(k);
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    }
    gk->kernel = k;
    *out = gk;
    return GM_OK;
}

static void cl_kernel_release(gm_device *dev, gm_kernel *k)
{
    (void)dev;
    if (!k)
        return;
    cl->clReleaseKernel(k->kernel);
    free(k);
}

static gm_status cl_launch(gm_device *dev, int queue, gm_kernel *k, size_t global, size_t local,
                           const gm_arg *args, int nargs)
{
    for (int i = 0; i < nargs; i++) {
        cl_int rc;
        if (args[i].kind == GM_ARG_VALUE) {
            rc = cl->clSetKernelArg(k->kernel, (cl_uint)i, args[i].size, args[i].value);
        } else if (args[i].buf->kind == GM_MEM_MANAGED) {
            rc = cl->clSetKernelArgSVMPointer(k->kernel, (cl_uint)i, args[i].buf->host);
        } else if (args[i].buf->kind == GM_MEM_HOST) {
            return gm_device_fail(dev, GM_ERR_INVALID, 0, "kernel argument %d is pageable host memory", i);
        } else {
            cl_mem mem = (cl_mem)args[i].buf->handle;
            rc = cl->clSetKernelArg(k->kernel, (cl_uint)i, sizeof mem, &mem);
        }
        if (rc != CL_SUCCESS)
            return fail(dev, rc, "clSetKernelArg");
    }
    cl_int rc = cl->clEnqueueNDRangeKernel(queue_of(dev, queue), k->kernel, 1, NULL, &global,
                                           local ? &local : NULL, 0, NULL, NULL);
    return rc == CL_SUCCESS ? GM_OK : fail(dev, rc, "clEnqueueNDRangeKernel");
}

static gm_status cl_event_record(gm_device *dev, int queue, gm_event **out)
{
    gm_event *e = malloc(sizeof *e);
    if (!e)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    cl_int rc = cl->clEnqueueMarkerWithWaitList(queue_of(dev, queue), 0, NULL, &e->ev);
    if (rc != CL_SUCCESS) {
        free(e);
        return fail(dev, rc, "clEnqueueMarkerWithWaitList");
    }
    *out = e;
    return GM_OK;
}

static gm_status cl_queue_hold(gm_device *dev, int queue, gm_hold **out)
{
    gm_hold *h = calloc(1, sizeof *h);
    if (!h)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    cl_int rc = CL_SUCCESS;
    h->user = cl->clCreateUserEvent(ST(dev)->ctx, &rc);
    if (rc != CL_SUCCESS) {
        free(h);
        return fail(dev, rc, "clCreateUserEvent");
    }
    rc = cl->clEnqueueBarrierWithWaitList(queue_of(dev, queue), 1, &h->user, &h->barrier);
    if (rc != CL_SUCCESS) {
        cl->clSetUserEventStatus(h->user, CL_COMPLETE);
        cl->clReleaseEvent(h->user);
        free(h);
        return fail(dev, rc, "clEnqueueBarrierWithWaitList");
    }
    *out = h;
    return GM_OK;
}

static void cl_queue_release(gm_device *dev, gm_hold *h)
{
    (void)dev;
    if (!h)
        return;
    cl->clSetUserEventStatus(h->user, CL_COMPLETE);
    cl->clReleaseEvent(h->barrier);
    cl->clReleaseEvent(h->user);
    free(h);
}

static gm_status cl_event_elapsed_ms(gm_device *dev, gm_event *a, gm_event *b, double *ms)
{
    cl_ulong ta = 0, tb = 0;
    cl_int rc = cl->clWaitForEvents(1, &b->ev);
    if (rc == CL_SUCCESS)
        rc = cl->clGetEventProfilingInfo(a->ev, CL_PROFILING_COMMAND_END, sizeof ta, &ta, NULL);
    if (rc == CL_SUCCESS)
        rc = cl->clGetEventProfilingInfo(b->ev, CL_PROFILING_COMMAND_END, sizeof tb, &tb, NULL);
    if (rc != CL_SUCCESS)
        return fail(dev, rc, "event timing");
    *ms = (double)(tb - ta) / 1e6;
    return GM_OK;
}

static void cl_event_release(gm_device *dev, gm_event *e)
{
    (void)dev;
    if (!e)
        return;
    cl->clReleaseEvent(e->ev);
    free(e);
}

/* OpenCL has no stream-ordered pool: nothing is cached to hand back. */
static gm_status cl_trim(gm_device *dev)
{
    (void)dev;
    return GM_OK;
}

static gm_status cl_synchronize(gm_device *dev, int queue)
{
    for (int q = 0; q < GM_MAX_QUEUES; q++) {
        if (queue >= 0 && q != queue)
            continue;
        cl_int rc = cl->clFinish(ST(dev)->queues[q]);
        if (rc != CL_SUCCESS)
            return fail(dev, rc, "clFinish");
    }
    return GM_OK;
}

const gm_backend gm_backend_opencl = {
    .name = "opencl",
    .probe = cl_probe,
    .describe = cl_describe,
    .open = cl_open,
    .close = cl_close,
    .mem_info = cl_query_mem,
    .alloc = cl_alloc,
    .free = cl_free,
    .view = cl_view,
    .map = cl_map,
    .prefetch = cl_prefetch,
    .unmap = cl_unmap,
    .fill = cl_fill,
    .copy = cl_copy,
    .program_build = cl_program_build,
    .program_release = cl_program_release,
    .kernel_get = cl_kernel_get,
    .kernel_release = cl_kernel_release,
    .launch = cl_launch,
    .event_record = cl_event_record,
    .event_elapsed_ms = cl_event_elapsed_ms,
    .queue_hold = cl_queue_hold,
    .queue_release = cl_queue_release,
    .event_release = cl_event_release,
    .synchronize = cl_synchronize,
    .trim = cl_trim,
    .blas_impl = gm_cl_blas_impl,
    .blas_plan = gm_cl_blas_plan,
    .blas_gemm = gm_cl_blas_gemm,
};
