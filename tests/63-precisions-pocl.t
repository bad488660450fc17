#!/bin/sh
# bench/tools/precisions.sh (make precisions) for real on the OpenCL device
# (PoCL), tiny and capped so that it takes seconds: one gpumem run in two
# rounds, a table row per kernel with a ratio for each precision, fp32's
# exactly 1.000, the exit status the marks call for; a bad setting and a
# failed point exit 2 with their message. Speed is not judged: at 1MiB
# these are the cache's ratios, and the run may pass or miss the goal.
. tests/lib.sh
plan 20

# prec [VAR=VALUE...]: runs the script with the test's settings (the
# arguments override them); sets RC, OUT, ERR.
prec() {
    env GPUMEM="$GPUMEM" PREC_MEM_LIMIT="$TEST_MEM_LIMIT" PREC_SIZE=1MiB PREC_ROUNDS=2 PREC_REPS=2 \
        PREC_KERNELS=read,triad PREC_PRECISIONS=fp16,int8 "$@" bench/tools/precisions.sh \
        >"$TEST_TMP/out" 2>"$TEST_TMP/err"
    RC=$?
    OUT=$(cat "$TEST_TMP/out")
    ERR=$(cat "$TEST_TMP/err")
}

run=$TEST_TMP/run
prec PREC_OUT="$run"
ok $([ "$RC" = 0 ] || [ "$RC" = 1 ]; echo $?) "a clean run exits 0 or 1 (got $RC)"
is "$ERR" "" "and says nothing on stderr"
[ "$RC" -le 1 ] || diag "$OUT" "$ERR"
like "$OUT" '--suite stream --sizes 1MiB --kernels read,triad --precision fp32,fp16,int8 --rounds 2 --reps 2' \
    "one gpumem run of every point in two rounds, fp32 added as the reference"
like "$OUT" '^kernel +fp32 GB/s +fp32 +fp16 +int8 *$' "the table's columns: fp32's GB/s, then a ratio per precision"
rows=$(printf '%s\n' "$OUT" | grep -cE '^(read|triad) +[0-9]+\.[0-9]{2} +1\.000  +[0-9]+\.[0-9]{3}[* ] +[0-9]+\.[0-9]{3}[* ]?$')
is "$rows" 2 "a row per kernel: fp32's GB/s, fp32 exactly 1.000, a ratio for fp16 and int8"
is "$(printf '%s\n' "$OUT" | grep -cE '^(read|triad) +[0-9]+\.[0-9]{2}-[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{2}-[0-9]+\.[0-9]{2}$')" 2 \
    "the spread table: min-max of the round ratios for fp16 and int8 per kernel"
like "$OUT" 'under 4x the [0-9]+MiB last-level cache' "1MiB arrays are called the cache's ratios"
marks=$(printf '%s\n' "$OUT" | grep -E '^(read|triad) ' | grep -c '\*')
is "$RC" "$([ "$marks" -gt 0 ] && echo 1 || echo 0)" "exit 1 exactly when a cell is marked below the goal ($marks marked)"
is "$(csv_count "$run/samples.csv" '$_->{metric} eq "bandwidth" && $_->{round} == 2')" 6 \
    "PREC_OUT keeps the run: round 2 holds a sample of each of the 6 points"

# The kept run judged again (PREC_RUN): a goal nothing misses, one everything misses.
prec PREC_RUN="$run" PREC_GOAL=0.001
is "$RC" 0 "PREC_RUN with a goal of 0.001 x fp32: exit 0"
like "$OUT" '^every precision at least 0.001 x fp32' "and says every cell meets it"
prec PREC_RUN="$run" PREC_GOAL=1000
is "$RC" 1 "a goal of 1000 x fp32: exit 1"
like "$OUT" '^4 of 4 cells below 1000 x fp32' "every cell but fp32's misses it (fp32 is the reference, not judged)"

# Bad settings: exit 2, one line on stderr, nothing run.
prec PREC_ROUNDS=0
is "$RC:$ERR" "2:precisions: PREC_ROUNDS must be a whole number from 1 (got '0')" "PREC_ROUNDS=0: exit 2, one message"
is "$OUT" "" "and nothing is run"
prec PREC_PRECISIONS=fp16,fp7
is "$RC" 2 "an unknown precision: exit 2"
is "$ERR" "precisions: PREC_PRECISIONS: unknown 'fp7' (any of: fp32 fp16 bf16 int8 fp8e4m3 fp8e5m2)" \
    "the message names it and the stream precisions (from gpumem bench --help: int4 is for weights only)"
prec PREC_GOAL=-1
like "$RC:$ERR" '^2:precisions: PREC_GOAL must be a number above 0' "PREC_GOAL=-1: exit 2"

# A point whose output is wrong fails the run loudly: its note, no table.
GPUMEM_FAULT=corrupt-output prec
is "$RC" 2 "wrong output: exit 2"
like "$ERR" '^precisions: read fp16: mismatch: partial sum [0-9]+: .*; CPU check: sum: expected .*\n(.*\n)*precisions: .*failed \(exit 1\): nothing is judged$' \
    "each failed point is printed with its note, then the failed run"
done_testing
