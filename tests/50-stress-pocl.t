#!/bin/sh
# gpumem stress on the OpenCL device: every check passes and the TAP
# stream is valid for prove (and its JUnit formatter); each injected fault
# is caught by the checks it concerns, as `not ok` with the diagnostics
# that describe it.
. tests/lib.sh
plan 16

quick="--duration 1 --mem-limit 64MiB --fill 50%"
run_gpumem stress $quick --out "$TEST_TMP/clean"
is "$RC" 0 "every check passes: exit status 0"
is "$(printf '%s\n' "$OUT" | grep -c '^ok [1-6] - ')" 6 "six test points, all ok"
prove -e cat "$TEST_TMP/clean/stress.tap" >"$TEST_TMP/prove.out" 2>&1
ok $? "prove accepts the TAP stream from the run folder"
if perl -MTAP::Formatter::JUnit -e 1 2>/dev/null; then
    prove --formatter TAP::Formatter::JUnit -e cat "$TEST_TMP/clean/stress.tap" >"$TEST_TMP/junit.xml" 2>/dev/null
    is "$(grep -c '<testcase ' "$TEST_TMP/junit.xml")" 6 "the JUnit formatter turns it into six test cases"
else
    skip "TAP::Formatter::JUnit is not installed (Debian: libtap-formatter-junit-perl)"
fi
is "$(csv_count "$TEST_TMP/clean/results.csv" '$_->{suite} eq "stress" && $_->{workload} eq "memtest" && $_->{metric} eq "errors" && $_->{value} == 0')" 1 \
    "measurements go to the run folder's results.csv"

GPUMEM_FAULT=flip-bits run_gpumem stress $quick --out "$TEST_TMP/flip"
is "$RC" 1 "flipped bits: exit status 1"
like "$OUT" "not ok 1 - memtest" "memtest catches the flipped bit"
like "$OUT" "  errors: 1
  bit_positions: \\[5\\]
  first_failures: \\[\"chunk 0 \\+ 0x[0-9a-f]+\"\\]" "with the error count, the bit position and the failing address"
for check in "3 - oom-recovery" "4 - swap-integrity" "5 - concurrency" "6 - soak"; do
    like "$OUT" "not ok $check" "${check#* - }: a flipped bit in its output is caught"
done
like "$OUT" "ok 2 - churn" "churn, which it does not touch, passes"

GPUMEM_FAULT=drop-free run_gpumem stress $quick --checks churn,oom-recovery --out "$TEST_TMP/drop"
like "$OUT" "not ok 1 - churn
  ---
(  [a-z_]+: .*
)*  leaked_bytes: [1-9][0-9]*
  failure: \"free memory did not come back" "a dropped free: churn reports the leak"

GPUMEM_FAULT=corrupt-swap run_gpumem stress $quick --checks swap-integrity,concurrency --out "$TEST_TMP/swap"
like "$OUT" "not ok 1 - swap-integrity
  ---
  failure: \"a 1048576-byte payload came back with a different checksum" "a corrupted swap payload is caught"

run_gpumem stress --checks memtest,nonsense
is "$RC" 2 "an unknown check: exit status 2"
done_testing
