#!/bin/sh
# Every fuzz target (tests/fuzz/fuzz_*.c, libFuzzer with ASan and UBSan)
# runs for FUZZ_TEST_SECONDS (default 5; `make fuzz` runs each for a minute) from its seed corpus
# tests/fuzz/NAME/, FUZZ_TEST_JOBS of them at a time (default: the
# cores): no crash, no leak, no undefined behaviour. The
# executions each reached are printed ("# fuzz_NAME executions: N").
. tests/lib.sh
command -v clang >/dev/null 2>&1 || skip_all "clang is not installed (scripts/deps.sh fuzz)"
[ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-*.a' 2>/dev/null | head -1)" ] ||
    skip_all "libFuzzer is not installed (scripts/deps.sh fuzz: libclang-rt-14-dev)"
# The fuzz targets are one build (build-fuzz, ASan and UBSan built in)
# whatever the suite's flavour: the sanitizer pass would run them again.
plain_pass_only "the fuzz targets carry ASan and UBSan themselves"
seconds=${FUZZ_TEST_SECONDS:-5}
targets=$(ls tests/fuzz/fuzz_*.c | sed 's|tests/fuzz/||; s|\.c$||')
plan $(($(echo "$targets" | wc -l) + 1))

# make test built them before the tests ran; what is out of date by now
# (and why, as make says it) is shown, for it costs this test minutes.
stale=$(make -n --debug=b fuzz-targets 2>/dev/null | grep -v "'fuzz-targets'" | grep -m3 -E 'newer than|does not exist')
[ -n "$stale" ] && diag "out of date since make test built them:" "$stale"
make -s fuzz-targets >"$TEST_TMP/build.log" 2>&1
ok $? "the fuzz targets build (make fuzz-targets)" || true
[ -s "$TEST_TMP/build.log" ] && diag "$(tail -20 "$TEST_TMP/build.log")"

# The targets run side by side, as many at a time as there are cores
# (each is one process on one core), so that the test takes about
# seconds x targets / cores; their verdicts follow in order.
jobs=${FUZZ_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
fuzz_one() {
    mkdir -p "$TEST_TMP/corpus-$1"
    build-fuzz/$1 -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$TEST_TMP/" \
        "$TEST_TMP/corpus-$1" "tests/fuzz/$1" >"$TEST_TMP/$1.log" 2>&1
    echo $? >"$TEST_TMP/$1.rc"
}
running=0
for t in $targets; do
    fuzz_one "$t" &
    running=$((running + 1))
    [ "$running" -lt "$jobs" ] || { wait; running=0; }
done
wait
for t in $targets; do
    rc=$(cat "$TEST_TMP/$t.rc" 2>/dev/null || echo 1)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TEST_TMP/$t.log")
    ok $((rc != 0 || ${runs:-0} == 0)) "$t: no crash, leak or undefined behaviour in ${seconds}s (${runs:-0} executions)"
    echo "# $t executions: ${runs:-0}"
    # The first report, or (none: killed from outside, say) the exit status and the log's end.
    [ "$rc" -ne 0 ] && diag "$t exit status $rc: $(grep -A30 -m1 'ERROR\|runtime error' "$TEST_TMP/$t.log" ||
        tail -15 "$TEST_TMP/$t.log")"
done
done_testing
