#!/bin/sh
# Cards side by side: gpumem compare of runs of different devices leads
# with the card sheet (report/card_sheet.h: the report's figures of each
# run a column, then each run's ratio to BASE by suite and kernel family),
# the point-by-point table only with --points or in the written files;
# Markdown, HTML and overlay plots with a colour a card; gpumem fleet
# shows the same sheet for the devices of a node and judges each GPU
# among its own model only; bench ends with the report's three answers.
# A small PoCL run of every suite, made here under explicit caps, stands
# beside the reference runs of real cards.
. tests/lib.sh
plan 29

h100=results/reference/nvidia-h100-80gb-hbm3
h200=results/reference/nvidia-h200
cpu=results/reference/pocl-amd-epyc-2cores
# The largest stream array is one the stream suite counts as device
# memory on this CPU (tests/lib.sh), so that the sheet has that line.
dram=$(dram_array_mib 64)
cap=$((4 * dram > 512 ? 4 * dram : 512))
cat >"$TEST_TMP/cards.ini" <<EOF
[bench]
suite = stream,workloads,swap,oom
mem-limit = ${cap}MiB
precision = fp32
reps = 3
warmup = 1
; 4KiB: launched back to back however busy the machine, as the H100's
; short kernels were, so that every size is compared (compare.c, timed_alike)
sizes = 4KiB,4MiB,16MiB,${dram}MiB
kernels = read,copy
workload = linear
batch = 1
seq = 128
hidden = 512

[swap]
mem-limit = 256MiB
blocks = 4KiB,64KiB
kv-block-sizes = 64KiB
swap-batch = 1
unified-sizes = 16MiB
seq = 64
hidden = 128
heads = 2
layers = 2

[oom]
mem-limit = 64MiB
oom-parts = alloc,batch
hidden = 32
seq = 64,128
precision = bf16
EOF
run_gpumem bench --backend opencl --profile "$TEST_TMP/cards.ini" --out "$TEST_TMP/pocl"
is "$RC" 0 "a PoCL run of every suite under its caps"
p=$TEST_TMP/pocl
batch=$(csv_value "$p/results.csv" '$_->{metric} eq "max_batch" && $_->{seq_len} eq "128" && $_->{pattern} eq "per-tensor"' value)
like "$OUT" "^How much memory is usable\\? 64MiB \\(67108864 bytes\\) in total(.|\\n)*^How fast is it\\? device memory [0-9.]+ GB/s(.|\\n)*^Where do the models stop fitting\\? .*linear blocked bf16 per-tensor, seq 128: batch <= $batch \\(model: [0-9]+\\)" \
    "bench ends with the report's three answers, the largest batch as its CSV has it ($batch)"
run_gpumem bench --backend opencl --suite oom --oom-parts batch --mem-limit 64MiB --workload linear --hidden 32 \
    --seq 64 --precision bf16 --out "$TEST_TMP/oom"
one=$(csv_value "$TEST_TMP/oom/results.csv" '$_->{metric} eq "max_batch" && $_->{pattern} eq "per-tensor"' value)
like "$RC $OUT" "^0 (.|\\n)*^Where do the models stop fitting\\? linear blocked bf16 per-tensor, seq 64: batch <= $one " \
    "--suite oom --oom-parts batch prints its largest batch ($one), no plot needed"

# The sheet: H100 against the run here.
run_gpumem compare "$h100" "$p"
printf '%s\n' "$OUT" >"$TEST_TMP/sheet.txt"
note "$OUT"
like "$RC $OUT" "^0 gpumem compare: 2 runs, a column each, against BASE nvidia-h100-80gb-hbm3\\n +nvidia-h100-80gb-hbm3 +pocl\\n  device +NVIDIA H100 80GB HBM3 \\(cuda\\) +[^\\n]+\\(opencl\\)\\n" \
    "other devices: compare leads with the card sheet, a column a run"
like "$OUT" "^How much memory is usable\\?\\n  largest total +78.7GiB, 99.3% of 79.2GiB +64MiB, 100% of its 64MiB cap\\n  largest block +78.7GiB +64MiB\\n" \
    "usable memory: the largest total with its share (advertised, or the cap's), the largest block"
like "$OUT" "^  device memory \\(stream\\) +3098.9 GB/s, 92% of 3352 peak +[0-9.]+ GB/s\\n  cache \\(stream\\) +3745.4 GB/s +[0-9.]+ GB/s\\n  pinned h2d / d2h / bidir +53.9 / 53.2 / 79.8 GB/s \\(64MiB\\) +[0-9.]+ / [0-9.]+ / [0-9.]+ GB/s \\(64KiB\\)\\n" \
    "bandwidth: device memory with its share of the peak, cache, pinned transfers at the largest block"
like "$OUT" "^  vendor GEMM fp16, best point +362.8 TFLOP/s cublas +-\\n" "the vendor GEMM per precision, '-' where a run has none"
like "$OUT" "^  llama-3-8b bf16 inference +seq 512: 648, 2048: 162, 8192: 40 +-\\n(.|\\n)*^  llama-3-8b bf16 train +batch 1 does not fit \\(seq 512-8192\\) +-\\n(.|\\n)*^  linear blocked bf16 +- +seq 64: [0-9]+, 128: $batch\\n" \
    "the largest batch of each search by sequence length"
like "$OUT" "^Stress checks +- +-\\n" "stress verdicts, '-' where a run has none"
# The family rows: the geometric mean of each point's ratio, a time's
# inverted, as compare's CSV has them.
"$GPUMEM" compare "$h100" "$p" --format csv >"$TEST_TMP/cards.csv"
want=$(perl -e "$CSV_PERL"'
    my ($n, $s, $lo, $hi) = (0, 0, 1e300, 0);
    for (rows($ARGV[0])) {
        next unless $_->{suite} eq "stream" && $_->{workload} =~ /^(read|write)$/ && $_->{verdict} ne "left-out"
            && $_->{direction} ne "informational";
        my $r = $_->{direction} eq "higher-is-worse" ? 1 / $_->{ratio} : $_->{ratio};
        $n++; $s += log $r; $lo = $r if $r < $lo; $hi = $r if $r > $hi }
    printf "%.3gx [%.2g-%.2g] %d", exp($s / $n), $lo, $hi, $n if $n' "$TEST_TMP/cards.csv")
want_re=$(printf '%s' "$want" | perl -pe 's/([^\w ])/\\$1/g')
like "$OUT" "^Against nvidia-h100-80gb-hbm3: geometric mean of the ratios, above 1 better \\[range\\] points\\n(  [^\\n]*\\n)*  stream read-write +1 \\(BASE\\) +$want_re\\n" \
    "stream read-write: the geometric mean of the oriented ratios, its range and count ($want)"
like "$OUT" "^  workloads linear \\(our kernel\\) +1 \\(BASE\\) +[0-9.e-]+x " \
    "cards compare each device's own kernel: tiled on the H100 with blocked here"
like "$OUT" "^point by point: [0-9]+ points compared with pocl, [0-9]+ left out: --points, or compare.md of --out DIR\$" \
    "the point-by-point table only on request"
is "$(grep -c '^point  ' "$TEST_TMP/sheet.txt")" 0 "  and not printed"
if [ -d "$cpu" ]; then
    run_gpumem compare "$h100" "$cpu"
    note "$OUT"
    lines=$(printf '%s\n' "$OUT" | wc -l)
    ok $([ "$RC" = 0 ] && [ "$lines" -le 40 ]; echo $?) "the H100 against the PoCL reference: $lines lines (at most 40)"
else
    skip "no PoCL reference run in $cpu"
fi
run_gpumem compare "$h100" "$p" --points
like "$OUT" "^point +metric +unit +nvidia-h100-80gb-hbm3 +pocl +ratio" "--points: the point-by-point table after the sheet"
run_gpumem compare "$h100" "$h200" "$p" --format markdown
like "$RC $OUT" "^0 # gpumem compare\\n\\n3 runs, a column each(.|\\n)*^\\|  \\| nvidia-h100-80gb-hbm3 \\| nvidia-h200 \\| pocl \\|\\n\\| --- \\| --- \\| --- \\| --- \\|\\n(.|\\n)*^\\| \\*\\*How much memory is usable\\?\\*\\* \\| \\| \\| \\|\$" \
    "three runs side by side, as Markdown"
run_gpumem compare "$p" "$p"
like "$OUT" "^BASE pocl: " "runs of one device: the point-by-point report, no sheet"
run_gpumem compare "$p" "$p" --points
is "$RC:$ERR" "2:gpumem compare: --points follows a card sheet (runs of different devices, or --cards), and these runs are of one device: their table is point by point already" \
    "--points with runs of one device and no --cards: exit status 2, one line"
run_gpumem compare "$p" "$p" --cards
like "$OUT" "^  largest total +64MiB, 100% of its 64MiB cap +64MiB, 100% of its 64MiB cap\$" "--cards: the sheet for runs of one device too"

# Written files: the sheet in Markdown and HTML, overlay plots a colour a card.
if command -v gnuplot >/dev/null; then
    run_gpumem compare "$h100" "$h200" "$p" --out "$TEST_TMP/cmp"
    c=$TEST_TMP/cmp
    grep -q '^## Cards' "$c/compare.md" && grep -q '^## Results' "$c/compare.md"
    ok $? "compare.md: the card sheet, then the point-by-point results"
    is "$(grep -c '<table id="cards">' "$c/compare.html"):$(grep -o '<figure id="plot-[a-z_]*"' "$c/compare.html" | tr '\n' ' ')" \
        '1:<figure id="plot-bandwidth" <figure id="plot-throughput" <figure id="plot-oom_frontier" <figure id="plot-swap_latency" ' \
        "compare.html: the sheet and the overlays inline (bandwidth, throughput, OOM frontier, swap latency)"
    # Each solid block's title names its run; its colour number (the first
    # line of .colours) is the same for every block of a run, another for
    # every run.
    colours=$(awk 'FNR == NR { n = split($0, c, " "); next } /^"/ { split($0, t, ":"); i++; print substr(t[1], 2), c[i] }' \
        "$c/data/swap_latency.pinned.colours" "$c/data/swap_latency.pinned.dat" | sort -u)
    is "$(printf '%s\n' "$colours" | awk '{ print $1 }' | uniq -c | awk '{ print $1 }' | sort -u):$(printf '%s\n' "$colours" | awk '{ print $2 }' | sort -u | wc -l)" \
        "1:3" "overlays: one colour a card ($(printf '%s' "$colours" | tr '\n' ';'))"
    png=$(for k in bandwidth oom_frontier swap_latency; do head -c 8 "$c/$k.png" | od -An -tx1 | tr -d ' \n'; echo; done | sort -u)
    is "$png" 89504e470d0a1a0a "overlay plots drawn: bandwidth a panel per kernel family, OOM frontiers, swap latency"
else
    for i in 1 2 3 4; do skip "gnuplot not installed (Debian: gnuplot-nox)"; done
fi
printf 'x\n' >"$TEST_TMP/a-file"
run_gpumem compare "$h100" "$p" --out "$TEST_TMP/a-file/cmp"
like "$RC:$ERR" "^4:gpumem compare: --out: cannot create $TEST_TMP/a-file/cmp" "an unwritable --out: exit 4, naming it"

# gpumem fleet: the devices of a node side by side, each judged among its own model.
mkdir -p "$TEST_TMP/node" && cp -R "$h100" "$TEST_TMP/node/gpu-h100" && cp -R "$p" "$TEST_TMP/node/gpu-pocl"
run_gpumem fleet "$TEST_TMP/node"
like "$RC $OUT" "^0 fleet (.|\\n)*^ +gpu 1 +gpu 2\\n  device +NVIDIA H100 80GB HBM3 \\(cuda\\) +[^\\n]+\\(opencl\\)\\n(.|\\n)*^  largest total +78.7GiB, 99.3% of 79.2GiB +64MiB" \
    "fleet: the card sheet of the node's devices"
like "$OUT" "0 GPUs flagged(.|\\n)*^[0-9]+ points, GPU by GPU: --points, or fleet.md of --out DIR\$" \
    "fleet: two models, neither an outlier of the other; the per-point table on request"
run_gpumem fleet "$TEST_TMP/node" --points --out "$TEST_TMP/fleet"
like "$RC $OUT" "^0 (.|\\n)*^point +unit +better +median" "fleet --points: the per-point table"
grep -q '^## Cards' "$TEST_TMP/fleet/fleet.md" && grep -q '^## Points' "$TEST_TMP/fleet/fleet.md"
ok $? "fleet.md: the card sheet and every table"
run_gpumem fleet "$TEST_TMP/node" --out "$TEST_TMP/a-file/fleet"
like "$RC:$ERR" "(?s)^4:.*gpumem fleet: --out: cannot create $TEST_TMP/a-file/fleet" "fleet: an unwritable --out: exit 4"
done_testing
