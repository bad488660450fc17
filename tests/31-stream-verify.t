#!/bin/sh
# Verification can fail: with the test-only fault switch, which overwrites
# one output value, drawn from a seed, on the device after each kernel,
# every point is a mismatch row with no number, and the run exits 1
# (tests/31-stream-faults.t sweeps the sizes and both faults).
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
struck=" $(printf '%s\n' "$ERR" | sed -n 's/^gpumem: fault: corrupt-output struck element \([0-9]*\) of .*/\1/p' | tr '\n' ' ')"
named=$(perl -MText::ParseWords -ne 'my @f = parse_line(",", 0, $_); print "$1\n" if $f[6] eq "copy" && $f[28] =~ /^element (\d+): expected .*; 1 of \d+ elements wrong/' \
    "$out/results.csv")
n=0 bad=0
for e in $named; do
    n=$((n + 1))
    case "$struck" in *" $e "*) ;; *) bad=1 ;; esac
done
[ "$n" -eq 6 ] && [ "$bad" -eq 0 ]
ok $? "the copy notes name a struck element, its expected value and the count: $(echo $named)"
is "$(csv_count "$out/results.csv" '$_->{workload} eq "dot" && $_->{note} =~ /CPU check: sum: expected/')" 6 \
    "reductions name the expected sum"

# The same run without the fault is clean.
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite stream \
    --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --sizes 256KiB --reps 2 --out "$TEST_TMP/clean" --quiet
is "$RC" 0 "without the fault every point verifies"
done_testing
