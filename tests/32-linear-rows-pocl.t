#!/bin/sh
# linear_blocked with at most 6 rows (m = batch * seq <= GM_RB: a decode
# step's tokens) takes its own path (kernels/linear.cl, linear_rows_body):
# spans of whole rows of W, 4 rows of W a pass, partial sums of the m real
# rows only. Every output is verified, on the shapes that reach each of its
# edges: m from 1 to 6 and 7 (the register blocks again); k not a multiple
# of the 4 rows a pass (the rows one at a time after them); n under one
# strip of 16, n with a partial last strip, and n wide enough that a span
# holds its most, 512 columns; weights in every precision (int4 and fp8
# dequantised on load); the layer's epilogues through the block workload.
. tests/lib.sh
plan 8

lin() { # NAME ARGS...: a verified linear sweep; sets OUTDIR
    name=$1
    shift
    OUTDIR=$TEST_TMP/$name
    run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload linear \
        --reps 2 --out "$OUTDIR" --quiet "$@"
    [ "$RC" = 0 ] || diag "$name: exit $RC: $ERR"
}
ours='$_->{variant} eq "blocked" && $_->{metric} eq "time"'

# m = 1..7 (batch x seq), k = 99 (24 passes of 4, 3 rows after), n = 1000
# (62 whole strips and 8 columns): every precision.
lin m --precision fp32,fp16,bf16,int8 --batch 1,2,3 --seq 1,2 --hidden 99 --out-features 1000
is "$(csv_count "$OUTDIR/results.csv" "$ours"' && $_->{status} eq "ok"')" 24 \
    "m 1, 2, 3, 4, 6 and 7 rows, k 99, n 1000: every point verified in fp32, fp16, bf16 and int8"
lin m5 --precision fp32,bf16 --batch 5 --seq 1 --hidden 99 --out-features 1000
is "$(csv_count "$OUTDIR/results.csv" "$ours"' && $_->{status} eq "ok"')" 2 "m 5: verified"

# n under one strip (no whole strip: every column by the tail), k under one pass.
lin narrow --precision fp32,int8 --batch 1,6 --seq 1 --hidden 3 --out-features 9
is "$(csv_count "$OUTDIR/results.csv" "$ours"' && $_->{status} eq "ok"')" 4 "n 9, k 3: verified"

# n past 8 spans of 512 columns on this 2-unit device: spans of 512, the last partial.
lin wide --precision fp32,bf16 --batch 1,4 --seq 1 --hidden 64 --out-features 5000
is "$(csv_count "$OUTDIR/results.csv" "$ours"' && $_->{status} eq "ok"')" 4 "n 5000: verified"

# Weights in another precision than the activations.
for wp in int4 fp8e4m3 fp8e5m2; do
    lin "w$wp" --precision bf16 --weight-precision $wp --batch 1,3 --seq 1 --hidden 128 --out-features 200
    is "$(csv_count "$OUTDIR/results.csv" "$ours"' && $_->{status} eq "ok"')" 2 "$wp weights, m 1 and 3: verified"
done

# A block of layers on 2 and 5 tokens: the QKV, output (residual) and MLP
# (GELU, residual) products of a layer all run with m <= 6; on 9 tokens
# they take the register blocks (two, the second's last 3 rows repeated),
# whose stores run a whole strip at a time through each epilogue, fp32
# reading X in place and bf16 through its converted copy.
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision fp32,bf16 --batch 1 --seq 2,5,9 --hidden 64 --heads 2 --layers 2 --reps 2 --out "$TEST_TMP/block" --quiet
is "$(csv_count "$TEST_TMP/block/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 6 \
    "block, 2, 5 and 9 tokens, fp32 and bf16: every layer's products verified"
done_testing
