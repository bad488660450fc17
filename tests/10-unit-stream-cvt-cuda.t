#!/bin/sh
# The CUDA stream kernels' word conversions against src/lib/precision.c on
# the host (tests/cuda/stream_cvt_agree.cpp): fp8's hardware path of sm_89
# and later (cuda_fp8.h, here in its host software) and its software path
# in half units; the fp16 and bf16 pair encoders; int8's decoder and
# encoder and the write kernel's values, which use no conversion
# instruction. All 256 codes of each byte format, and every 257th of the
# 2^32 floats for each encoder: 257 is odd, so the floats checked take
# every pattern of their low 16 bits, and each 16-bit prefix (sign,
# exponent, leading mantissa bits, every format's round bit) some 255
# times; a few seconds. STREAM_CVT_STRIDE=1 checks all 2^32 (a few
# minutes on two cores; every float agreed when these conversions were
# written).
. tests/lib.sh
case $GM_BUILD in *nocuda*) skip_all "a build without CUDA" ;; esac
exec "$GM_BUILD/tests/stream_cvt_agree" "${STREAM_CVT_STRIDE:-257}"
