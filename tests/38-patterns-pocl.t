#!/bin/sh
# Allocation patterns on the OpenCL device: every workload verifies under
# every pattern the device offers (async-pool is CUDA's: unsupported here);
# managed memory past free memory is refused without --allow-oversubscribe;
# --on-oom shrink degrades the batch and says so; the oom suite measures
# fragmentation and allocator latency.
. tests/lib.sh
plan 15

patterns=per-tensor,monolithic,fragmented,pool,async-pool,managed,growth,prealloc
run_gpumem bench --backend opencl --mem-limit 64MiB --suite workloads --workload linear,attention,block,kvcache \
    --pattern $patterns --precision bf16 --batch 2 --seq 19 --hidden 32 --heads 2 --layers 2 --block-tokens 8 \
    --reps 1 --out "$TEST_TMP/all" --quiet
is "$RC" 0 "every workload under every pattern: exit status 0"
# linear 1 (blocked; no BLAS in bf16), attention 2, block 1, kvcache 2: six implementations.
verified=""
for p in per-tensor monolithic fragmented pool managed growth prealloc; do
    n=$(csv_count "$TEST_TMP/all/results.csv" "\$_->{metric} eq 'time' && \$_->{status} eq 'ok' && \$_->{pattern} eq '$p'")
    [ "$n" = 6 ] || diag "$p: $n verified points"
    verified="$verified $p=$n"
done
is "$verified" " per-tensor=6 monolithic=6 fragmented=6 pool=6 managed=6 growth=6 prealloc=6" \
    "each of seven patterns verifies all six implementations"
is "$(csv_count "$TEST_TMP/all/results.csv" '$_->{pattern} eq "async-pool" && $_->{status} eq "unsupported" && $_->{note} eq "OpenCL has no stream-ordered allocator"')" 6 \
    "async-pool is unsupported on OpenCL, said per point"
is "$(csv_count "$TEST_TMP/all/results.csv" '$_->{status} eq "ok" && $_->{metric} eq "time" && $_->{model_bytes} > 0')" 42 \
    "every verified point carries its model bytes"

# Managed memory is not asked for beyond free memory without the opt-in;
# with it the point is tried, and here the cap refuses it.
run_gpumem bench --backend opencl --mem-limit 8MiB --suite workloads --workload linear --pattern managed \
    --precision fp32 --batch 256 --seq 64 --hidden 128 --reps 1 --out "$TEST_TMP/over" --quiet
like "$(csv_value "$TEST_TMP/over/results.csv" '$_->{variant} eq "blocked"' note)" \
    "^managed memory past free memory needs --allow-oversubscribe: the model needs 16.1MiB" \
    "managed: skipped past free memory without --allow-oversubscribe"
run_gpumem bench --backend opencl --mem-limit 8MiB --suite workloads --workload linear --pattern managed \
    --precision fp32 --batch 256 --seq 64 --hidden 128 --reps 1 --allow-oversubscribe --out "$TEST_TMP/over2" --quiet
is "$(csv_count "$TEST_TMP/over2/results.csv" '$_->{variant} eq "blocked" && $_->{status} eq "oom"')" 1 \
    "with --allow-oversubscribe it is tried (and meets the cap)"

# --on-oom shrink: batch 256 does not fit 4MiB; the run halves it until it does.
run_gpumem bench --backend opencl --mem-limit 4MiB --suite workloads --workload linear --precision fp32 \
    --batch 256 --seq 32 --hidden 128 --reps 1 --on-oom shrink --out "$TEST_TMP/shrink" --quiet
is "$RC" 0 "shrinking run: exit status 0"
# x [b*32, 128], w [128, 128], y [b*32, 128] in fp32: b = 64 fits 4MiB (2.06MiB), 128 does not (4.06MiB).
is "$(csv_value "$TEST_TMP/shrink/results.csv" '$_->{metric} eq "degraded_batch" && $_->{variant} eq "blocked"' value)" 64 \
    "the degraded batch is the largest halving that fits"
is "$(csv_count "$TEST_TMP/shrink/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{batch} == 64 && $_->{note} eq "degraded: out of memory at batch 256, ran at batch 64"')" 2 \
    "the measurements are of the degraded batch and say so"
run_gpumem bench --backend opencl --mem-limit 4MiB --suite workloads --workload linear --precision fp32 \
    --batch 256 --seq 32 --hidden 128 --reps 1 --out "$TEST_TMP/noshrink" --quiet
is "$(csv_count "$TEST_TMP/noshrink/results.csv" '$_->{status} eq "skipped"')" 2 "without it the point is skipped"

# The oom suite's allocator section (per-tensor: raw allocation, pool, async-pool).
run_gpumem bench --backend opencl --mem-limit 32MiB --suite oom --workload linear --precision fp32 --seq 16 \
    --hidden 16 --pattern fragmented --frag-fill 60% --frag-free 50% --frag-sizes 256KiB:4MiB \
    --out "$TEST_TMP/oom" --quiet
is "$RC" 0 "oom suite with fragmentation: exit status 0"
is "$(csv_count "$TEST_TMP/oom/results.csv" '$_->{metric} eq "fragmentation" && $_->{value} >= 0 && $_->{value} < 1 && $_->{note} =~ /^largest block [0-9.]+MiB of [0-9.]+MiB free, with \d+ fragments holding/')" 3 \
    "external fragmentation: the largest block against the free total"
is "$(perl -e "$CSV_PERL"' print join(" ", map { $_->{variant} } grep { $_->{metric} eq "fragmentation" } rows($ARGV[0]))' "$TEST_TMP/oom/results.csv")" \
    "fill-30% fill-60% fill-80%" "at half of --frag-fill, at it, and halfway from it to 100%"
is "$(csv_count "$TEST_TMP/oom/results.csv" '$_->{metric} eq "max_batch_lost" && $_->{pattern} eq "fragmented" && $_->{value} >= 0')" 2 \
    "the batches lost to fragmentation, per search"
perl -e '
    open my $f, "<", $ARGV[0] or die; my @h = split /,/, scalar(<$f>) =~ s/\r?\n$//r; my (%v, $rows);
    while (<$f>) { chomp; my %r; @r{@h} = split /,/; next unless $r{workload} eq "allocator" && $r{status} eq "ok";
        $rows++; $v{"$r{pattern} $r{variant} $r{bytes}"}{$r{metric}} = $r{value} }
    my $bad = grep { !($_->{alloc_latency_p50} > 0 && $_->{alloc_latency_p50} <= $_->{alloc_latency_p99}
                       && $_->{free_latency_p50} <= $_->{free_latency_p99}) } values %v;
    my %kinds = map { (split / /)[0] => 1 } keys %v;
    exit($bad || $rows < 40 || join(",", sort keys %kinds) ne "per-tensor,pool");
' "$TEST_TMP/oom/results.csv"
ok $? "allocator latency by size and fill level: p50 <= p99, for raw allocation and the pool"
done_testing
