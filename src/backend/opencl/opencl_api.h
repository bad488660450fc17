/*
 * The OpenCL entry points this backend uses, loaded from libOpenCL.so.1 at
 * run time so that the binary starts where no ICD loader is installed.
 */
#ifndef GM_OPENCL_API_H
#define GM_OPENCL_API_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#define GM_CL_FUNCS(X)                                                                         \
    X(cl_int, clGetPlatformIDs, (cl_uint, cl_platform_id *, cl_uint *))                        \
    X(cl_int, clGetPlatformInfo, (cl_platform_id, cl_platform_info, size_t, void *, size_t *))  \
    X(cl_int, clGetDeviceIDs, (cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *)) \
    X(cl_int, clGetDeviceInfo, (cl_device_id, cl_device_info, size_t, void *, size_t *))        \
    X(cl_context, clCreateContext, (const cl_context_properties *, cl_uint, const cl_device_id *, \
                                    void(CL_CALLBACK *)(const char *, const void *, size_t, void *), \
                                    void *, cl_int *))                                          \
    X(cl_int, clReleaseContext, (cl_context))                                                   \
    X(cl_command_queue, clCreateCommandQueue, (cl_context, cl_device_id, cl_command_queue_properties, \
                                               cl_int *))                                       \
    X(cl_int, clReleaseCommandQueue, (cl_command_queue))                                        \
    X(cl_mem, clCreateBuffer, (cl_context, cl_mem_flags, size_t, void *, cl_int *))             \
    X(cl_int, clReleaseMemObject, (cl_mem))                                                     \
    X(cl_mem, clCreateSubBuffer, (cl_mem, cl_mem_flags, cl_buffer_create_type, const void *, cl_int *)) \
    X(cl_int, clEnqueueFillBuffer, (cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, \
                                    cl_uint, const cl_event *, cl_event *))                     \
    X(cl_int, clEnqueueCopyBuffer, (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t,   \
                                    cl_uint, const cl_event *, cl_event *))                     \
    X(cl_int, clEnqueueReadBuffer, (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *,  \
                                    cl_uint, const cl_event *, cl_event *))                     \
    X(cl_int, clEnqueueWriteBuffer, (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, \
                                     cl_uint, const cl_event *, cl_event *))                    \
    X(void *, clEnqueueMapBuffer, (cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, \
                                   cl_uint, const cl_event *, cl_event *, cl_int *))            \
    X(cl_int, clEnqueueUnmapMemObject, (cl_command_queue, cl_mem, void *, cl_uint, const cl_event *, \
                                        cl_event *))                                            \
    X(cl_program, clCreateProgramWithSource, (cl_context, cl_uint, const char **, const size_t *, \
                                              cl_int *))                                        \
    X(cl_int, clBuildProgram, (cl_program, cl_uint, const cl_device_id *, const char *,         \
                               void(CL_CALLBACK *)(cl_program, void *), void *))                \
    X(cl_int, clGetProgramBuildInfo, (cl_program, cl_device_id, cl_program_build_info, size_t,  \
                                      void *, size_t *))                                        \
    X(cl_int, clReleaseProgram, (cl_program))                                                   \
    X(cl_kernel, clCreateKernel, (cl_program, const char *, cl_int *))                          \
    X(cl_int, clReleaseKernel, (cl_kernel))                                                     \
    X(cl_int, clSetKernelArg, (cl_kernel, cl_uint, size_t, const void *))                       \
    X(cl_int, clEnqueueNDRangeKernel, (cl_command_queue, cl_kernel, cl_uint, const size_t *,    \
                                       const size_t *, const size_t *, cl_uint, const cl_event *, \
                                       cl_event *))                                             \
    X(cl_int, clEnqueueMarkerWithWaitList, (cl_command_queue, cl_uint, const cl_event *, cl_event *)) \
    X(cl_int, clEnqueueBarrierWithWaitList, (cl_command_queue, cl_uint, const cl_event *, cl_event *)) \
    X(cl_event, clCreateUserEvent, (cl_context, cl_int *))                                      \
    X(cl_int, clSetUserEventStatus, (cl_event, cl_int))                                         \
    X(cl_int, clFinish, (cl_command_queue))                                                     \
    X(cl_int, clWaitForEvents, (cl_uint, const cl_event *))                                     \
    X(cl_int, clGetEventProfilingInfo, (cl_event, cl_profiling_info, size_t, void *, size_t *)) \
    X(cl_int, clReleaseEvent, (cl_event))

/* Entry points of OpenCL 2.0+, absent from 1.2 platforms: may be NULL. */
#define GM_CL_OPTIONAL_FUNCS(X)                                                                \
    X(void *, clSVMAlloc, (cl_context, cl_svm_mem_flags, size_t, cl_uint))                      \
    X(void, clSVMFree, (cl_context, void *))                                                    \
    X(cl_int, clSetKernelArgSVMPointer, (cl_kernel, cl_uint, const void *))                     \
    X(cl_int, clEnqueueSVMMemcpy, (cl_command_queue, cl_bool, void *, const void *, size_t,     \
                                   cl_uint, const cl_event *, cl_event *))                      \
    X(cl_int, clEnqueueSVMMemFill, (cl_command_queue, void *, const void *, size_t, size_t,     \
                                    cl_uint, const cl_event *, cl_event *))                     \
    X(cl_int, clEnqueueSVMMigrateMem, (cl_command_queue, cl_uint, const void **, const size_t *, \
                                       cl_mem_migration_flags, cl_uint, const cl_event *, cl_event *))

#define GM_CL_DECLARE(ret, name, args) ret(CL_API_CALL *name) args;
typedef struct {
    GM_CL_FUNCS(GM_CL_DECLARE)
    GM_CL_OPTIONAL_FUNCS(GM_CL_DECLARE)
} gm_cl_api;
#undef GM_CL_DECLARE

/* Loads the library once. Returns NULL and fills `why` if it cannot. */
const gm_cl_api *gm_cl_load(char *why, size_t why_len);

/* The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"). */
const char *gm_cl_error_name(cl_int code);

#endif
