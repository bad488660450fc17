/*
 * The storage conversions of gm_portable.h, run on the device so that a
 * test can compare them bit for bit with the host's (src/lib/precision.c):
 * convert_fp8: for i < n, e4m3[i], e5m2[i] = f[i] stored in fp8 (RNE;
 *   e4m3 saturating), and for i < 256 d43[i], d52[i] = code i decoded.
 * convert_int4_weights: for i < n, code[i] = gm_int4_code(w[i], sc[i]) and
 *   scale[i] = the fp16 scale of a group whose absmax is w[i], as
 *   block.cl's int4 quantiser computes them.
 */
GM_KERNEL convert_fp8(GM_GLOBAL const float *GM_RESTRICT f, GM_GLOBAL gm_u8 *GM_RESTRICT e4m3,
                      GM_GLOBAL gm_u8 *GM_RESTRICT e5m2, GM_GLOBAL float *GM_RESTRICT d43,
                      GM_GLOBAL float *GM_RESTRICT d52, gm_u64 n)
{
    GM_FOR_EACH(i, (size_t)n) {
        e4m3[i] = gm_float_to_fp8e4m3(f[i]);
        e5m2[i] = gm_float_to_fp8e5m2(f[i]);
        if (i < 256) {
            d43[i] = gm_fp8e4m3_to_float((gm_u32)i);
            d52[i] = gm_fp8e5m2_to_float((gm_u32)i);
        }
    }
}

GM_KERNEL convert_int4_weights(GM_GLOBAL const float *GM_RESTRICT w, GM_GLOBAL const float *GM_RESTRICT sc,
                       GM_GLOBAL gm_i8 *GM_RESTRICT code, GM_GLOBAL gm_u16 *GM_RESTRICT scale, gm_u64 n)
{
    GM_FOR_EACH(i, (size_t)n) {
        code[i] = (gm_i8)gm_int4_code(w[i], sc[i]);
        gm_half_store(scale, i, gm_int4_scale_of(fabs(w[i])));
    }
}

/*
 * convert_fp8_half: the same outputs through gm_portable.h's half-unit
 * conversions (e4m3 encodes f[i] * 2^-8, and its decoded half units are
 * multiplied by 2^8 here, both exact): with `wide` (OpenCL only) sixteen
 * at a time as the stream kernels convert, otherwise one at a time. n is
 * a multiple of 16.
 */
GM_KERNEL convert_fp8_half(GM_GLOBAL const float *GM_RESTRICT f, GM_GLOBAL gm_u8 *GM_RESTRICT e4m3,
                           GM_GLOBAL gm_u8 *GM_RESTRICT e5m2, GM_GLOBAL float *GM_RESTRICT d43,
                           GM_GLOBAL float *GM_RESTRICT d52, gm_u64 n, int wide)
{
#if defined(GM_OPENCL)
    if (wide) {
        GM_FOR_EACH(v, (size_t)n / 16) {
            float16 x = vload16(v, f);
            vstore16(gm_fp8x16_half_encode(x * (1.0f / GM_FP8_HALF_UNIT_E4M3), 3u, 0x7eu), v, e4m3);
            vstore16(gm_fp8x16_half_encode(x, 2u, 0x7cu), v, e5m2);
            if (v < 16) {
                uchar16 c = convert_uchar16((uint)v * 16u
                                            + (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
                vstore16(gm_fp8x16_half_decode(c, 1) * GM_FP8_HALF_UNIT_E4M3, v, d43);
                vstore16(gm_fp8x16_half_decode(c, 0), v, d52);
            }
        }
        return;
    }
#else
    (void)wide;
#endif
    GM_FOR_EACH(i, (size_t)n) {
        e4m3[i] = gm_fp8_half_encode(f[i] * (1.0f / GM_FP8_HALF_UNIT_E4M3), 3u, 0x7eu);
        e5m2[i] = gm_fp8_half_encode(f[i], 2u, 0x7cu);
        if (i < 256) {
            d43[i] = gm_fp8_half_decode((gm_u32)i, 1) * GM_FP8_HALF_UNIT_E4M3;
            d52[i] = gm_fp8_half_decode((gm_u32)i, 0);
        }
    }
}

/*
 * convert_int8_lanes (OpenCL: the int8 stream kernels' integer lanes):
 * for every scalar s[t] (t < n_s) and every int8 q (-128 .. 127, q + 128
 * = 16 * (v % 16) + lane for vector v = 16 t + v % 16),
 * mul[256 t + q + 128] = gm_i8x16_mul_q15(q, gm_q15(s[t])); and for the
 * 16 vectors of t = 0, pairs[8 v + l] = gm_i8x16_dot_pairs(q, ~q)'s lane l
 * (~q = -1 - q: every pair of signs, -128 * 127 among them).
 */
GM_KERNEL convert_int8_lanes(GM_GLOBAL const float *GM_RESTRICT s, GM_GLOBAL short *GM_RESTRICT mul,
                             GM_GLOBAL int *GM_RESTRICT pairs, gm_u64 n_s)
{
#if defined(GM_OPENCL)
    GM_FOR_EACH(v, (size_t)n_s * 16) {
        char16 q = as_char16(convert_uchar16((uint)(v % 16) * 16u
                                             + (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)))
                   ^ (char)0x80;   /* code q + 128 to q */
        vstore16(gm_i8x16_mul_q15(q, gm_q15(s[v / 16])), v, mul);
        if (v < 16)
            vstore8(gm_i8x16_dot_pairs(q, ~q), v, pairs);
    }
#else
    (void)s;
    (void)mul;
    (void)pairs;
    (void)n_s;
#endif
}
