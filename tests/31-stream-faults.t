#!/bin/sh
# Every stream output is checked whole: a fault struck at a seeded random
# element of any kernel's output (GPUMEM_FAULT=corrupt-output, or one
# flipped bit: flip-output-bit), at any size, is a mismatch row whose note
# names the struck element first (the device's whole-array check, or for
# read and dot the partial sum that differs from a second run), and no
# point is reported `ok`. Every kernel in every precision at 4KiB, 4100B
# (tails past the last whole vector), 64KiB, 1MiB and (one bit flipped)
# 16MiB; some kernels and precisions at 256MiB. Without a fault every point
# is ok, with its check's time.
. tests/lib.sh
plan 35

all=fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2
FAULT_REP= REPS=

# faulted KIND DIR SEED ARGS...: the stream run under the fault (of
# repetition FAULT_REP alone where set; REPS repetitions, default 1); sets RC,
# ERR, and in FIRSTS the first index each row's note names and in STRUCK
# the element each strike hit, one a line, in point order.
faulted() {
    kind=$1 dir=$2 seed=$3
    shift 3
    GPUMEM_FAULT=$kind GPUMEM_FAULT_SEED=$seed GPUMEM_FAULT_REP=$FAULT_REP run_gpumem bench --backend opencl \
        --suite stream --reps "${REPS:-1}" --warmup 0 --out "$dir" --quiet "$@"
    STRUCK=$(printf '%s\n' "$ERR" | sed -n "s/^gpumem: fault: $kind struck element \([0-9]*\) of .*/\1/p")
    FIRSTS=$(perl -MText::ParseWords -ne 'next if $. == 1; my @f = parse_line(",", 0, $_);
        print(($f[28] =~ /^(?:element|partial sum) (\d+):/ ? $1 : "none"), "\n")' "$dir/results.csv")
}

# check KIND DIR POINTS WHAT: the run's verdicts, four tests.
check() {
    is "$RC" 1 "$4, $1: the run exits 1"
    is "$(csv_count "$2/results.csv" '$_->{status} eq "mismatch" && $_->{value} eq ""')" "$3" \
        "$4, $1: all $3 points are mismatch rows, with no number"
    is "$(csv_count "$2/results.csv" '$_->{status} ne "mismatch"')" 0 "$4, $1: none is ok"
    is "$FIRSTS" "$STRUCK" "$4, $1: each row's first wrong element is the one struck ($(echo "$STRUCK" | wc -l) strikes)"
}

for kind in corrupt-output flip-output-bit; do
    faulted $kind "$TEST_TMP/small-$kind" 7 --mem-limit "$TEST_MEM_LIMIT" --precision $all \
        --sizes 4KiB,4100B,64KiB,1MiB
    check $kind "$TEST_TMP/small-$kind" 168 "4KiB, 4100B, 64KiB, 1MiB, every kernel and precision"
done
# The notes say how many elements were wrong and that the device found them.
is "$(csv_count "$TEST_TMP/small-corrupt-output/results.csv" \
    '$_->{note} =~ /; 1 of (\d+) (elements|partial sums) wrong \(checked whole on the device\)/')" 168 \
    "each note counts one wrong element (or partial sum) of the whole output"
# A flipped low bit is under the CPU's sum tolerance: read and dot's
# partials are compared with a second run's, which sees it.
is "$(csv_count "$TEST_TMP/small-flip-output-bit/results.csv" \
    '$_->{workload} =~ /^(read|dot)$/ && $_->{note} =~ /^partial sum \d+: .*, a second run /')" 48 \
    "flip-output-bit: every read and dot point names the partial sum that differs from a second run"

faulted flip-output-bit "$TEST_TMP/mid" 11 --mem-limit "$TEST_MEM_LIMIT" --precision $all --sizes 16MiB
check flip-output-bit "$TEST_TMP/mid" 42 "16MiB, every kernel and precision"

# 256MiB: in the plain pass (the host code is the 16MiB run's; the
# sanitizer pass would spend its time on the device's work).
if sanitizer_pass; then
    for i in $(seq 12); do skip "256MiB: the plain pass runs it"; done
else
    for kind in corrupt-output flip-output-bit; do
        faulted $kind "$TEST_TMP/big-$kind" 3 --mem-limit 1GiB --precision fp32 --kernels write,triad,dot \
            --sizes 256MiB
        check $kind "$TEST_TMP/big-$kind" 3 "256MiB, fp32 write triad dot"
    done
    faulted flip-output-bit "$TEST_TMP/big-bytes" 5 --mem-limit 1GiB --precision int8,fp8e5m2 --kernels copy,add,read \
        --sizes 256MiB
    check flip-output-bit "$TEST_TMP/big-bytes" 6 "256MiB, int8 fp8e5m2 copy add read"
fi

# Reps after the first are compared whole with the first's output: a fault
# in the second rep alone (GPUMEM_FAULT_REP=1) is a mismatch at the struck
# element too.
FAULT_REP=1 REPS=2
faulted flip-output-bit "$TEST_TMP/rep" 13 --mem-limit "$TEST_MEM_LIMIT" --precision $all --sizes 64KiB
FAULT_REP= REPS=
check flip-output-bit "$TEST_TMP/rep" 42 "the second rep alone, 64KiB, every kernel and precision"
is "$(csv_count "$TEST_TMP/rep/results.csv" \
    '$_->{note} =~ /; 1 of \d+ (elements|partial sums) differ from the first rep.s output \(checked whole on the device\)$/')" 42 \
    "each note says the second rep's output differs from the first's in one element (or partial sum)"

# Another seed strikes elsewhere: the element is drawn, not fixed.
faulted corrupt-output "$TEST_TMP/seed" 8 --mem-limit "$TEST_MEM_LIMIT" --precision fp32 --kernels copy \
    --sizes 1MiB
seven=$(perl -MText::ParseWords -ne 'my @f = parse_line(",", 0, $_);
    print "$1\n" if $f[6] eq "copy" && $f[9] eq "fp32" && $f[17] == 1048576 && $f[28] =~ /^element (\d+):/' \
    "$TEST_TMP/small-corrupt-output/results.csv")
[ -n "$seven" ] && [ "$STRUCK" != "$seven" ]
ok $? "seeds 7 and 8 strike different elements ($seven, $STRUCK)"

# Without a fault every point verifies, and each has its check's time.
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite stream --precision $all \
    --sizes 4KiB,4100B,1MiB --reps 1 --warmup 0 --out "$TEST_TMP/clean" --quiet
is "$RC" 0 "without a fault every point verifies"
is "$(csv_count "$TEST_TMP/clean/results.csv" '$_->{status} ne "ok"')" 0 "no row is anything but ok"
is "$(csv_count "$TEST_TMP/clean/results.csv" '$_->{metric} eq "verify_time" && $_->{unit} eq "ms" && $_->{value} > 0')" \
    126 "every point has a verify_time row (ms, > 0)"
done_testing
