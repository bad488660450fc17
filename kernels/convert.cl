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
