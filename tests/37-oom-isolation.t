#!/bin/sh
# The oom suite runs every probe in a worker process: a worker killed by a
# signal is a `crash` row naming it, one that hangs past --probe-timeout a
# `timeout` row, and the search goes on with a fresh worker to a result.
# Under a real process memory limit (no --mem-limit), where PoCL aborts
# instead of reporting out-of-memory, the search still completes.
. tests/lib.sh
plan 10

search="--backend opencl --suite oom --workload linear --precision fp32 --seq 16 --hidden 32 --pattern per-tensor --quiet"

GPUMEM_FAULT=worker-kill:4 run_gpumem bench $search --mem-limit 6MiB --out "$TEST_TMP/kill"
is "$RC" 0 "a killed worker does not stop the run"
is "$(csv_count "$TEST_TMP/kill/results.csv" '$_->{status} eq "crash" && $_->{note} eq "the worker was killed by signal 9 (Killed)"')" 1 \
    "the probe it was running is a crash row naming SIGKILL"
is "$(csv_count "$TEST_TMP/kill/results.csv" '$_->{metric} eq "largest_alloc" && $_->{status} eq "ok"')" 1 \
    "the search it was part of still reaches an answer"
is "$(csv_count "$TEST_TMP/kill/results.csv" '$_->{metric} eq "max_batch" && $_->{status} eq "ok"')" 2 \
    "and so does every later search, in a fresh worker"

GPUMEM_FAULT=worker-hang:2 run_gpumem bench $search --mem-limit 6MiB --probe-timeout 2 --out "$TEST_TMP/hang"
is "$RC" 0 "a hung worker does not stop the run"
is "$(csv_count "$TEST_TMP/hang/results.csv" '$_->{status} eq "timeout" && $_->{note} eq "no answer within 2 s: the worker was killed"')" 1 \
    "the watchdog kills it and writes a timeout row"
is "$(csv_count "$TEST_TMP/hang/results.csv" '$_->{status} eq "ok" && $_->{metric} =~ /^(largest_alloc|largest_total|max_batch)$/')" 4 \
    "every search still has its answer"

case "$GM_BUILD" in
*san*)
    skip "AddressSanitizer reserves more address space than prlimit --as allows"
    skip "(the same)"
    skip "(the same)"
    ;;
*)
    # 800MB of address space and a cap far above it: PoCL aborts (and CLBlast
    # faults) as allocations grow, before the cap says out of memory.
    RC=0
    prlimit --as=800000000 ./gpumem bench --backend opencl --suite oom --workload linear --precision fp32 --mem-limit 2GiB \
        --seq 64 --hidden 128 --pattern per-tensor --out "$TEST_TMP/rlimit" --quiet >/dev/null 2>"$TEST_TMP/rlimit.err" || RC=$?
    is "$RC" 0 "under prlimit --as the search completes"
    like "$(csv_count "$TEST_TMP/rlimit/results.csv" '$_->{status} eq "crash" && $_->{note} =~ /killed by signal (6|11|9) /')" \
        "^[1-9]" "the driver's aborts are crash rows"
    # Every implementation searched (blocked, and CLBlast where installed)
    # ends with a max_batch row that is not a crash: its answer, or its error.
    perl -e '
        open my $f, "<", $ARGV[0] or die; my @h = split /,/, scalar(<$f>) =~ s/\r?\n$//r; my (%seen, %done);
        while (<$f>) { chomp; my %r; @r{@h} = split /,/; next unless $r{metric} eq "max_batch";
            $seen{$r{variant}} = 1; $done{$r{variant}} = 1 if $r{status} ne "crash" }
        exit(!keys %seen || grep { !$done{$_} } keys %seen);
    ' "$TEST_TMP/rlimit/results.csv"
    ok $? "every implementation searched ends with its max_batch row"
    ;;
esac
done_testing
