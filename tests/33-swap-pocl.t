#!/bin/sh
# The swap suite on the OpenCL device: transfers in every direction from
# pageable, pinned and mapped host memory; KV-cache blocks swapped out and
# in by batches; unified memory faulting, resident, evicted and
# prefetched; a block run with its weights offloaded against resident.
# Sane latency percentiles and bandwidth everywhere; a
# corrupted payload is caught as a mismatch in every kind; the
# oversubscription sweep is refused without the opt-in; a point that
# cannot fit is skipped before anything is allocated.
. tests/lib.sh
plan 21

out=$TEST_TMP/run
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite swap --blocks 4KiB,1MiB,1000000 \
    --kv-block-sizes 64KiB --swap-batch 1,8 --unified-sizes 4MiB --reps 20 \
    --precision fp32 --batch 1 --seq 16 --hidden 32 --heads 2 --layers 3 --out "$out" --quiet
is "$RC" 0 "swap suite: exit status 0"
[ "$RC" = 0 ] || { diag "$ERR"; grep -v ",ok," "$out/results.csv" | head -5 | while read -r l; do diag "$l"; done; }
# 3 sizes x 3 paths x 3 directions, 5 rows each.
is "$(csv_count "$out/results.csv" '$_->{workload} eq "transfer" && $_->{status} eq "ok"')" 135 \
    "transfers: every point measured (135 rows)"
for path in pageable pinned mapped; do
    is "$(csv_count "$out/results.csv" "\$_->{workload} eq 'transfer' && \$_->{pattern} eq '$path' && \$_->{metric} eq 'bandwidth'")" 9 \
        "$path: 9 points"
done
# kv-blocks: out and in at N = 1 (5 rows) and N = 8 (7 rows: per-block latency too).
is "$(csv_count "$out/results.csv" '$_->{workload} eq "kv-blocks" && $_->{status} eq "ok"')" 24 \
    "kv-blocks: swap-out and swap-in at both batch sizes"
is "$(csv_count "$out/results.csv" '$_->{workload} eq "kv-blocks" && $_->{metric} eq "latency_per_block_p50" && $_->{batch} == 8 && $_->{value} > 0')" 2 \
    "kv-blocks: latency per block for batches of 8"
is "$(csv_count "$out/results.csv" '$_->{workload} eq "unified" && $_->{status} eq "ok" && $_->{metric} eq "latency_per_block_p50"')" 4 \
    "unified: fault, resident, evict and prefetch, with latency per page"
# Percentiles are ordered at every point: p50 <= p90 <= p99 <= max.
perl -e "$CSV_PERL"'
    my %p;
    for (rows($ARGV[0])) { next unless $_->{status} eq "ok";
        $p{"$_->{workload} $_->{variant} $_->{pattern} $_->{bytes} $_->{batch}"}{$_->{metric}} = $_->{value} }
    my $bad = 0;
    for my $m (values %p) {
        $bad++ unless $m->{latency_p50} > 0 && $m->{latency_p50} <= $m->{latency_p90}
                      && $m->{latency_p90} <= $m->{latency_p99} && $m->{latency_p99} <= $m->{latency_max} }
    exit($bad > 0 || keys %p != 27 + 4 + 4 + 3);
' "$out/results.csv"
ok $? "p50 <= p90 <= p99 <= max at all 38 points"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "bandwidth" && $_->{status} eq "ok" && !($_->{value} > 0 && $_->{value} < 2000)')" 0 \
    "bandwidth positive and below any host memory's"
is "$(csv_count "$out/results.csv" '$_->{workload} eq "offload" && $_->{metric} eq "latency_p50" && $_->{status} eq "ok"')" 3 \
    "offload: resident, offloaded and the copies alone, each iteration verified"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "offload_penalty" && $_->{value} > 0 && $_->{note} =~ /^medians: resident/')-$(csv_count "$out/results.csv" '$_->{metric} eq "overlap_hidden" && $_->{value} >= 0 && $_->{value} <= 1')" "1-1" \
    "the offload penalty and the share of copy time hidden"
run_gpumem bench --backend opencl --mem-limit 64MiB --suite swap --blocks 4KiB --kv-block-sizes 64KiB --swap-batch 2 \
    --unified-sizes 1MiB --layers 2 --hidden 32 --heads 2 --seq 16 --batch 1 --reps 1 --out "$TEST_TMP/two" --quiet
is "$(csv_count "$TEST_TMP/two/results.csv" '$_->{workload} eq "offload" && $_->{status} eq "skipped" && $_->{note} =~ /past two layers/')" 1 \
    "two layers: nothing to stream, said so"
is "$(csv_count "$out/results.csv" '$_->{variant} eq "oversubscribe" && $_->{status} eq "skipped" && $_->{note} =~ /^the oversubscription sweep needs --allow-oversubscribe/')" 1 \
    "the oversubscription sweep is refused without --allow-oversubscribe"

run_gpumem bench --backend opencl --mem-limit 32MiB --suite swap --blocks 4KiB --kv-block-sizes 64KiB \
    --swap-batch 2 --unified-sizes 1MiB --reps 1 --allow-oversubscribe --out "$TEST_TMP/over" --quiet
is "$(csv_count "$TEST_TMP/over/results.csv" '$_->{variant} =~ /^oversubscribe-(50|100)%$/ && $_->{metric} eq "bandwidth" && $_->{status} eq "ok"')-$(csv_count "$TEST_TMP/over/results.csv" '$_->{variant} eq "oversubscribe-150%" && $_->{status} eq "oom"')" "2-1" \
    "with it, 50% and 100% of the (capped) device run, 150% meets the cap"

# Points past the cap: skipped with the memory they need, not attempted.
run_gpumem bench --backend opencl --mem-limit 32MiB --suite swap --blocks 4KiB,64MiB --kv-block-sizes 16MiB \
    --swap-batch 2 --unified-sizes 64MiB --layers 2 --hidden 32 --heads 2 --seq 16 --batch 1 --reps 1 \
    --out "$TEST_TMP/fit" --quiet
is "$RC-$(csv_count "$TEST_TMP/fit/results.csv" '$_->{workload} eq "transfer" && $_->{bytes} == 67108864 && $_->{status} eq "skipped" && $_->{note} =~ /^needs (256|384)MiB of memory .* 32MiB free under the memory limit$/')-$(csv_count "$TEST_TMP/fit/results.csv" '$_->{workload} eq "transfer" && $_->{bytes} == 4096 && $_->{status} eq "ok" && $_->{metric} eq "bandwidth"')" "0-9-9" \
    "transfers too big for the cap: 9 skipped rows saying why; the 4KiB points still run"
is "$(csv_count "$TEST_TMP/fit/results.csv" '$_->{workload} eq "kv-blocks" && $_->{status} eq "skipped" && $_->{note} =~ /^needs 112MiB of memory/')" 1 \
    "a KV pool too big for the cap is skipped"
is "$(csv_count "$TEST_TMP/fit/results.csv" '$_->{workload} eq "unified" && $_->{variant} eq "fault" && $_->{status} eq "skipped" && $_->{note} =~ /needs --allow-oversubscribe$/')" 1 \
    "a managed working set past free memory is skipped without the opt-in"
run_gpumem bench --backend opencl --mem-limit 32MiB --suite swap --blocks 4KiB --kv-block-sizes 64KiB --swap-batch 2 \
    --unified-sizes 64MiB --layers 2 --hidden 32 --heads 2 --seq 16 --batch 1 --reps 1 --allow-oversubscribe \
    --out "$TEST_TMP/fit2" --quiet
is "$(csv_count "$TEST_TMP/fit2/results.csv" '$_->{workload} eq "unified" && $_->{variant} eq "fault" && $_->{status} eq "oom" && $_->{note} =~ /would exceed the memory limit/')" 1 \
    "with the opt-in the cap still holds on a CPU device"

GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite swap \
    --blocks 64KiB --kv-block-sizes 64KiB --swap-batch 4 --unified-sizes 1MiB --reps 1 --out "$TEST_TMP/fault" --quiet
is "$RC" 1 "a corrupted payload makes the run exit 1"
is "$(csv_count "$TEST_TMP/fault/results.csv" '$_->{status} eq "mismatch" && ($_->{note} =~ /payload of 65536 bytes failed its checksum/ || $_->{note} =~ /^block \d+ of 65536 bytes came back from swap with a different checksum$/ || $_->{note} =~ /^managed pages of a 1048576-byte working set changed/)')" 11 \
    "every transfer path and direction, the KV blocks and the managed pages catch it"
done_testing
