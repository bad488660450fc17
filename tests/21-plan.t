#!/bin/sh
# gpumem plan prints the memory model: one tensor a line and a last line
# `total <bytes>` that is the exact sum, per precision.
. tests/lib.sh
plan 8

run_gpumem plan --workload linear --batch 2 --seq 8 --hidden 16 --out-features 4 --precision fp32,int8
is "$RC" 0 "plan linear: exit status 0"
# fp32: x 16*16*4, w 16*4*4, y 16*4*4 = 1024 + 256 + 256
is "$(printf '%s\n' "$OUT" | grep '^total' | tr '\n' ' ')" "total 1536 total 384 " "exact totals for fp32 and int8"
sums=$(printf '%s\n' "$OUT" | awk '/^#/ { s = 0; next } /^total/ { print ($2 == s) ? "ok" : "bad"; next } { s += $3 }' | tr '\n' ' ')
is "$sums" "ok ok " "each total is the sum of its tensors"

for w in attention block kvcache; do
    run_gpumem plan --workload "$w" --model gpt-125m --batch 4 --seq 1024 --precision bf16
    like "$OUT" "total [0-9]+" "plan $w prints a total"
done
run_gpumem plan --workload attention --batch 1 --seq 4096 --heads 8 --hidden 512 --variant naive
naive=$(printf '%s\n' "$OUT" | awk '/^total/ { print $2 }')
run_gpumem plan --workload attention --batch 1 --seq 4096 --heads 8 --hidden 512 --variant tiled
tiled=$(printf '%s\n' "$OUT" | awk '/^total/ { print $2 }')
# naive holds the 4096 x 4096 fp32 score matrix per head (512MiB); tiled 2 floats a row.
is "$((naive - tiled))" "$((8 * 4096 * 4096 * 4 - 8 * 4096 * 2 * 4))" "naive attention holds seq^2 scores, tiled does not"
run_gpumem plan --workload linear --hidden 0
is "$RC" 2 "a bad shape value: exit status 2"
done_testing
