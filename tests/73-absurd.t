#!/bin/sh
# Absurd values are refused before anything runs: exit 2, one line on
# stderr naming the value, and no run folder made.
. tests/lib.sh
plan 38

# refused DESCRIPTION REGEX ARGS... : exit 2, one line matching REGEX, no folder
refused() {
    desc=$1 re=$2
    shift 2
    rm -rf "$TEST_TMP/run"
    run_gpumem bench --backend opencl --mem-limit 32MiB --out "$TEST_TMP/run" --quiet "$@"
    is "$RC" 2 "$desc: exit status 2"
    is "$(printf '%s\n' "$ERR" | grep -c .)" 1 "$desc: one line on stderr"
    like "$ERR" "$re" "$desc: the message"
    ok "$([ ! -e "$TEST_TMP/run" ]; echo $?)" "$desc: nothing attempted (no run folder)"
}

refused "a 10^18-point size sweep" "range '4096:1000000000000000000:\+4096' has too many points" \
    --suite stream --sizes 4096:1000000000000000000:+4096
refused "a 10^18-point batch sweep" "--batch: range '1:1000000000000000000:\+1' has too many points" \
    --suite workloads --batch 1:1000000000000000000:+1
refused "a negative size" "'-4MiB' is not a size" --suite stream --sizes -4MiB
refused "a size past 2^63 bytes" "'99999999999EiB' is too large" --suite stream --sizes 99999999999EiB
refused "a count past 2^64" "--reps '18446744073709551617'" --reps 18446744073709551617
refused "a negative batch" "--batch: '-1' is not a non-negative integer" --suite workloads --batch -1
refused "a shape whose memory overflows 64 bits" \
    "workload linear at batch 16777216, seq 1048576, hidden 1048576 \(fp32\) needs more than 2\^64 bytes: refused" \
    --suite workloads --workload linear --precision fp32 --batch 16777216 --seq 1048576 --hidden 1048576
refused "an absurd memory cap" "--mem-limit '1e30'" --mem-limit 1e30
list=$(awk 'BEGIN { for (i = 1; i <= 5000; i++) printf "%s%d", (i > 1 ? "," : ""), i * 4096 }')
refused "a 5000-value list" "has too many values \(at most 4096\)" --suite stream --sizes "$list"
run_gpumem bench --resume "$TEST_TMP/x" --reps 3
is "$RC" 2 "--resume with other options: exit status 2"
like "$ERR" "--resume RUN takes the run's own options .*'--reps' is not allowed with it" "--resume with other options: the message"
