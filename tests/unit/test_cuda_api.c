/*
 * The driver API table (backend/cuda/cuda_api.h) against the toolkit's
 * cuda.h, which the backend calls through pointers it gets from dlsym, so
 * that the compiler never compares the two:
 *   - each entry of GM_CU_FUNCS and GM_CU_OPTIONAL_FUNCS (field F) names
 *     the symbol cuda.h maps cuF to (e.g. cuMemAlloc_v2, not the original
 *     cuMemAlloc, whose size is 32 bits), and its pointer has the type of
 *     that function as cuda.h declares it;
 *   - the versioned entries have their exported symbol's prototype where
 *     cuda.h declares it (the original cuEventElapsedTime, which CUDA 13
 *     maps to _v2, the prototype of _v2: they are one signature);
 *   - every symbol is one the toolkit's libcuda stub exports, where the
 *     toolkit has it (the driver exports the same names).
 * Needs the toolkit's headers, no GPU; a build without CUDA skips it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#ifdef GM_HAVE_CUDA
#include "backend/cuda/cuda_api.h"

#include <dlfcn.h>

#define EXPANDED_NAME(x) NAME_OF(x)
#define NAME_OF(x) #x

/* Whether field F of the table has the type of cuda.h's cuF, and names
 * the symbol cuda.h calls for cuF; each mismatch is printed and counted. */
#define CHECK_ENTRY(field, symbol, ret, args)                                                             \
    do {                                                                                                  \
        if (strcmp(symbol, EXPANDED_NAME(cu##field)) != 0) {                                              \
            print_error("%s loads %s, but cuda.h calls %s\n", #field, symbol, EXPANDED_NAME(cu##field));  \
            wrong++;                                                                                      \
        }                                                                                                 \
        if (!__builtin_types_compatible_p(__typeof__(((gm_cu_api *)0)->field), __typeof__(&cu##field))) { \
            print_error("%s: the table's prototype of %s is not cuda.h's\n", #field, symbol);             \
            wrong++;                                                                                      \
        }                                                                                                 \
        checked++;                                                                                        \
    } while (0);

static void test_entries_match_cuda_h(void **state)
{
    (void)state;
    int checked = 0, wrong = 0;
    GM_CU_FUNCS(CHECK_ENTRY)
    GM_CU_OPTIONAL_FUNCS(CHECK_ENTRY)
    print_message("%d entry points checked against cuda.h (CUDA_VERSION %d)\n", checked, CUDA_VERSION);
    assert_int_equal(wrong, 0);
    assert_true(checked > 40);
}

static void test_versioned_entries_match_cuda_h(void **state)
{
    (void)state;
    gm_cu_api api;
    /* Both forms of cuEventElapsedTime take what the _v2 takes. */
    assert_true(__builtin_types_compatible_p(__typeof__(api.EventElapsedTimeV1), __typeof__(api.EventElapsedTime)));
#if CUDA_VERSION >= 12080
    assert_true(__builtin_types_compatible_p(__typeof__(api.EventElapsedTime), __typeof__(&cuEventElapsedTime_v2)));
#endif
#if CUDA_VERSION >= 12020
    assert_true(__builtin_types_compatible_p(__typeof__(api.MemPrefetchAsyncV2), __typeof__(&cuMemPrefetchAsync_v2)));
#endif
#if CUDA_VERSION < 13000
    /* The original form, which CUDA 13's cuda.h no longer declares. */
    assert_true(__builtin_types_compatible_p(__typeof__(api.MemPrefetchAsync), __typeof__(&cuMemPrefetchAsync)));
#endif
    (void)api;
}

/* The toolkit's libcuda stub: the driver's exports, without a driver. */
static void *open_stub(void)
{
    static const char *const paths[] = {"/usr/local/cuda/lib64/stubs/libcuda.so",
                                        "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        void *h = dlopen(paths[i], RTLD_LAZY | RTLD_LOCAL);
        if (h)
            return h;
    }
    return NULL;
}

#define CHECK_EXPORTED(field, symbol, ret, args)                                                          \
    if (!dlsym(stub, symbol))                                                                             \
        fail_msg("the driver stub does not export %s (%s)", symbol, #field);                               \
    exported++;

static void test_symbols_exported_by_driver_stub(void **state)
{
    (void)state;
    void *stub = open_stub();
    if (!stub)
        skip();
    int exported = 0;
    GM_CU_FUNCS(CHECK_EXPORTED)
    GM_CU_OPTIONAL_FUNCS(CHECK_EXPORTED)
    GM_CU_VERSIONED_FUNCS(CHECK_EXPORTED)
    print_message("the driver stub exports all %d symbols\n", exported);
    dlclose(stub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries_match_cuda_h),
        cmocka_unit_test(test_versioned_entries_match_cuda_h),
        cmocka_unit_test(test_symbols_exported_by_driver_stub),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    printf("1..0 # SKIP built without CUDA: the driver API table is not compiled\n");
    return 0;
}
#endif
