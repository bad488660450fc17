#!/bin/sh
# The stream kernels that write (write, copy, scale, add, triad) keep a
# non-temporal store in every precision, as compiled by the OpenCL device
# (PoCL on an x86-64 CPU): its kernel cache, in a folder of the test's own
# (POCL_CACHE_DIR), is disassembled and each kernel must hold a vmovnt*
# instruction (the loop run where the arrays pass the last-level cache,
# kernels/stream.cl gm_store16_nt). Where the CPU target has AVX-512, LLVM
# folds bf16's and fp8's narrowing into a store with no non-temporal form
# unless the kernels keep the vector in a register first. There too, fp8's
# conversions take 16 values an instruction (kernels/gm_portable.h
# gm_half16_to_float, gm_float16_to_half_down_up): the fp8 kernels that
# round (write, scale, add, triad) convert to fp16 from a whole zmm
# register, and those that read fp8 (scale, add, triad) back into one.
. tests/lib.sh
[ "$(uname -m)" = x86_64 ] || skip_all "the check reads x86-64 machine code"
command -v objdump >/dev/null || skip_all "objdump (binutils) is not installed"
"$GPUMEM" info 2>/dev/null | grep -q '^  opencl:0 .*\[cpu\]' || skip_all "no OpenCL CPU device"
plan 5

cache=$TEST_TMP/pocl
mkdir -p "$cache"
export POCL_CACHE_DIR="$cache"
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite stream \
    --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --kernels write,copy,scale,add,triad --access chunked \
    --sizes 4KiB --reps 1 --warmup 0 --out "$TEST_TMP/run" --quiet
is "$RC" 0 "the writing kernels in every precision ran (4KiB, chunked)"
[ "$RC" = 0 ] || diag "$ERR"

# One program a precision, each with its kernels' shared objects (but the
# whole-output check's, stream_verify, which runs too and stores nothing).
objects=$(find "$cache" -name 'stream_*.so' ! -name 'stream_verify*' | sort)
is "$(printf '%s\n' "$objects" | grep -c .)" 30 "PoCL's cache holds the 5 kernels of the 6 precisions' programs"
without=
for so in $objects; do
    objdump -d --no-show-raw-insn "$so" | grep -q 'vmovnt' || without="$without ${so#"$cache"/}"
done
is "$without" "" "every one holds a non-temporal store (vmovnt*)"

# with PATTERN: how many of the kernels' machine codes hold it.
with() {
    n=0
    for so in $objects; do
        objdump -d --no-show-raw-insn "$so" | grep -q -E "$1" && n=$((n + 1))
    done
    echo "$n"
}
if grep -q -w avx512f /proc/cpuinfo 2>/dev/null; then
    is "$(with 'vcvtps2ph +[$]0x[12],%zmm')" 8 "AVX-512: fp8's 8 rounding kernels round 16 values an instruction, down and up"
    is "$(with 'vcvtph2ps +%ymm[0-9]+,%zmm')" 6 "and its 6 reading kernels widen 16 values an instruction"
else
    skip "the CPU has no AVX-512"
    skip "the CPU has no AVX-512"
fi
done_testing
