#!/bin/sh
# gpumem stress on the OpenCL device: every check passes and the TAP
# stream is valid for prove (and its JUnit formatter); each injected fault
# is caught by the checks it concerns, as `not ok` with the diagnostics
# that describe it, while the checks it does not concern pass.
. tests/lib.sh
plan 33

quick="--duration 1 --mem-limit 64MiB --fill 50%"
run_gpumem stress $quick --out "$TEST_TMP/clean"
is "$RC" 0 "every check passes: exit status 0"
is "$(printf '%s\n' "$OUT" | grep -c '^ok [1-6] - ')" 6 "six test points, all ok"
is "$(cat "$TEST_TMP/clean/stress.tap")" "$OUT" "the run folder's stress.tap is the stream printed"
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
like "$(cat "$TEST_TMP/clean/meta.json")" '"status": "complete"' "meta.json records the run as complete"
like "$OUT" "ok 2 - churn
  ---
(  [A-Za-z0-9_]+: .*
)*  leak_check: accounting \\(no driver figure" "churn says which figures its leak check compared"

GPUMEM_FAULT=flip-bits run_gpumem stress $quick --out "$TEST_TMP/flip"
is "$RC" 1 "flipped bits: exit status 1"
like "$OUT" "not ok 1 - memtest" "memtest catches the flipped bit"
like "$OUT" "  errors: 1
  bit_positions: \\[5\\]
  first_failures: \\[\"chunk 0 \\+ 0x[0-9a-f]+\"\\]" "with the error count, the bit position and the failing address"
for check in "3 - oom-recovery" "4 - swap-integrity" "5 - concurrency" "6 - soak"; do
    like "$OUT" "not ok $check" "${check#* - }: a flipped bit in its output is caught"
done
like "$OUT" "not ok 6 - soak
  ---
(  [A-Za-z0-9_]+: .*
)*  wrong_pages: [1-9][0-9]*
  failure: \"[0-9]+ sampled page checks found wrong output\"" "soak reports the wrong pages"
like "$OUT" "ok 2 - churn" "churn, which it does not touch, passes"
prove -e cat "$TEST_TMP/flip/stress.tap" >"$TEST_TMP/prove.out" 2>&1
is "$?" 1 "prove reads the failing stream and fails"
like "$(cat "$TEST_TMP/prove.out")" "Failed tests?:  ?1, 3-6" "naming the failed test points"
like "$(cat "$TEST_TMP/flip/meta.json")" '"status": "failed"' "meta.json records the run as failed"

GPUMEM_FAULT=drop-free run_gpumem stress $quick --checks churn,oom-recovery,memtest --out "$TEST_TMP/drop"
is "$RC" 1 "a dropped free: exit status 1"
like "$OUT" "not ok 2 - churn
  ---
(  [A-Za-z0-9_]+: .*
)*  leaked_bytes: [1-9][0-9]*
  failure: \"free memory did not come back" "churn reports the leak"
like "$OUT" "not ok 3 - oom-recovery
  ---
  exhausted_64MiB: 67108864 bytes in 1 allocations, refused by the cap
  failure: \"after exhausting memory with 64MiB chunks, 67108864 bytes did not come back\"
(  [A-Za-z0-9_]+: .*
)*  recovered: 2 of 3" "oom-recovery reports the memory that did not come back"
like "$OUT" "ok 1 - memtest" "memtest, which frees nothing early, passes"

GPUMEM_FAULT=corrupt-swap run_gpumem stress --mem-limit 64MiB --checks swap-integrity,concurrency --out "$TEST_TMP/swap"
is "$RC" 1 "a corrupted swap payload: exit status 1"
like "$OUT" "not ok 1 - swap-integrity
  ---
  failure: \"a 1048576-byte payload came back with a different checksum \\(round 0\\)\"
  round_trips: 24
  corrupt_payloads: 1" "swap-integrity catches it, naming the payload"
like "$OUT" "ok 2 - concurrency" "concurrency, which swaps nothing, passes"

soak="--checks soak --duration 4 --mem-limit 64MiB --fill 50%"
run_gpumem stress $soak --out "$TEST_TMP/soak"
like "$OUT" "ok 1 - soak
  ---
(  [A-Za-z0-9_]+: .*
)*  drop: -?[0-9.]+%" "soak over 4 seconds judges the throughput drop, and passes"
GPUMEM_FAULT=throttle run_gpumem stress $soak --out "$TEST_TMP/throttle"
is "$RC" 1 "a throttled device: exit status 1"
like "$OUT" "not ok 1 - soak
  ---
(  [A-Za-z0-9_]+: .*
)*  drop: [5-9][0-9]\\.[0-9]%
  wrong_pages: 0
  failure: \"throughput fell [0-9]+% \\(more than 50%\\): throttling\"" "soak catches the throughput falling"

run_gpumem stress --checks memtest,nonsense
is "$RC" 2 "an unknown check: exit status 2"
GPUMEM_FAULT=flip-bit run_gpumem stress --mem-limit 64MiB --fill 50% --checks memtest --out "$TEST_TMP/typo"
is "$RC" 2 "an unknown fault: exit status 2"
like "$ERR" "GPUMEM_FAULT 'flip-bit': not a stress fault" "naming the value"
done_testing
