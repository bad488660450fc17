#!/bin/sh
# Verification can fail: with the test-only fault switch, which overwrites
# one output value on the device after each kernel, every point is a
# mismatch row with no number, and the run exits 1.
. tests/lib.sh
plan 8

out=$TEST_TMP/run
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite stream \
    --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --sizes 256KiB --reps 2 --out "$out" --quiet
is "$RC" 1 "a wrong result makes the run exit 1"
like "$ERR" "42 points produced wrong output" "the run says how many points were wrong"
is "$(csv_count "$out/results.csv" '$_->{status} eq "mismatch"')" 42 "every point is a mismatch row"
is "$(csv_count "$out/results.csv" '$_->{status} eq "mismatch" && $_->{precision} =~ /^fp8/')" 14 \
    "fp8: every kernel in both formats is a mismatch row"
is "$(csv_count "$out/results.csv" '$_->{value} ne ""')" 0 "no mismatch row carries a number"
is "$(csv_count "$out/results.csv" '$_->{workload} eq "copy" && $_->{note} =~ /^element (\d+): expected/ && $1 * 2 == 262144 / {fp32 => 4, fp16 => 2, bf16 => 2, int8 => 1, fp8e4m3 => 1, fp8e5m2 => 1}->{$_->{precision}}')" 6 \
    "the note names the corrupted element (the middle one) and the expected value"
is "$(csv_count "$out/results.csv" '$_->{workload} eq "dot" && $_->{note} =~ /^sum: expected/')" 6 \
    "reductions name the expected sum"

# The same run without the fault is clean.
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite stream \
    --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --sizes 256KiB --reps 2 --out "$TEST_TMP/clean" --quiet
is "$RC" 0 "without the fault every point verifies"
done_testing
