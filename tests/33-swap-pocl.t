#!/bin/sh
# The swap suite's transfers on the OpenCL device: every direction and
# host memory kind, sane latency percentiles and bandwidth; a corrupted
# payload is caught as a mismatch.
. tests/lib.sh
plan 8

out=$TEST_TMP/run
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite swap --blocks 4KiB,1MiB,1000000 \
    --reps 20 --out "$out" --quiet
is "$RC" 0 "transfers: exit status 0"
# 3 sizes x 2 host kinds x 3 directions, 5 metrics each.
is "$(csv_count "$out/results.csv" '$_->{status} eq "ok"')" 90 "every point measured (90 rows)"
for kind in pageable pinned; do
    is "$(csv_count "$out/results.csv" "\$_->{pattern} eq '$kind' && \$_->{metric} eq 'bandwidth'")" 9 "$kind: 9 points"
done
# Percentiles are ordered at every point: p50 <= p90 <= p99 <= max.
perl -e '
    open my $f, "<", $ARGV[0] or die; my @h = split /,/, scalar(<$f>) =~ s/\r?\n$//r; my %p;
    while (<$f>) { chomp; my %r; @r{@h} = split /,/; $p{"$r{variant} $r{pattern} $r{bytes}"}{$r{metric}} = $r{value} }
    my $bad = 0;
    for my $k (keys %p) { my $m = $p{$k};
        $bad++ unless $m->{latency_p50} <= $m->{latency_p90} && $m->{latency_p90} <= $m->{latency_p99}
                      && $m->{latency_p99} <= $m->{latency_max} && $m->{latency_p50} > 0 }
    exit($bad > 0 || keys %p != 18);
' "$out/results.csv"
ok $? "p50 <= p90 <= p99 <= max at all 18 points"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "bandwidth" && $_->{value} > 0 && $_->{value} < 2000')" 18 \
    "bandwidth positive and below any host memory's"

GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite swap \
    --blocks 64KiB --reps 1 --out "$TEST_TMP/fault" --quiet
is "$RC" 1 "a corrupted payload makes the run exit 1"
is "$(csv_count "$TEST_TMP/fault/results.csv" '$_->{status} eq "mismatch" && $_->{note} =~ /payload of 65536 bytes failed its checksum/')" 6 \
    "every direction and kind catches the corrupted payload"
done_testing
