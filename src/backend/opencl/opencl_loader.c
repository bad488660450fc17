#include "backend/opencl/opencl_api.h"

#include <dlfcn.h>
#include <stdio.h>

static gm_cl_api api;
static int load_state;          /* 0 not tried, 1 loaded, -1 failed */
static char load_error[256];

const gm_cl_api *gm_cl_load(char *why, size_t why_len)
{
    if (load_state == 0) {
        void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            snprintf(load_error, sizeof load_error,
                     "no OpenCL ICD loader (libOpenCL.so.1 not found; install ocl-icd-libopencl1)");
            load_state = -1;
        } else {
            load_state = 1;
#define GM_CL_LOAD(ret, name, args)                                                   \
    if (load_state == 1) {                                                            \
        *(void **)&api.name = dlsym(lib, #name);                                      \
        if (!api.name) {                                                              \
            snprintf(load_error, sizeof load_error, "libOpenCL.so.1 lacks %s", #name); \
            load_state = -1;                                                          \
        }                                                                             \
    }
            GM_CL_FUNCS(GM_CL_LOAD)
#undef GM_CL_LOAD
#define GM_CL_LOAD_OPTIONAL(ret, name, args) *(void **)&api.name = dlsym(lib, #name);
            GM_CL_OPTIONAL_FUNCS(GM_CL_LOAD_OPTIONAL)
#undef GM_CL_LOAD_OPTIONAL
            /* The library stays loaded for the life of the process. */
        }
    }
    if (load_state < 0) {
        if (why)
            snprintf(why, why_len, "%s", load_error);
        return NULL;
    }
    return &api;
}

const char *gm_cl_error_name(cl_int code)
{
    switch (code) {
#define C(x) case x: return #x;
    C(CL_SUCCESS) C(CL_DEVICE_NOT_FOUND) C(CL_DEVICE_NOT_AVAILABLE) C(CL_COMPILER_NOT_AVAILABLE)
    C(CL_MEM_OBJECT_ALLOCATION_FAILURE) C(CL_OUT_OF_RESOURCES) C(CL_OUT_OF_HOST_MEMORY)
    C(CL_PROFILING_INFO_NOT_AVAILABLE) C(CL_MEM_COPY_OVERLAP) C(CL_BUILD_PROGRAM_FAILURE)
    C(CL_MAP_FAILURE) C(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) C(CL_INVALID_VALUE)
    C(CL_INVALID_DEVICE_TYPE) C(CL_INVALID_PLATFORM) C(CL_INVALID_DEVICE) C(CL_INVALID_CONTEXT)
    C(CL_INVALID_COMMAND_QUEUE) C(CL_INVALID_HOST_PTR) C(CL_INVALID_MEM_OBJECT)
    C(CL_INVALID_BUILD_OPTIONS) C(CL_INVALID_PROGRAM) C(CL_INVALID_PROGRAM_EXECUTABLE)
    C(CL_INVALID_KERNEL_NAME) C(CL_INVALID_KERNEL) C(CL_INVALID_ARG_INDEX) C(CL_INVALID_ARG_VALUE)
    C(CL_INVALID_ARG_SIZE) C(CL_INVALID_KERNEL_ARGS) C(CL_INVALID_WORK_DIMENSION)
    C(CL_INVALID_WORK_GROUP_SIZE) C(CL_INVALID_WORK_ITEM_SIZE) C(CL_INVALID_GLOBAL_OFFSET)
    C(CL_INVALID_EVENT) C(CL_INVALID_OPERATION) C(CL_INVALID_BUFFER_SIZE)
    C(CL_INVALID_GLOBAL_WORK_SIZE)
#undef C
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";   /* from cl_khr_icd */
    }
    return "CL_UNKNOWN_ERROR";
}
