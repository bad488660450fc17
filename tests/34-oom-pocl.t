#!/bin/sh
# The oom suite under --mem-limit: the largest batch found is the one the
# memory model predicts for that limit (B fits, B+1 does not), the
# allocation probes are exact to 1MiB, and the halving search's answer is
# recorded beside the bisection's. The largest single allocation starts
# from the free memory: under a cap that is the answer in one probe; when
# it does not fit, the search gallops down and bisects to the MiB.
. tests/lib.sh
plan 13

cap=$((6 * 1048576))
out=$TEST_TMP/run
run_gpumem bench --backend opencl --suite oom --mem-limit 6MiB --workload linear,attention \
    --precision fp32,bf16 --seq 16 --hidden 32 --heads 2 --pattern per-tensor,monolithic --out "$out" --quiet
is "$RC" 0 "oom search: exit status 0"
[ -n "$ERR" ] && diag "$ERR"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "largest_alloc" && $_->{value} == 6 * 1048576')" 1 \
    "the largest single allocation is the cap, to the MiB"
like "$(csv_value "$out/results.csv" '$_->{metric} eq "largest_alloc"' note)" \
    '^1 probes in [0-9.]+ s from 6MiB free; advertised total [0-9.]+[MGT]iB, largest allocation [0-9.]+[MGT]iB, under the 6MiB cap$' \
    "one probe: it starts from the free memory under the cap"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "largest_total" && $_->{value} == 6 * 1048576')" 1 \
    "the largest total in chunks is the cap"

# plan_bytes HOW WORKLOAD VARIANT PRECISION BATCH: the plan's total (HOW =
# model), or what an arena holding its tensors takes (HOW = arena: each
# tensor rounded up to 4KiB).
plan_bytes() {
    ./gpumem plan --workload "$2" ${3:+--variant "$3"} --precision "$4" --batch "$5" --seq 16 --hidden 32 --heads 2 |
        awk -v how="$1" '/^#/ { next } /^total/ { if (how == "model") print $2; next }
                         { s += int(($3 + 4095) / 4096) * 4096 } END { if (how == "arena") print s }'
}
# frontier PATTERN HOW POINTS...: how many points' largest batch B fits the
# cap by plan_bytes HOW while B+1 does not, as "good/n".
frontier() {
    pattern=$1 how=$2 good=0 n=0
    shift 2
    for point in "$@"; do
        set -- $point
        b=$(csv_value "$out/results.csv" "\$_->{workload} eq '$1' && \$_->{variant} eq '$2' && \$_->{precision} eq '$3' && \$_->{pattern} eq '$pattern' && \$_->{metric} eq 'max_batch'" value)
        variant=$2; [ "$1" = linear ] && variant=      # plan's --variant is attention's and block's
        at=$(plan_bytes "$how" "$1" "$variant" "$3" "$b")
        next=$(plan_bytes "$how" "$1" "$variant" "$3" $((b + 1)))
        n=$((n + 1))
        if [ "$at" -le "$cap" ] && [ "$next" -gt "$cap" ]; then good=$((good + 1)); else diag "$point: B=$b $how $at / $next"; fi
    done
    echo "$good/$n"
}
is "$(frontier per-tensor model "linear blocked fp32" "linear blocked bf16" "attention naive fp32" "attention tiled bf16")" \
    "4/4" "per-tensor: B fits the cap by the model and B+1 does not (two workloads, two precisions)"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "max_batch" && $_->{pattern} eq "monolithic" && $_->{value} >= 1')" 7 \
    "monolithic: a largest batch for every point (2 linear fp32, 1 bf16, 4 attention)"
is "$(frontier monolithic arena "linear blocked fp32" "attention naive fp32" "attention tiled bf16")" "3/3" \
    "monolithic: B's arena (tensors rounded up to 4KiB) fits the cap and B+1's does not (two workloads)"
# So the arena never fits a larger batch than separate tensors.
perl -e '
    open my $f, "<", $ARGV[0] or die; my @h = split /,/, scalar(<$f>) =~ s/\r?\n$//r; my %b;
    while (<$f>) { chomp; my %r; @r{@h} = split /,/; next unless $r{metric} eq "max_batch";
        $b{"$r{workload} $r{variant} $r{precision}"}{$r{pattern}} = $r{value} }
    my $bad = grep { $_->{monolithic} > $_->{"per-tensor"} } values %b;
    exit($bad || keys %b != 7);
' "$out/results.csv"
ok $? "monolithic never fits more than per-tensor"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "max_batch_halving" && $_->{value} >= 1 && ($_->{value} & ($_->{value} - 1)) == 0')" 14 \
    "the halving search's answer, a power of two, beside every search"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "max_batch" && $_->{note} =~ /^\d+ probes in [0-9.]+ s; the model holds/')" 14 \
    "each search records its probes, time and the model at B and B+1"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "device_fraction" && $_->{value} > 0.5 && $_->{value} <= 1')" 14 \
    "the share of the (capped) device each largest batch uses"

# The first allocation refused (as a driver that reports more free memory
# than one allocation can take): the search gallops down from the free
# memory and answers the largest that fits, exactly.
GPUMEM_BACKEND_FAULT=alloc:1:oom run_gpumem bench --backend opencl --suite oom --mem-limit 64MiB --workload linear \
    --precision fp32 --seq 16 --hidden 32 --pattern per-tensor --out "$TEST_TMP/gallop" --quiet
is "$RC" 0 "the first allocation probe refused: exit status 0"
is "$(csv_value "$TEST_TMP/gallop/results.csv" '$_->{metric} eq "largest_alloc"' value)-$(csv_value "$TEST_TMP/gallop/results.csv" '$_->{metric} eq "largest_alloc"' note | sed 's/ in .*//')" \
    "$((63 * 1048576))-2 probes" "it gallops down from 64MiB: 63MiB, the next MiB refused, in two probes"
done_testing
