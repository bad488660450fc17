/*
 * The backend ops table: the only interface between the harness and a vendor
 * runtime. One instance per backend file (opencl.c, cuda.c), listed in
 * gm_backends[] (registry.c). Nothing outside src/backend/ includes a vendor
 * header.
 *
 * Contract shared by every op that returns gm_status:
 *   - GM_OK on success;
 *   - on failure, dev->err holds the code, the runtime's native code and a
 *     one-line message (gm_device_fail), and no resource is left half-made;
 *   - GM_ERR_OOM is reported only for a failure to obtain memory (including a
 *     lazy driver failing at first touch), never for other failures.
 */
#ifndef GM_BACKEND_H
#define GM_BACKEND_H

#include "lib/precision.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    GM_OK = 0,
    GM_ERR_OOM,          /* the device (or the cap) has no memory for it */
    GM_ERR_UNSUPPORTED,  /* the backend/device cannot do this */
    GM_ERR_BUILD,        /* kernel compilation or loading failed */
    GM_ERR_DEVICE_LOST,  /* the device stopped answering or faulted */
    GM_ERR_INVALID,      /* bad arguments, or a runtime missing */
} gm_status;

const char *gm_status_name(gm_status s);

typedef struct {
    gm_status code;
    int native;          /* the runtime's own error code, 0 if none */
    char msg[256];
} gm_error;

typedef enum { GM_DEV_GPU, GM_DEV_CPU, GM_DEV_ACCEL, GM_DEV_OTHER } gm_device_type;
const char *gm_device_type_name(gm_device_type t);

/* Facts about a device. Zero / empty means "the backend does not tell". */
typedef struct {
    char name[128];
    char vendor[64];
    char driver_version[64];
    char runtime_version[128];
    char platform[128];
    char uuid[64];            /* stable identity: UUID or PCI bus id */
    gm_device_type type;
    uint64_t total_mem;
    uint64_t free_mem;        /* at the time of the query */
    bool free_mem_known;      /* false where the runtime cannot report it */
    uint64_t max_alloc;       /* largest single allocation advertised */
    uint64_t llc_bytes;       /* last-level cache (L2 on GPUs, L3 on CPUs) */
    int compute_units;
    int clock_mhz;
    int mem_clock_mhz;
    int mem_bus_bits;
    bool has_managed;         /* CUDA managed / OpenCL SVM */
    bool has_fp16_native;     /* fp16 arithmetic: OpenCL cl_khr_fp16, CUDA 5.3 and up */
    int compute_capability;   /* CUDA: major * 10 + minor (9.0: 90); 0 elsewhere */
} gm_device_info;

/* Where a buffer lives. */
typedef enum {
    GM_MEM_DEVICE,       /* device memory */
    GM_MEM_HOST,         /* ordinary pageable host memory (malloc) */
    GM_MEM_PINNED,       /* page-locked host memory the device can DMA from */
    GM_MEM_MANAGED,      /* unified memory reachable from host and device */
    GM_MEM_ASYNC,        /* device memory from the driver's stream-ordered pool
                          * (CUDA cuMemAllocAsync on queue 0, cached between
                          * uses); unsupported on OpenCL */
} gm_mem_kind;
const char *gm_mem_kind_name(gm_mem_kind k);

/*
 * A buffer. `host` is a host-visible pointer for HOST, PINNED and MANAGED
 * buffers (NULL for DEVICE); `handle` is the backend's device handle
 * (cl_mem, SVM pointer, CUdeviceptr). Only the owning backend reads handle
 * and priv.
 */
typedef struct {
    gm_mem_kind kind;
    size_t bytes;
    void *host;
    uintptr_t handle;
    void *priv;
    bool is_view;       /* a window on another buffer (view): owns no memory */
} gm_buffer;

/* Views start at multiples of this (any OpenCL device's base alignment). */
#define GM_VIEW_ALIGN 4096

typedef struct gm_program gm_program;   /* opaque, per backend */
typedef struct gm_kernel gm_kernel;     /* opaque, per backend */
typedef struct gm_event gm_event;       /* opaque, per backend */
typedef struct gm_hold gm_hold;         /* opaque, per backend: a held queue */

typedef enum { GM_ARG_BUFFER, GM_ARG_VALUE } gm_arg_kind;
typedef struct {
    gm_arg_kind kind;
    const gm_buffer *buf;   /* GM_ARG_BUFFER */
    const void *value;      /* GM_ARG_VALUE */
    size_t size;            /* GM_ARG_VALUE */
} gm_arg;

/* How a vendor GEMM accumulates its products: what bounds its error. */
typedef enum {
    GM_ACC_FP32,        /* fp32 sums (cuBLAS compute type 32F, CLBlast SGEMM) */
    GM_ACC_FP16,        /* fp16 sums and products (CLBlast HGEMM) */
    GM_ACC_INT32,       /* exact integer sums (int8 inputs) */
} gm_gemm_acc;

/*
 * One vendor GEMM, row-major, over `batch` products (0 or 1: one):
 *   c_z = op(a_z) op(b_z)        (c_z += op(a_z) op(b_z) with `accumulate`)
 * for z < batch, op(a) m x k, op(b) k x n, c m x n. As stored:
 *   a  [m, k], or [k, m] with trans_a (op(a) = a^T);
 *   b  [k, n], or [n, k] with b_nk (op(b) = b^T: the weights of a layer
 *      held [out, in], as the transposed-A-only ("TN") kernels need);
 *   each row ld elements after the one before (lda, ldb, ldc; 0: packed,
 *   the stored row's length), product z starting stride elements after
 *   product z - 1 (stride_a, stride_b, stride_c) from the element offsets
 *   a_off, b_off, c_off of the buffers.
 * a and b hold `prec` (fp32, fp16, bf16, int8, fp8e4m3, fp8e5m2; fp8
 * unscaled, as the suite stores it); c holds `prec` too, rounded to nearest
 * even, or fp32 with c_fp32 (the fp32 result of 16-bit or fp8 inputs),
 * except for int8, whose c is the int32 accumulator: the exact sum of the
 * products of the stored codes (the caller applies its per-tensor scales;
 * c_fp32 is refused). With `accumulate` c is read and the product added to
 * it (BLAS's beta = 1), in c's type; without, c is only written.
 * Products accumulate as blas_plan says in `acc`; a library that would
 * reduce split sums in c's narrower type is told not to.
 */
typedef struct {
    gm_precision prec;
    size_t m, n, k;
    bool trans_a, b_nk;
    size_t lda, ldb, ldc;
    size_t a_off, b_off, c_off;
    size_t batch;
    size_t stride_a, stride_b, stride_c;
    bool c_fp32;
    bool accumulate;
    /* Set by blas_plan: */
    bool tn_only;           /* the library computes prec only with b_nk and not trans_a (its refusal says so) */
    gm_gemm_acc acc;
} gm_gemm;

/* The stored row lengths of a, b and c (what lda, ldb and ldc of 0 mean):
 * k (m with trans_a), n (k with b_nk) and n. */
size_t gm_gemm_lda(const gm_gemm *g);
size_t gm_gemm_ldb(const gm_gemm *g);
size_t gm_gemm_ldc(const gm_gemm *g);

#define GM_MAX_QUEUES 4     /* queues/streams opened with every device */

struct gm_device;

typedef struct gm_backend {
    const char *name;   /* "cuda", "opencl" */

    /* Loads the runtime and counts devices. On failure returns non-OK and
     * writes why (e.g. "libcuda.so.1 not found") into `why`. Idempotent. */
    gm_status (*probe)(int *device_count, char *why, size_t why_len);
    /* Facts about device `index` without opening it for work. */
    gm_status (*describe)(int index, gm_device_info *info, gm_error *err);

    gm_status (*open)(struct gm_device *dev, int index);
    void (*close)(struct gm_device *dev);
    gm_status (*mem_info)(struct gm_device *dev, uint64_t *free_b, uint64_t *total_b);

    /* Allocates `bytes` of `kind`. The allocation is real when this returns
     * GM_OK: lazy drivers have been made to back it (first touch). */
    gm_status (*alloc)(struct gm_device *dev, gm_mem_kind kind, size_t bytes, gm_buffer *out);
    void (*free)(struct gm_device *dev, gm_buffer *buf);
    /* A view of [offset, offset + bytes) of a device buffer, usable wherever
     * a buffer is (kernel arguments, copies, fills); offset is a multiple of
     * GM_VIEW_ALIGN. The parent outlives its views; free releases a view. */
    gm_status (*view)(struct gm_device *dev, const gm_buffer *parent, size_t offset, size_t bytes,
                      gm_buffer *out);

    /* Repeats `pattern` (1, 2 or 4 bytes) over [off, off+bytes) of buf. */
    gm_status (*fill)(struct gm_device *dev, int queue, gm_buffer *buf, size_t off,
                      size_t bytes, const void *pattern, size_t pattern_size);
    /* Copies between any two buffers (any kinds). Blocking unless `async`;
     * an async copy is complete after synchronize(queue). */
    gm_status (*copy)(struct gm_device *dev, int queue, gm_buffer *dst, size_t dst_off,
                      const gm_buffer *src, size_t src_off, size_t bytes, bool async);

    /* Maps [off, off + bytes) of a device buffer into host memory, waiting
     * until it is, for writing (`write`: its contents may be discarded) or
     * reading; unmap hands it back and waits, after which the device sees
     * what the host wrote. One mapping per buffer at a time. OpenCL maps
     * the buffer (clEnqueueMapBuffer); CUDA, which cannot map device
     * memory, backs the mapping with mapped pinned host memory
     * (cuMemHostAlloc DEVICEMAP) kept with the buffer until it is freed. */
    gm_status (*map)(struct gm_device *dev, int queue, gm_buffer *buf, size_t off, size_t bytes, bool write,
                     void **ptr);
    gm_status (*unmap)(struct gm_device *dev, int queue, gm_buffer *buf, void *ptr);
    /* Migrates a managed buffer to the device (or back to the host) ahead
     * of use, waiting for it (CUDA cuMemPrefetchAsync, OpenCL 2.1
     * clEnqueueSVMMigrateMem). GM_ERR_UNSUPPORTED where there is none. */
    gm_status (*prefetch)(struct gm_device *dev, int queue, gm_buffer *buf, bool to_device);

    /* Builds `program` (a name from kernels/) specialised by `variant`
     * ("fp16-chunked": each token T becomes -DGM_<T>=1). CUDA loads the
     * image built ahead of time for the pair (kernels/variants.mk lists
     * them); a pair without one fails GM_ERR_BUILD, "no CUDA image for
     * PROGRAM.VARIANT: ...". */
    gm_status (*program_build)(struct gm_device *dev, const char *program, const char *variant,
                               const char *extra_defines, gm_program **out);
    void (*program_release)(struct gm_device *dev, gm_program *prog);
    gm_status (*kernel_get)(struct gm_device *dev, gm_program *prog, const char *name,
                            gm_kernel **out);
    void (*kernel_release)(struct gm_device *dev, gm_kernel *k);
    /* Enqueues a 1-D launch of `global` work items in groups of `local`
     * (global is a multiple of local). Does not wait. */
    gm_status (*launch)(struct gm_device *dev, int queue, gm_kernel *k, size_t global,
                        size_t local, const gm_arg *args, int nargs);

    /* Records an event in the queue's order; elapsed time between two
     * events of one queue waits for the later one. */
    gm_status (*event_record)(struct gm_device *dev, int queue, gm_event **out);
    gm_status (*event_elapsed_ms)(struct gm_device *dev, gm_event *start, gm_event *end,
                                  double *ms);
    void (*event_release)(struct gm_device *dev, gm_event *ev);
    /* Holds `queue`: what is enqueued on it after this returns does not
     * start until queue_release, so that a timed rep's work is all queued
     * when the device reaches its first event, and the time between the
     * events is the device's, not the host's submission (bench.h,
     * gm_time_work). While a queue is held only launch and event_record
     * may be called: the shim releases the hold before any other op (one
     * that waits for the queue would wait forever). A backend may let go
     * by itself after a while (CUDA: 100 ms). GM_ERR_UNSUPPORTED where the
     * backend cannot hold its queue; NULL the same. */
    gm_status (*queue_hold)(struct gm_device *dev, int queue, gm_hold **out);
    /* Lets the held queue go on and releases h. */
    void (*queue_release)(struct gm_device *dev, gm_hold *h);

    /* Waits for all work on `queue`, or on every queue if queue < 0. */
    gm_status (*synchronize)(struct gm_device *dev, int queue);
    /* Hands the memory that the driver's stream-ordered pool keeps cached
     * (GM_MEM_ASYNC buffers freed since) back to the device, so that free
     * memory is free again: CUDA cuMemPoolTrimTo(pool, 0) after the
     * pool's frees have completed. Live buffers are untouched. GM_OK where
     * nothing is cached (OpenCL: no such pool; CUDA before the first
     * GM_MEM_ASYNC allocation). */
    gm_status (*trim)(struct gm_device *dev);

    /* The vendor GEMM, where the backend has one (its library loaded at
     * run time; gm_gemm above says what it computes).
     *   blas_impl names the implementation in rows for precision p
     *     ("cublas", "cublaslt", "clblast"), or is NULL where the library
     *     has no GEMM in p at all (no row then);
     *   blas_plan says whether the GEMM runs g's precision and shape on
     *     dev: GM_OK with g's plan fields set, else GM_ERR_UNSUPPORTED with
     *     the reason (library missing, a type the device lacks, dimensions
     *     the library refuses). Host only: it enqueues nothing and reads
     *     dev->info alone, so it answers for a closed device too (the oom
     *     suite's searching process lists a model's implementations with
     *     its device closed);
     *   blas_gemm enqueues a planned g on `queue` without waiting. */
    const char *(*blas_impl)(gm_precision p);
    gm_status (*blas_plan)(struct gm_device *dev, gm_gemm *g);
    gm_status (*blas_gemm)(struct gm_device *dev, int queue, const gm_gemm *g, const gm_buffer *a,
                           const gm_buffer *b, gm_buffer *c);
} gm_backend;

/* Every backend compiled into this binary, NULL-terminated. */
extern const gm_backend *const gm_backends[];
const gm_backend *gm_backend_find(const char *name);

extern const gm_backend gm_backend_opencl;
#ifdef GM_HAVE_CUDA
extern const gm_backend gm_backend_cuda;
#endif

#endif
