/*
 * gm_cu_status (backend/cuda/cuda_api.h): each CUDA error code, by its
 * number in CUDA 13's cuda.h, as the suite's status. Every code after which
 * cuda.h says the context or the process's CUDA is unusable is device lost,
 * so that a run stops sending work to a dead context; OOM is only
 * CUDA_ERROR_OUT_OF_MEMORY. And cuBLAS is found in the toolkit's lib64. Needs the toolkit's cuda.h, no GPU; a build
 * without CUDA skips it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#ifdef GM_HAVE_CUDA
#include "backend/cuda/cuda_private.h"

#include <unistd.h>

static void test_sticky_codes_are_device_lost(void **state)
{
    (void)state;
    static const int lost[] = {
        214, /* ECC_UNCORRECTABLE */  220, /* NVLINK_UNCORRECTABLE */ 226, /* CONTAINED */
        700, /* ILLEGAL_ADDRESS */    702, /* LAUNCH_TIMEOUT */       710, /* ASSERT */
        714, /* HARDWARE_STACK_ERROR */ 715, /* ILLEGAL_INSTRUCTION */ 716, /* MISALIGNED_ADDRESS */
        717, /* INVALID_ADDRESS_SPACE */ 718, /* INVALID_PC */        719, /* LAUNCH_FAILED */
        721, /* TENSOR_MEMORY_LEAK */ 810, /* MPS_CLIENT_TERMINATED */ 911, /* EXTERNAL_DEVICE */
        46,  /* DEVICE_UNAVAILABLE */ 100, /* NO_DEVICE */            709, /* CONTEXT_IS_DESTROYED */
        4,   /* DEINITIALIZED */      999, /* UNKNOWN */
    };
    for (size_t i = 0; i < sizeof lost / sizeof *lost; i++) {
        if (gm_cu_status((CUresult)lost[i]) != GM_ERR_DEVICE_LOST)
            fail_msg("CUDA error %d is %s, not device lost", lost[i], gm_status_name(gm_cu_status((CUresult)lost[i])));
    }
}

static void test_other_codes(void **state)
{
    (void)state;
    assert_int_equal(gm_cu_status((CUresult)0), GM_OK);
    assert_int_equal(gm_cu_status((CUresult)2), GM_ERR_OOM);              /* OUT_OF_MEMORY */
    assert_int_equal(gm_cu_status((CUresult)801), GM_ERR_UNSUPPORTED);    /* NOT_SUPPORTED */
    assert_int_equal(gm_cu_status((CUresult)209), GM_ERR_BUILD);          /* NO_BINARY_FOR_GPU */
    assert_int_equal(gm_cu_status((CUresult)218), GM_ERR_BUILD);          /* INVALID_PTX */
    assert_int_equal(gm_cu_status((CUresult)1), GM_ERR_INVALID);          /* INVALID_VALUE */
    assert_int_equal(gm_cu_status((CUresult)400), GM_ERR_INVALID);        /* INVALID_HANDLE */
    /* Not sticky: a launch asking for too much is refused, the context lives. */
    assert_int_equal(gm_cu_status((CUresult)701), GM_ERR_INVALID);        /* LAUNCH_OUT_OF_RESOURCES */
    assert_int_equal(gm_cu_status((CUresult)720), GM_ERR_INVALID);        /* COOPERATIVE_LAUNCH_TOO_LARGE */
}

/* cuBLAS is found in the toolkit's lib64 where it is off the loader's
 * path (as a toolkit install leaves it); no GPU needed to load it. */
static void test_cublas_found_in_toolkit(void **state)
{
    (void)state;
    if (access("/usr/local/cuda/lib64/libcublas.so.13", F_OK) != 0
        && access("/usr/local/cuda/lib64/libcublas.so.12", F_OK) != 0)
        skip();
    const char *from = gm_cu_blas_library();
    if (!from)
        fail_msg("cuBLAS not loaded although the toolkit has it");
    print_message("cuBLAS from %s\n", from);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cublas_found_in_toolkit),
        cmocka_unit_test(test_sticky_codes_are_device_lost),
        cmocka_unit_test(test_other_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    printf("1..0 # SKIP built without CUDA: gm_cu_status is not compiled\n");
    return 0;
}
#endif
