#!/bin/sh
# report.md and report.html: the device's facts, the headline table with
# the stress verdicts of the stress run beside it, every plot; the HTML is
# self-contained and opens in a real headless browser with every image
# loaded. The memory trace (memory.csv) gives the memory-over-time plot.
. tests/lib.sh
command -v gnuplot >/dev/null || skip_all "gnuplot not installed (Debian: gnuplot-nox)"
browser=$(command -v chromium || command -v chromium-browser)
plan 17

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

md=$(cat "$run/report.md")
like "$md" "^\| memory \| [0-9.]+[KMGT]?i?B \|$" "report.md: the device's facts from meta.json"
like "$md" "^\| stress: memtest \| ok \|\n\| stress: churn \| ok \|$" "report.md: the stress verdicts"
like "$md" "^\| transfer latency, pinned host to device, 4KiB: p50 / p99 \| [0-9.]+ µs / [0-9.]+ µs \|$" \
    "report.md: transfer latency at 4KiB, p50 and p99"

# A run of two devices (two PoCL CPU devices): one report, a column each.
multi=$TEST_TMP/multi
POCL_DEVICES="pthread pthread" run_gpumem bench --backend opencl --device all --mem-limit 32MiB --suite stream \
    --sizes 1MiB --kernels copy --precision fp32 --reps 2 --out "$multi" --quiet
run_gpumem plot "$multi"
is "$RC" 0 "a two-device run: plot exit status 0"
like "$(cat "$multi/report.md")" "^\| peak bandwidth \(stream\) \| [0-9.]+ GB/s [^|]+ \| [0-9.]+ GB/s [^|]+ \|$" \
    "its report.md has a column per device"
like "$(cat "$multi/report.md")" "^\| identity \| (opencl:[0-9a-f]+:0) \| (opencl:[0-9a-f]+:1) \|$" \
    "each column names its device's identity"

html=$run/report.html
nplots=$(ls "$run/plots" | grep -c '\.svg$')
refs=$(grep -o -E '(src|href)="[^"d][^"]*"' "$html" | head -3)
is "$refs" "" "report.html refers to no other file"
if [ -z "$browser" ]; then
    for i in 1 2 3 4; do skip "no chromium (Debian: chromium)"; done
    done_testing
fi
# As root the browser needs --no-sandbox; its profile goes to the test folder.
dom=$(HOME=$TEST_TMP timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --user-data-dir="$TEST_TMP/chromium" --virtual-time-budget=10000 --dump-dom "file://$html" 2>"$TEST_TMP/chromium.log")
is "$(printf '%s' "$dom" | sed -n 's/.*data-images="\([^"]*\)".*/\1/p' | head -1)" "$nplots loaded, 0 broken" \
    "headless Chromium loads every one of the $nplots plots"
is "$(printf '%s' "$dom" | grep -c '<table id="headline">')" 1 "and finds the headline table"
like "$dom" "<td>stress: churn</td><td>ok</td>" "with the stress verdicts in it"
mdom=$(HOME=$TEST_TMP timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --user-data-dir="$TEST_TMP/chromium" --virtual-time-budget=10000 --dump-dom "file://$multi/report.html" 2>>"$TEST_TMP/chromium.log")
nmulti=$(ls "$multi"/device*/plots/*.svg | wc -l)
is "$(printf '%s' "$mdom" | sed -n 's/.*data-images="\([^"]*\)".*/\1/p' | head -1)" "$nmulti loaded, 0 broken" \
    "the two-device report.html loads all $nmulti plots of both devices"
done_testing
