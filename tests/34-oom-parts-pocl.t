#!/bin/sh
# --oom-parts picks what the oom suite measures (alloc, fragmentation,
# allocator, batch): only those rows are written, and a bad list gets one
# message and exit 2. A model that does not fit at all (a batch of 0, which
# no logarithmic axis can draw) leaves `gpumem plot` whole: the frontier
# names it in the legend beside the series that fit, a panel with nothing
# else says so in its middle, a line that stops names where, and the
# report says "does not fit", first. A line keeps the colour of its
# model's dashed line whichever lines are drawn.
. tests/lib.sh
plan 19

# metrics RUN: the distinct workload/metric pairs of a run's ok rows.
metrics() {
    perl -e "$CSV_PERL"'print "$_->{workload}/$_->{metric}\n" for grep { $_->{status} eq "ok" } rows($ARGV[0])' \
        "$1/results.csv" | sort -u | tr '\n' ' '
}

batch=$TEST_TMP/batch
run_gpumem bench --backend opencl --suite oom --oom-parts batch --mem-limit 16MiB --workload linear,block \
    --model stories15m --precision bf16 --seq 64,128 --pattern per-tensor --out "$batch" --quiet
is "$RC" 0 "--oom-parts batch: exit status 0"
[ -n "$ERR" ] && diag "$ERR"
is "$(metrics "$batch")" \
    "block/device_fraction block/max_batch block/max_batch_halving block/max_batch_model block/probes block/search_time linear/device_fraction linear/max_batch linear/max_batch_halving linear/max_batch_model linear/probes linear/search_time " \
    "only the searches' rows: no allocation, fragmentation or latency rows"
is "$(csv_count "$batch/results.csv" '$_->{metric} eq "max_batch" && $_->{workload} eq "block" && $_->{value} == 0')" 2 \
    "stories15m (29MiB of bf16 weights) in 16MiB: batch 0 at both lengths"
is "$(csv_count "$batch/results.csv" '$_->{metric} eq "max_batch" && $_->{workload} eq "linear" && $_->{value} > 0')" 2 \
    "a layer of its width (288) fits at both lengths"

alloc=$TEST_TMP/alloc
run_gpumem bench --backend opencl --suite oom --oom-parts alloc,fragmentation --mem-limit 8MiB --out "$alloc" --quiet
is "$RC-$(metrics "$alloc")" "0-alloc/fragmentation alloc/largest_alloc alloc/largest_free_block alloc/largest_total " \
    "--oom-parts alloc,fragmentation: the largest allocation and total and the fragmentation rows alone"

run_gpumem bench --backend opencl --suite oom --oom-parts alloc,latency --mem-limit 8MiB --out "$TEST_TMP/bad" --quiet
is "$RC" 2 "an unknown part: exit status 2"
is "$ERR" "gpumem bench: --oom-parts: unknown value 'latency' (allowed: alloc,fragmentation,allocator,batch)" \
    "one message naming the value and the allowed ones"
[ ! -e "$TEST_TMP/bad/results.csv" ]
ok $? "and no run folder's results"

# The plot and the report of a run where one model does not fit.
run_gpumem plot "$batch"
is "$RC" 0 "plot: exit status 0 with a series of batch 0"
is "$(cat "$batch/plots/data/oom_frontier.per-tensor.off")" '"stories15m bf16 inference" ' \
    "the frontier names the series no axis can draw"
is "$(grep -c '^"' "$batch/plots/data/oom_frontier.per-tensor.dat")-$(grep -c '^"stories15m' "$batch/plots/data/oom_frontier.per-tensor.dat")" \
    "1-0" "and draws the layer that fits alone"
grep -q 'stories15m bf16 inference: not even batch 1 fits' "$batch/plots/oom_frontier.svg"
ok $? "the legend says the model does not fit"
like "$(cat "$batch/report.md")" \
    '^\| largest batch: stories15m bf16 inference per-tensor, seq 128 \| does not fit: batch 1 fails \(model: 0\) \|$' \
    "the report says it does not fit, beside the model's answer"

# Colours follow the series, not the blocks of a file: with the layer's
# measured line off the axis (its batches set to 0 in a copy of the run)
# and the memory model's answers for stories15m drawn (set to 5; its
# measured batch too at seq 64, still 0 at 128), the measured stories15m
# line and its model's share a colour, the layer's model keeps its own; the
# stories15m line's title says where it has no point.
edited=$TEST_TMP/edited
mkdir -p "$edited" && cp "$batch/meta.json" "$edited/" &&
    perl -e "$CSV_PERL"'
        my @rows = rows($ARGV[0]); my @cols = parse(`head -1 $ARGV[0]` =~ s/\r?\n$//r);
        print join(",", @cols), "\n";
        for my $r (@rows) {
            $r->{value} = 0 if $r->{workload} eq "linear" && $r->{metric} eq "max_batch";
            $r->{value} = 5 if $r->{workload} eq "block"
                && ($r->{metric} eq "max_batch_model" || $r->{metric} eq "max_batch" && $r->{seq_len} == 64);
            print join(",", map { my $v = $r->{$_}; $v =~ /[",\n]/ ? "\"" . ($v =~ s/"/""/gr) . "\"" : $v } @cols), "\n";
        }' "$batch/results.csv" >"$edited/results.csv"
is "$(csv_count "$edited/results.csv" '$_->{metric} =~ /^max_batch(_model)?$/ && $_->{value} ==
    ($_->{workload} ne "block" || $_->{metric} eq "max_batch" && $_->{seq_len} == 128 ? 0 : 5)')" 6 \
    "the edited copy: stories15m's model answers and batch at seq 64 5, at 128 0, the layer's measured batches 0"
run_gpumem plot "$edited"
is "$RC:$(cat "$edited/plots/data/oom_frontier.per-tensor.colours" | tr '\n' '|')" "0:1 |0 1 ||" \
    "the measured stories15m line takes the colour number of its model's (1), not the first (0)"
# stroke TITLE: the colour the SVG draws the line of that legend title in.
stroke() {
    perl -0777 -ne 'print $1 if /<title>\Q$ENV{T}\E<\/title>.*?<path stroke=.(rgb\([^)]*\))/s' \
        "$edited/plots/oom_frontier.svg"
}
measured=$(T="stories15m bf16 inference (0 at 128)" stroke)
modelled=$(T="stories15m bf16 inference (model)" stroke)
layer=$(T="linear blocked bf16 (model)" stroke)
ok $([ -n "$measured" ] && [ "$measured" = "$modelled" ] && [ "$measured" != "$layer" ]; echo $?) \
    "and the SVG draws the two in one colour ($measured, $modelled), the layer's model in another ($layer)"
is "$(grep -h '^"stories15m' "$edited/plots/data/oom_frontier.per-tensor.dat")" '"stories15m bf16 inference (0 at 128)" value' \
    "the measured stories15m line's title names the length where it has no point"

# The report's answer puts the searches that fit nothing first.
like "$(cat "$batch/report.md")" \
    '^\*\*Where do the models stop fitting\?\*\* stories15m bf16 inference per-tensor, seq 128: does not fit: batch 1 fails \(model: 0\); linear blocked bf16 per-tensor, seq 128: batch <= [1-9][0-9]* \(model: [1-9][0-9]*\)$' \
    "the report's answer names the model that fits nothing before the layer that fits"

# A frontier with nothing to draw: an empty frame that names what is missing.
only=$TEST_TMP/only
run_gpumem bench --backend opencl --suite oom --oom-parts batch --mem-limit 64MiB --workload block \
    --model llama-3-8b --precision bf16 --seq 64 --pattern per-tensor --out "$only" --quiet
run_gpumem plot "$only"
is "$RC-$(grep -c 'not even batch 1 fits' "$only/plots/oom_frontier.svg")" "0-1" \
    "a frontier with no batch that fits renders, saying so once"
