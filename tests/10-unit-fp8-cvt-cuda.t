#!/bin/sh
# The CUDA stream kernels' fp8 conversions against src/lib/precision.c on
# the host (tests/cuda/fp8_cvt_agree.cpp): the hardware path of sm_89 and
# later (cuda_fp8.h, here in its host software) and the software path in
# half units, all 256 codes and all 2^32 floats of each format (a sanitizer
# build every 257th float: its checks are of the code, not of the inputs).
. tests/lib.sh
case $GM_BUILD in *nocuda*) skip_all "a build without CUDA" ;; esac
bin=$GM_BUILD/tests/fp8_cvt_agree
case $GM_BUILD in *san*) stride=257 ;; *) stride=1 ;; esac
exec "$bin" "$stride"
