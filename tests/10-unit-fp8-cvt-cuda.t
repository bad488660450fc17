#!/bin/sh
# The CUDA stream kernels' fp8 conversions against src/lib/precision.c on
# the host (tests/cuda/fp8_cvt_agree.cpp): the hardware path of sm_89 and
# later (cuda_fp8.h, here in its host software) and the software path in
# half units, all 256 codes and every 257th of the 2^32 floats of each
# format: 257 is odd, so the floats checked take every pattern of their
# low 16 bits, and each 16-bit prefix (sign, exponent, leading mantissa
# bits, the round bit of both formats) some 255 times; about a second.
# FP8_CVT_STRIDE=1 checks all 2^32 (some 80 s on two cores; every float
# agreed when these conversions were written).
. tests/lib.sh
case $GM_BUILD in *nocuda*) skip_all "a build without CUDA" ;; esac
exec "$GM_BUILD/tests/fp8_cvt_agree" "${FP8_CVT_STRIDE:-257}"
