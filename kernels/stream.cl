/*
 * Stream kernels: bandwidth of the simplest access patterns, in every
 * storage precision (see gm_portable.h). Inputs a and b are never written,
 * so every repetition of a kernel produces the same output and can be
 * verified against one CPU reference.
 *
 *   read   partials[g] = sum of a over work group g      bytes: n
 *   write  c[i] = gm_stream_write_value(i)               bytes: n
 *   copy   c = a                                          bytes: 2n
 *   scale  c = s * a                                      bytes: 2n
 *   add    c = a + b                                      bytes: 3n
 *   triad  c = a + s * b                                  bytes: 3n
 *   dot    partials[g] = sum of a * b over work group g   bytes: 2n
 *
 * Reductions assume a work-group size that is a power of two <= GM_WG_MAX.
 */
#define GM_WG_MAX 1024

GM_INLINE float gm_stream_write_value(size_t i)
{
    return (float)((int)(i & 255u) - 128) * (1.0f / 128.0f);
}

GM_INLINE float gm_group_sum(GM_LOCAL float *scratch, float v)
{
    size_t lid = gm_local_id();
    scratch[lid] = v;
    gm_barrier();
    for (size_t half_n = gm_local_size() / 2; half_n > 0; half_n /= 2) {
        if (lid < half_n)
            scratch[lid] += scratch[lid + half_n];
        gm_barrier();
    }
    return scratch[0];
}

GM_KERNEL stream_read(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL float *GM_RESTRICT partials,
                      unsigned long n, float scale)
{
    GM_LOCAL_DECL float scratch[GM_WG_MAX];
    float sum;
    GM_SUM(sum, i, (size_t)n, GM_LOAD(a, i, scale));
    float total = gm_group_sum(scratch, sum);
    if (gm_local_id() == 0)
        partials[gm_group_id()] = total;
}

GM_KERNEL stream_write(GM_GLOBAL gm_t *GM_RESTRICT c, unsigned long n, float scale)
{
    GM_FOR_EACH(i, (size_t)n) GM_STORE(c, i, gm_stream_write_value(i), scale);
}

GM_KERNEL stream_copy(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL gm_t *GM_RESTRICT c,
                      unsigned long n)
{
    GM_FOR_EACH(i, (size_t)n) c[i] = a[i];
}

GM_KERNEL stream_scale(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL gm_t *GM_RESTRICT c,
                       unsigned long n, float s, float scale)
{
    GM_FOR_EACH(i, (size_t)n) GM_STORE(c, i, s * GM_LOAD(a, i, scale), scale);
}

GM_KERNEL stream_add(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_t *GM_RESTRICT b,
                     GM_GLOBAL gm_t *GM_RESTRICT c, unsigned long n, float scale)
{
    GM_FOR_EACH(i, (size_t)n) GM_STORE(c, i, GM_LOAD(a, i, scale) + GM_LOAD(b, i, scale), scale);
}

GM_KERNEL stream_triad(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_t *GM_RESTRICT b,
                       GM_GLOBAL gm_t *GM_RESTRICT c, unsigned long n, float s, float scale)
{
    GM_FOR_EACH(i, (size_t)n) GM_STORE(c, i, GM_LOAD(a, i, scale) + s * GM_LOAD(b, i, scale), scale);
}

GM_KERNEL stream_dot(GM_GLOBAL const gm_t *GM_RESTRICT a, GM_GLOBAL const gm_t *GM_RESTRICT b,
                     GM_GLOBAL float *GM_RESTRICT partials, unsigned long n, float scale)
{
    GM_LOCAL_DECL float scratch[GM_WG_MAX];
    float sum;
    GM_SUM(sum, i, (size_t)n, GM_LOAD(a, i, scale) * GM_LOAD(b, i, scale));
    float total = gm_group_sum(scratch, sum);
    if (gm_local_id() == 0)
        partials[gm_group_id()] = total;
}
