/* CUDA error codes as the suite's statuses (gm_cu_status, cuda_api.h). */
#include "backend/cuda/cuda_api.h"

gm_status gm_cu_status(CUresult rc)
{
    switch (rc) {
    case CUDA_SUCCESS:
        return GM_OK;
    case CUDA_ERROR_OUT_OF_MEMORY:
        return GM_ERR_OOM;
    /* Sticky: cuda.h says the context cannot be used any more (the
     * process must end to use CUDA again), or the hardware failed. */
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_MPS_CLIENT_TERMINATED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
    /* The device or the driver is gone, or the context was destroyed. */
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_MPS_CONNECTION_FAILED:
    case CUDA_ERROR_MPS_RPC_FAILURE:
    case CUDA_ERROR_MPS_SERVER_NOT_READY:
    case CUDA_ERROR_UNKNOWN:
        return GM_ERR_DEVICE_LOST;
    case CUDA_ERROR_NOT_SUPPORTED:
        return GM_ERR_UNSUPPORTED;
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_SHARED_OBJECT_INIT_FAILED:
        return GM_ERR_BUILD;
    default:
        return GM_ERR_INVALID;
    }
}
