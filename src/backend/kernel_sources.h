/*
 * Kernel sources and prebuilt CUDA images, embedded into the binary at
 * build time (build/gen/kernel_table.c), so gpumem runs from any directory.
 */
#ifndef GM_KERNEL_SOURCES_H
#define GM_KERNEL_SOURCES_H

#include <stddef.h>

typedef struct {
    const char *name;            /* "stream" for kernels/stream.cl */
    const unsigned char *start;
    const unsigned char *end;
} gm_embedded_file;

/* kernels/<program>.cl as text (not NUL-terminated); NULL if none. */
const char *gm_kernel_text(const char *program, size_t *len);
/* kernels/gm_portable.h as text. */
const char *gm_kernel_header(size_t *len);

/* A CUDA fatbin for program and variant key ("stream", "fp16-grid"). */
const unsigned char *gm_cuda_image(const char *program, const char *variant, size_t *len);

/* The largest stack frame, in bytes per thread, of any kernel in the CUDA
 * images (as ptxas reported it when they were built); 0 without CUDA. */
extern const size_t gm_cuda_stack_bytes;

/* Writes the defines for a variant key: each '-'-separated token T
 * becomes "-DGM_<T upper-cased>=1". Returns 0, or -1 if it does not fit
 * or a token holds anything but letters, digits and '_'. */
int gm_variant_defines(const char *variant, char *out, size_t out_len);

#endif
