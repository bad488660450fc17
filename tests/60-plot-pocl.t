#!/bin/sh
# gpumem plot renders a real run's CSV with every plot script (PNG and
# SVG); a kind with no rows is left out; a truncated or malformed CSV gets
# one message naming the file and line.
. tests/lib.sh
command -v gnuplot >/dev/null || skip_all "gnuplot not installed (Debian: gnuplot-nox)"
plan 24

run=$TEST_TMP/run
run_gpumem bench --backend opencl --mem-limit 32MiB --suite stream,workloads,swap,oom --sizes 1MiB,4MiB \
    --kernels copy,scale,triad --precision fp32 --workload linear --batch 1,2 --seq 16,32 --hidden 32 \
    --blocks 4KiB,64KiB --kv-block-sizes 64KiB --swap-batch 2 --unified-sizes 1MiB --reps 1 --out "$run" --quiet
is "$RC" 0 "a small run of every suite"
run_gpumem plot "$run"
is "$RC" 0 "plot: exit status 0"
for kind in bandwidth throughput oom_frontier swap_latency swap_bandwidth allocator fragmentation; do
    png=$(head -c 8 "$run/plots/$kind.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
    svg=$(grep -c '<svg' "$run/plots/$kind.svg" 2>/dev/null)
    dat=$(ls "$run/plots/data/$kind".*.dat 2>/dev/null | grep -v -e '\.dashed\.' -e '\.band\.' | head -1)
    [ "$png" = 89504e470d0a1a0a ] && [ "$svg" -ge 1 ] && [ -s "$dat" ]
    ok $? "$kind: a PNG and an SVG, from its data file"
done
# The frontier has the model's prediction, dashed, beside the measured batches.
is "$(grep -c '(model)' "$run/plots/data/oom_frontier.per-tensor.dashed.dat")" 2 "the frontier carries the model's line per search"

# Bandwidth: a panel per kernel family (copy with scale, add with triad),
# a line per precision; the access pattern named only where there are two.
is "$(ls "$run/plots/data" | grep -E '^bandwidth\.[a-z-]+\.dat$' | tr '\n' ' ')" \
    "bandwidth.add-triad.dat bandwidth.copy-scale.dat " "bandwidth: a panel per kernel family"
is "$(grep -h '^"' "$run/plots/data/bandwidth.copy-scale.dat" "$run/plots/data/bandwidth.copy-scale.dashed.dat" \
    "$run/plots/data/bandwidth.add-triad.dat" | tr '\n' ' ')" '"copy fp32" value "scale fp32" value "triad fp32" value ' \
    "a family's first kernel solid, its second dashed; a kernel alone in its panel solid"
# Sizes in binary units on the axes and in the legends, never raw bytes.
tics() { grep -o '>[0-9.]*[KMG]iB<' "$run/plots/$1.svg" | tr -d '<>' | sort -u | grep -c -x -E "$2"; }
is "$(tics bandwidth '1MiB|4MiB')-$(tics swap_latency '4KiB|64KiB')" "2-2" \
    "bandwidth and transfer plots label their axes 1MiB, 4MiB and 4KiB, 64KiB"
is "$(cat "$run/plots"/*.svg | grep -c -E '>[^<]*([0-9]{4,}B|[0-9]kiB)[^<]*<')" 0 "no SVG prints a size as raw bytes or kiB"
like "$(grep -h '^"' "$run/plots/data/allocator.all.dat" | head -1)" '^"[a-z-]+ [0-9.]+[KMG]iB" value$' \
    "the allocator's legend names block sizes in binary units"

# Swap latency: a panel per host memory kind, the p50-p99 band filled.
is "$(ls "$run/plots/data" | grep -E '^swap_latency\.[a-z]+\.dat$' | sort | tr '\n' ' ')" \
    "swap_latency.mapped.dat swap_latency.pageable.dat swap_latency.pinned.dat " "swap latency: a panel per host memory kind"
is "$(perl -ne '$n++ if /^\S+ (\S+) (\S+)$/ && $2 >= $1; END { print $n+0 }' "$run/plots/data/swap_latency.pinned.band.dat")" 6 \
    "each direction's band runs from p50 up to p99 at both block sizes"

# plots/ holds what a user opens, the charts; gnuplot's inputs and logs
# are in plots/data/.
is "$(ls "$run/plots" | grep -v -x -E '[a-z_]+\.(png|svg)|data' | tr '\n' ' ')" "" \
    "plots/ holds the PNG and SVG charts and the data/ folder, nothing else"
is "$(ls "$run/plots/data" | grep -c -E '\.(png|svg)\.log$')-$(ls "$run/plots/data" | grep -c -E '\.(colours|off)$')" \
    "$(ls "$run/plots" | grep -c -E '\.(png|svg)$')-$(($(ls "$run/plots/data" | grep -c -E '\.colours$') * 2))" \
    "plots/data/ holds gnuplot's log of every chart and each panel's colours and off-axis names"

# report.md: the headline table and every plot it links, present.
report=$(cat "$run/report.md" 2>/dev/null)
like "$report" "^## Headline numbers\n\n\| measure \| value \|" "report.md has the headline table"
like "$report" "^\| largest batch: linear blocked fp32 per-tensor, seq 16 \| batch <= [0-9]+ \(model: [0-9]+\) \|$" \
    "with the largest batch beside the model's, per search"
missing=0
for img in $(printf '%s\n' "$report" | sed -n 's/^!\[[a-z_]*\](\(.*\))$/\1/p'); do [ -s "$run/$img" ] || missing=$((missing + 1)); done
is "$(printf '%s\n' "$report" | grep -c '^!\[')-$missing" "8-0" "and links the eight plots (memory over time too), all present"

run_gpumem bench --backend opencl --mem-limit 32MiB --suite stream --sizes 1MiB --kernels copy --precision fp32 \
    --reps 1 --out "$TEST_TMP/stream" --quiet
run_gpumem plot "$TEST_TMP/stream"
is "$(ls "$TEST_TMP/stream/plots" | grep '\.png$' | tr '\n' ' ')" "bandwidth.png memory.png " \
    "a stream-only run gets the bandwidth plot and its memory over time alone"

head -c 300 "$run/results.csv" >"$TEST_TMP/cut.csv"
mkdir -p "$TEST_TMP/cut" && mv "$TEST_TMP/cut.csv" "$TEST_TMP/cut/results.csv"
run_gpumem plot "$TEST_TMP/cut"
like "$RC $ERR" "^2 gpumem plot: .*/cut/results.csv:2: (truncated line|malformed row)" \
    "a truncated CSV: exit 2, naming the file and line"
done_testing
