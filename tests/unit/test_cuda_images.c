/*
 * The CUDA images embedded in the binary (build/gen/kernel_table.c, from
 * kernels/variants.mk) against what the code asks the CUDA backend for:
 *   - every program has its grid images, which every caller asks for on
 *     a GPU (gm_device_prefers_chunked is false there);
 *   - the stream kernels have their chunked images too (the stream
 *     suite's --access chunked|both runs them on any device), and no other
 *     program has any;
 *   - a variant without an image fails program_build with GM_ERR_BUILD and
 *     one line naming it, before the driver is touched (so no GPU is
 *     needed here), and hands back no program.
 * A build without CUDA skips it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#ifdef GM_HAVE_CUDA
#include "backend/handle.h"
#include "backend/kernel_sources.h"

/* Every program, and the precisions each of its images has. */
static const struct {
    const char *program;
    const char *precisions[8];   /* NULL-terminated */
} programs[] = {
    {"stream", {"fp32", "fp16", "bf16", "int8", "fp8e4m3", "fp8e5m2"}},
    {"linear", {"fp32", "fp16", "bf16", "int8", "fp8e4m3", "fp8e5m2", "fp16-wint4"}},
    {"attention", {"fp32", "fp16", "bf16", "int8", "fp8e4m3", "fp8e5m2", "bf16-kvfp8e4m3"}},
    {"kvcache", {"fp32", "fp16", "bf16", "int8", "fp8e4m3", "fp8e5m2", "fp16-kvfp8e5m2"}},
    {"block", {"fp32", "fp16", "bf16", "int8", "fp8e4m3", "fp16-kvfp8e4m3"}},
    {"model", {"fp32", "fp16", "bf16", "int8", "fp8e5m2"}},
    {"abft", {"fp32", "fp16", "bf16", "fp16-wint4", "bf16-wint4"}},
    {"train", {"fp32", "fp16", "bf16"}},
    {"serve", {"fp32", "fp16", "bf16"}},
    {"touch", {"fp32"}},
    {"memtest", {"fp32"}},
    {"convert", {"fp32"}},
};

static bool has_image(const char *program, const char *precision, const char *access)
{
    char variant[64];
    size_t len = 0;
    snprintf(variant, sizeof variant, "%s-%s", precision, access);
    const unsigned char *image = gm_cuda_image(program, variant, &len);
    return image && len > 0;
}

static void test_grid_images_for_every_program(void **state)
{
    (void)state;
    int missing = 0;
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
        for (int j = 0; programs[i].precisions[j]; j++)
            if (!has_image(programs[i].program, programs[i].precisions[j], "grid")) {
                print_error("no image for %s.%s-grid\n", programs[i].program, programs[i].precisions[j]);
                missing++;
            }
    assert_int_equal(missing, 0);
}

static void test_chunked_images_for_stream_only(void **state)
{
    (void)state;
    int wrong = 0;
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++) {
        bool want = strcmp(programs[i].program, "stream") == 0;
        for (int j = 0; programs[i].precisions[j]; j++)
            if (has_image(programs[i].program, programs[i].precisions[j], "chunked") != want) {
                print_error("%s.%s-chunked: %s\n", programs[i].program, programs[i].precisions[j],
                            want ? "missing" : "built, but nothing asks a GPU for it");
                wrong++;
            }
    }
    assert_int_equal(wrong, 0);
}

static void test_missing_image_fails_in_one_line(void **state)
{
    (void)state;
    gm_device dev;
    memset(&dev, 0, sizeof dev);
    gm_program *prog = NULL;
    assert_int_equal(gm_backend_cuda.program_build(&dev, "attention", "fp16-chunked", NULL, &prog), GM_ERR_BUILD);
    assert_null(prog);
    assert_int_equal(dev.err.code, GM_ERR_BUILD);
    assert_string_equal(dev.err.msg, "no CUDA image for attention.fp16-chunked: the build compiles the variants "
                                     "kernels/variants.mk lists");
    assert_int_equal(gm_backend_cuda.program_build(&dev, "no_such_program", "fp32-grid", NULL, &prog), GM_ERR_BUILD);
    assert_null(prog);
    assert_non_null(strstr(dev.err.msg, "no CUDA image for no_such_program.fp32-grid"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_images_for_every_program),
        cmocka_unit_test(test_chunked_images_for_stream_only),
        cmocka_unit_test(test_missing_image_fails_in_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    printf("1..0 # SKIP built without CUDA: no CUDA images\n");
    return 0;
}
#endif
