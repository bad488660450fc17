/*
 * The CUDA driver API entry points this backend uses, loaded from
 * libcuda.so.1 at run time, so that the binary starts where no NVIDIA
 * driver is installed. Each entry names the symbol the driver exports
 * (cuda.h maps most calls to a versioned symbol, e.g. cuMemAlloc_v2).
 * tests/unit/test_cuda_api.c checks every entry's symbol and prototype
 * against the toolkit's cuda.h.
 */
#ifndef GM_CUDA_API_H
#define GM_CUDA_API_H

#include "backend/backend.h"

#include <cuda.h>

/* X(field, exported symbol, return, parameters) */
#define GM_CU_FUNCS(X)                                                                         \
    X(Init, "cuInit", CUresult, (unsigned int))                                                 \
    X(DriverGetVersion, "cuDriverGetVersion", CUresult, (int *))                                \
    X(DeviceGetCount, "cuDeviceGetCount", CUresult, (int *))                                    \
    X(DeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                                    \
    X(DeviceGetName, "cuDeviceGetName", CUresult, (char *, int, CUdevice))                     \
    X(DeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t *, CUdevice))                    \
    X(DeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int *, CUdevice_attribute, CUdevice)) \
    X(DeviceGetPCIBusId, "cuDeviceGetPCIBusId", CUresult, (char *, int, CUdevice))             \
    X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext *, CUdevice))    \
    X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice))            \
    X(DevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState", CUresult, (CUdevice, unsigned int *, int *)) \
    X(DevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", CUresult, (CUdevice))                \
    X(CtxGetLimit, "cuCtxGetLimit", CUresult, (size_t *, CUlimit))                              \
    X(CtxSetLimit, "cuCtxSetLimit", CUresult, (CUlimit, size_t))                                \
    X(CtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                                  \
    X(MemGetInfo, "cuMemGetInfo_v2", CUresult, (size_t *, size_t *))                            \
    X(MemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))                             \
    X(MemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                                         \
    X(MemAllocHost, "cuMemAllocHost_v2", CUresult, (void **, size_t))                           \
    X(MemFreeHost, "cuMemFreeHost", CUresult, (void *))                                         \
    X(MemHostAlloc, "cuMemHostAlloc", CUresult, (void **, size_t, unsigned int))                \
    X(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", CUresult, (CUdeviceptr *, void *, unsigned int)) \
    X(MemAllocManaged, "cuMemAllocManaged", CUresult, (CUdeviceptr *, size_t, unsigned int))    \
    X(MemcpyAsync, "cuMemcpyAsync", CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream))     \
    X(MemsetD8Async, "cuMemsetD8Async", CUresult, (CUdeviceptr, unsigned char, size_t, CUstream)) \
    X(MemsetD16Async, "cuMemsetD16Async", CUresult, (CUdeviceptr, unsigned short, size_t, CUstream)) \
    X(MemsetD32Async, "cuMemsetD32Async", CUresult, (CUdeviceptr, unsigned int, size_t, CUstream)) \
    X(StreamCreate, "cuStreamCreate", CUresult, (CUstream *, unsigned int))                     \
    X(StreamDestroy, "cuStreamDestroy_v2", CUresult, (CUstream))                                \
    X(StreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))                           \
    X(EventCreate, "cuEventCreate", CUresult, (CUevent *, unsigned int))                        \
    X(EventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))                                   \
    X(EventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))                              \
    X(EventSynchronize, "cuEventSynchronize", CUresult, (CUevent))                              \
    X(ModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule *, const void *))                 \
    X(ModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                                     \
    X(ModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction *, CUmodule, const char *)) \
    X(LaunchKernel, "cuLaunchKernel", CUresult,                                                 \
      (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,        \
       unsigned int, unsigned int, CUstream, void **, void **))                                 \
    X(GetErrorName, "cuGetErrorName", CUresult, (CUresult, const char **))                      \
    X(GetErrorString, "cuGetErrorString", CUresult, (CUresult, const char **))

/* Entry points a driver may lack (older, or newer having renamed them):
 * NULL then, and what needs them is `unsupported` (cuFuncGetParamInfo,
 * drivers from 12.4 on: the launch's check of its arguments is skipped;
 * cuLaunchHostFunc, CUDA 10 on: timed reps go unheld). */
#define GM_CU_OPTIONAL_FUNCS(X)                                                                \
    X(MemAllocAsync, "cuMemAllocAsync", CUresult, (CUdeviceptr *, size_t, CUstream))            \
    X(MemFreeAsync, "cuMemFreeAsync", CUresult, (CUdeviceptr, CUstream))                        \
    X(DeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", CUresult, (CUmemoryPool *, CUdevice)) \
    X(MemPoolSetAttribute, "cuMemPoolSetAttribute", CUresult, (CUmemoryPool, CUmemPool_attribute, void *)) \
    X(MemPoolTrimTo, "cuMemPoolTrimTo", CUresult, (CUmemoryPool, size_t))                      \
    X(FuncGetParamInfo, "cuFuncGetParamInfo", CUresult, (CUfunction, size_t, size_t *, size_t *)) \
    X(LaunchHostFunc, "cuLaunchHostFunc", CUresult, (CUstream, CUhostFn, void *))

/* Optional too, and named by the exported version, which cuda.h maps to
 * differently from one toolkit to the next. cuEventElapsedTime_v2
 * (drivers from 570 on) and the original cuEventElapsedTime have one
 * signature: gm_cu_load takes the first it finds into EventElapsedTime and
 * fails only when both are missing. cuMemPrefetchAsync is the original
 * (CUdevice) form, which drivers keep exporting; cuMemPrefetchAsync_v2
 * (CUDA 12.2 on) the CUmemLocation form, which CUDA 13 made the only one
 * in its headers. */
#define GM_CU_VERSIONED_FUNCS(X)                                                               \
    X(EventElapsedTime, "cuEventElapsedTime_v2", CUresult, (float *, CUevent, CUevent))         \
    X(EventElapsedTimeV1, "cuEventElapsedTime", CUresult, (float *, CUevent, CUevent))          \
    X(MemPrefetchAsync, "cuMemPrefetchAsync", CUresult, (CUdeviceptr, size_t, CUdevice, CUstream)) \
    X(MemPrefetchAsyncV2, "cuMemPrefetchAsync_v2", CUresult,                                    \
      (CUdeviceptr, size_t, CUmemLocation, unsigned int, CUstream))

#define GM_CU_DECLARE(field, symbol, ret, args) ret(CUDAAPI *field) args;
typedef struct {
    GM_CU_FUNCS(GM_CU_DECLARE)
    GM_CU_OPTIONAL_FUNCS(GM_CU_DECLARE)
    GM_CU_VERSIONED_FUNCS(GM_CU_DECLARE)
} gm_cu_api;
#undef GM_CU_DECLARE

/* The suite's status for a CUDA error code: GM_OK for CUDA_SUCCESS,
 * GM_ERR_OOM only for memory exhaustion, GM_ERR_DEVICE_LOST for every code
 * after which cuda.h says the context (or the process's CUDA) is unusable,
 * GM_ERR_UNSUPPORTED, GM_ERR_BUILD for kernel images, else GM_ERR_INVALID.
 * Pure: needs no driver (cuda_errors.c). */
gm_status gm_cu_status(CUresult rc);

/* Loads libcuda.so.1 and calls cuInit once. Returns NULL and fills `why`
 * if there is no driver or it cannot start. */
const gm_cu_api *gm_cu_load(char *why, size_t why_len);

#endif
