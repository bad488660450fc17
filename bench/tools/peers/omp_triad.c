/*
 * A plain OpenMP triad on the host (a = b + s*c, STREAM's rule: 24 bytes
 * per element moved), the reference the stream suite's CPU triad is
 * compared with. Usage: omp_triad BYTES_PER_ARRAY REPS. Prints the best
 * and median bandwidth in GB/s after verifying the result.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (256u << 20);
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    size_t n = bytes / sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    double *gbs = malloc((size_t)reps * sizeof *gbs);
    if (!a || !b || !c || !gbs || reps < 1)
        return 2;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        a[i] = 0.0f;
        b[i] = (float)(i % 1024);
        c[i] = 1.0f;
    }
    const float s = 0.4f;
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        double t = omp_get_wtime() - t0;
        gbs[r] = 3.0 * (double)bytes / t / 1e9;
    }
    for (size_t i = 0; i < n; i += 4099)
        if (a[i] != (float)(i % 1024) + s) {
            fprintf(stderr, "omp_triad: wrong result at %zu\n", i);
            return 1;
        }
    qsort(gbs, (size_t)reps, sizeof *gbs, cmp);
    printf("%.3f %.3f\n", gbs[reps - 1], gbs[reps / 2]);
    free(a);
    free(b);
    free(c);
    free(gbs);
    return 0;
}
