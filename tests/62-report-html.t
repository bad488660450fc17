#!/bin/sh
# report.md and report.html: the device's facts, the headline table with
# the stress verdicts of the stress run beside it, every plot; the HTML is
# self-contained and opens in a real headless browser with every image
# loaded. The memory trace (memory.csv) gives the memory-over-time plot.
. tests/lib.sh
plain_pass_only "the report's rendering is Chromium's"
command -v gnuplot >/dev/null || skip_all "gnuplot not installed (Debian: gnuplot-nox)"
browser=$(command -v chromium || command -v chromium-browser)
plan 33

run=$TEST_TMP/run
run_gpumem bench --backend opencl --mem-limit 32MiB --suite stream,swap,oom --sizes 1MiB --kernels copy \
    --precision fp32 --workload linear --seq 16 --hidden 32 --blocks 4KiB,64KiB --kv-block-sizes 64KiB \
    --swap-batch 2 --unified-sizes 1MiB --reps 1 --out "$run" --quiet
is "$RC" 0 "a small run"
run_gpumem stress --backend opencl --checks memtest,churn --duration 1 --mem-limit 64MiB --out "$run/stress"
is "$RC" 0 "its stress checks, into run/stress"

# memory.csv: the main process and the oom suite's workers, each suite a phase.
phases=$(tail -n +2 "$run/memory.csv" | cut -d, -f3 | sort -u | tr '\n' ' ')
is "$phases" "oom stream swap " "memory.csv traces every suite that held memory"
like "$(tail -n +2 "$run/memory.csv" | cut -d, -f2 | sort -u | tr '\n' ' ')" "^main worker-1 " \
    "from the main process and the probe workers"

run_gpumem plot "$run"
is "$RC" 0 "plot: exit status 0"
is "$(head -c 4 "$run/plots/memory.png" | od -An -c | tr -d ' ')" "211PNG" "the memory-over-time plot is drawn"
[ "$(grep -c ">run's cap 32MiB<" "$run/plots/memory.svg")" -ge 1 ]
ok $? "with the run's cap drawn and named in the key"

md=$(cat "$run/report.md")
like "$md" "^\| memory \| [0-9.]+[KMGT]?i?B \|$" "report.md: the device's facts from meta.json"
like "$md" "^\| stress: memtest \| ok \|\n\| stress: churn \| ok \|$" "report.md: the stress verdicts"
like "$md" "^\| transfer latency, pinned host to device, 4KiB: p50 / p99 \| [0-9.]+ µs / [0-9.]+ µs \|$" \
    "report.md: transfer latency at 4KiB, p50 and p99"

# The report opens with the three answers, before the device's facts.
like "$md" "^\*\*How much memory is usable\?\*\* 32MiB \(33554432 bytes\) in total: 100.0% of the oom suite's 32MiB cap, [0-9.]+% of the [0-9.]+[MGT]iB the device advertises; largest single block 32MiB\. The cap is the run's, not the device's: a CPU device's memory is the host's own, so the search stops there to keep the host out of its OOM killer \(--mem-limit sets it\)\.\n\n\*\*How fast is it\?\*\* device memory not measured [^\n]*; cache [0-9.]+ GB/s; host<->device \(pinned, 64KiB blocks\) h2d [0-9.]+ GB/s, d2h [0-9.]+ GB/s, bidir [0-9.]+ GB/s\n\n\*\*Where do the models stop fitting\?\*\* Under the oom suite's 32MiB cap: linear [a-z]+ fp32 per-tensor, seq 16: batch <= [0-9]+ \(model: [0-9]+\)" \
    "report.md opens with the three answers"
like "$md" "^\| usable memory: largest total \| 32MiB \(33554432 bytes\): 100.0% of the oom suite's 32MiB cap, [0-9.]+% of the [0-9.]+[MGT]iB the device advertises \|$" \
    "usable memory as bytes and as a share of the cap and of what the device advertises"

# The headline bandwidth comes from arrays of at least 4x the last-level
# cache: the default sizes (by device, the quick profile's) reach there
# under a cap of 48x the cache (three arrays in a quarter of it).
llc=$(perl -ne 'print $1 if /"llc_bytes": *(\d+)/' "$run/meta.json")
big=$TEST_TMP/big
if [ "${llc:-0}" -gt 0 ] && [ "$llc" -le $((64 * 1048576)) ]; then
    run_gpumem bench --backend opencl --profile quick --suite stream --kernels copy --precision fp32 --reps 2 \
        --mem-limit $((48 * llc)) --out "$big"
    like "$OUT" "^stream: device-memory GB/s \(best median over arrays >= [0-9.]+[MG]iB, 4x the [0-9.]+[MG]iB last-level cache\)" \
        "bench's summary quotes device-memory bandwidth from arrays of 4x the cache"
    run_gpumem plot "$big"
    row=$(grep '^| device-memory bandwidth' "$big/report.md")
    size=$(printf '%s' "$row" | sed -n 's/.*(copy fp32, \([0-9.]*[KMG]iB\) arrays.*/\1/p')
    bytes=$(printf '%s' "$size" | perl -ne '/^([0-9.]+)([KMG])iB$/ and print $1 * {K => 1024, M => 1048576, G => 1073741824}->{$2}')
    gbs=$(printf '%s' "$row" | sed -n 's/^| [^|]* | \([0-9.]*\) GB\/s.*/\1/p')
    ok "$([ "${bytes:-0}" -ge $((4 * llc)) ]; echo $?)" "the headline's arrays ($size) are at least 4x the $((llc / 1048576))MiB cache"
    is "$(csv_count "$big/results.csv" "\$_->{suite} eq 'stream' && \$_->{metric} eq 'bandwidth' && \$_->{bytes} == ${bytes:-0} && sprintf('%.1f', \$_->{value}) eq '$gbs'")" 1 \
        "and quote the row of that size in results.csv ($gbs GB/s)"
    like "$(cat "$big/report.md")" "^\| cache bandwidth \(stream, arrays below the last-level cache\) \| [0-9.]+ GB/s \(copy fp32, [0-9]+MiB arrays\) \|$" \
        "cache bandwidth on a line of its own"
    # Where meta.json has the memory clock and bus width (CUDA), the share
    # of the theoretical peak (H100 SXM's: 2 x 2619 MHz x 5120 bits / 8).
    cp -r "$big" "$TEST_TMP/peak" && rm -f "$TEST_TMP/peak/report.md"
    perl -pi -e 's/"mem_clock_mhz": *0/"mem_clock_mhz": 2619/; s/"mem_bus_bits": *0/"mem_bus_bits": 5120/' "$TEST_TMP/peak/meta.json"
    run_gpumem plot "$TEST_TMP/peak"
    like "$(cat "$TEST_TMP/peak/report.md")" \
        "^\| device-memory bandwidth [^|]+ \| [0-9.]+ GB/s \([^)]*\); [0-9]+% of the theoretical peak 3352 GB/s \(2 x 2619 MHz x 5120 bits / 8\) \|$" \
        "with the memory clock and bus width, a share of the theoretical peak"
else
    for i in 1 2 3 4 5; do skip "last-level cache of ${llc:-unknown} bytes: arrays of 4x it are too large for this test"; done
fi

# A whole model's searches, inference and training, one line each: "<model>
# <precision> <mode> <pattern>, seq S: batch <= B (model: B*)".
whole=$TEST_TMP/whole
run_gpumem bench --backend opencl --mem-limit 64MiB --suite oom --workload block --model tiny-llama-gqa \
    --mode inference,train --precision bf16 --seq 16,32 --pattern per-tensor --out "$whole" --quiet
run_gpumem plot "$whole"
wmd=$(cat "$whole/report.md")
for m in inference train; do
    like "$wmd" "^\| largest batch: tiny-llama-gqa bf16 $m per-tensor, seq 32 \| batch <= [1-9][0-9]* \(model: [1-9][0-9]*\) \|$" \
        "report.md: the $m search of the whole model, by its name, precision and mode"
done
like "$wmd" "^\*\*Where do the models stop fitting\?\*\* Under the oom suite's 64MiB cap: tiny-llama-gqa bf16 inference per-tensor, seq 32: batch <= [0-9]+ \(model: [0-9]+\); tiny-llama-gqa bf16 train per-tensor, seq 32: batch <= [0-9]+ \(model: [0-9]+\)$" \
    "and the answer names both at the longest sequence"
is "$(grep -c -e '"tiny-llama-gqa bf16 inference" ' -e '"tiny-llama-gqa bf16 train" ' "$whole/plots/data/oom_frontier.per-tensor.dat")" 2 \
    "the frontier draws a curve per mode, named by the model"

# A run of two devices (two PoCL CPU devices): one report, a column each.
multi=$TEST_TMP/multi
POCL_DEVICES="pthread pthread" run_gpumem bench --backend opencl --device all --mem-limit 32MiB --suite stream \
    --sizes 1MiB --kernels copy --precision fp32 --reps 2 --out "$multi" --quiet
run_gpumem plot "$multi"
is "$RC" 0 "a two-device run: plot exit status 0"
like "$(cat "$multi/report.md")" \
    "^\| cache bandwidth \(stream, arrays below the last-level cache\) \| [0-9.]+ GB/s [^|]+ \| [0-9.]+ GB/s [^|]+ \|$" \
    "its report.md has a column per device"
like "$(cat "$multi/report.md")" "^\| How fast is it\? \| device memory not measured [^|]+; cache [0-9.]+ GB/s \| device memory not measured [^|]+; cache [0-9.]+ GB/s \|$" \
    "and opens with the answers, a column per device"
like "$(cat "$multi/report.md")" "^\| identity \| (opencl:[0-9a-f]+:0) \| (opencl:[0-9a-f]+:1) \|$" \
    "each column names its device's identity"

html=$run/report.html
nplots=$(ls "$run/plots" | grep -c '\.svg$')
refs=$(grep -o -E '(src|href)="[^"d][^"]*"' "$html" | head -3)
is "$refs" "" "report.html refers to no other file"
# The run's verification time: its verify_time rows summed (each value
# times its repetitions) against its wall time, one headline row.
secs=$(perl -e "$CSV_PERL"'my $s = 0; for (rows($ARGV[0])) { $s += $_->{value} * $_->{reps} if $_->{metric} eq "verify_time" }
    printf "%.1f", $s / 1000' "$run/results.csv")
want=$(printf '%s' "$secs" | sed 's/\./\\./')
like "$(cat "$run/report.md")" \
    "^\| verification time \| $want s of (the run's [0-9]+ s wall time \([0-9.]+%; |a run that took under a second \()the verify_time rows summed" \
    "report.md: the verification time ($secs s, the verify_time rows summed) against the run's wall time"
like "$(cat "$html")" "<tr><td>verification time</td><td>$want s of (the run's [0-9]+ s wall time|a run that took under a second)" \
    "report.html: the same line"
if [ -z "$browser" ]; then
    for i in 1 2 3 4 5; do skip "no chromium (Debian: chromium)"; done
    done_testing
fi
# As root the browser needs --no-sandbox; its profile goes to the test folder.
dom=$(HOME=$TEST_TMP timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --user-data-dir="$TEST_TMP/chromium" --virtual-time-budget=10000 --dump-dom "file://$html" 2>"$TEST_TMP/chromium.log")
is "$(printf '%s' "$dom" | sed -n 's/.*data-images="\([^"]*\)".*/\1/p' | head -1)" "$nplots loaded, 0 broken" \
    "headless Chromium loads every one of the $nplots plots"
is "$(printf '%s' "$dom" | grep -c '<table id="headline">')" 1 "and finds the headline table"
like "$dom" '<dl id="answers">\s*<dt>How much memory is usable\?</dt><dd>32MiB \(33554432 bytes\) in total' "which the three answers precede"
like "$dom" "<td>stress: churn</td><td>ok</td>" "with the stress verdicts in it"
mdom=$(HOME=$TEST_TMP timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --user-data-dir="$TEST_TMP/chromium" --virtual-time-budget=10000 --dump-dom "file://$multi/report.html" 2>>"$TEST_TMP/chromium.log")
nmulti=$(ls "$multi"/device*/plots/*.svg | wc -l)
is "$(printf '%s' "$mdom" | sed -n 's/.*data-images="\([^"]*\)".*/\1/p' | head -1)" "$nmulti loaded, 0 broken" \
    "the two-device report.html loads all $nmulti plots of both devices"
done_testing
