#!/bin/sh
# Bad input gets one clear line on stderr naming the argument, and exit 2;
# a request for a device that does not exist gets exit 2 (or 3 where no
# device exists at all).
. tests/lib.sh
plan 48

# expect_usage DESCRIPTION REGEX ARGS... : exit 2, one stderr line matching REGEX
expect_usage() {
    desc=$1 re=$2
    shift 2
    run_gpumem "$@"
    is "$RC" 2 "$desc: exit status 2"
    is "$(printf '%s\n' "$ERR" | grep -c .)" 1 "$desc: one line on stderr"
    like "$ERR" "$re" "$desc: the message names the problem"
}

L="--mem-limit $TEST_MEM_LIMIT"
expect_usage "unknown command" "unknown command 'frobnicate'" frobnicate
expect_usage "unknown option" "unknown option '--frobnicate'" bench --frobnicate
expect_usage "missing value" "'--reps' needs a value" bench --reps
expect_usage "malformed range" "--sizes: range '8MiB:4MiB:x2' runs backwards" bench $L --sizes 8MiB:4MiB:x2
expect_usage "bad size unit" "--sizes: .*unknown unit" bench $L --sizes 4QiB
expect_usage "absurd range" "too many points" bench $L --sizes 4KiB:1TiB:+4KiB
expect_usage "bad reps" "--reps 'zero'" bench $L --reps zero
expect_usage "unknown precision" "unknown value 'fp64'" bench $L --precision fp32,fp64
expect_usage "unknown backend" "unknown backend 'rocm'" bench $L --backend rocm
expect_usage "missing profile" "no profile 'nosuch'" bench --profile nosuch
expect_usage "device out of range" "--device 63" bench $L --backend opencl --device 63
# An output folder the OS refuses is exit 4 (results could not be written).
run_gpumem bench $L --out /proc/gpumem-test/run
is "$RC" 4 "unwritable --out: exit status 4"
is "$(printf '%s\n' "$ERR" | grep -c .)" 1 "unwritable --out: one line on stderr"
like "$ERR" "cannot create output folder /proc/gpumem-test/run: " "unwritable --out: the message names the folder and the error"

# A profile with a bad line names the file and the line.
printf '[bench]\nreps = 3\nsizes = 1MiB:x\n' >"$TEST_TMP/bad.ini"
run_gpumem bench --profile "$TEST_TMP/bad.ini"
is "$RC" 2 "bad profile: exit status 2"
like "$ERR" "bad.ini:3: --sizes" "bad profile: file and line named"

# An --out folder that already holds a run is refused; its rows stay.
mkdir -p "$TEST_TMP/used" && echo "keep" >"$TEST_TMP/used/results.csv"
run_gpumem bench $L --sizes 64KiB --reps 1 --kernels copy --precision fp32 --out "$TEST_TMP/used" --quiet
is "$RC" 2 "--out holding a run: exit status 2"
is "$(cat "$TEST_TMP/used/results.csv")" "keep" "--out holding a run: earlier results untouched"

run_gpumem info
is "$RC" 0 "info: exit status 0"
like "$OUT" "opencl: [0-9]+ devices?" "info: lists the OpenCL backend"
like "$OUT" "(cuda: unavailable: |cuda: not built|cuda: [0-9]+ device)" "info: says what became of CUDA"

# No OpenCL platform (the ICD loader finds no vendor): said, and exit 3.
OCL_ICD_VENDORS=$TEST_TMP/no-vendors run_gpumem info
is "$RC" 3 "info with no OpenCL platform: exit status 3"
like "$OUT" "opencl: unavailable: no OpenCL platform" "info says OpenCL has no platform"
OCL_ICD_VENDORS=$TEST_TMP/no-vendors run_gpumem bench --quiet
is "$RC" 3 "bench with no device: exit status 3"
like "$ERR" "no usable device" "bench says there is no usable device"

run_gpumem --help
is "$RC" 0 "--help: exit status 0"
done_testing
