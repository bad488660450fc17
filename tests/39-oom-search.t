#!/bin/sh
# The oom suite's two searches for the largest batch, side by side on the
# same points: --search model (the default: the memory model's guess as
# the pattern allocates it, then gallop and bisect) and --search bisect
# (double from 1, then bisect) give the same exact batch for every
# workload, precision and allocation pattern; the model search records its
# probes, time and guess, and needs fewer probes. worker.log says where
# each probe's time went, and why a probe that failed did.
. tests/lib.sh
plan 9

points="--backend opencl --suite oom --mem-limit 3MiB --workload linear,attention,kvcache --precision fp32,bf16
    --seq 16 --hidden 32 --heads 2 --pattern per-tensor,monolithic,fragmented,pool,growth,prealloc --quiet"
run_gpumem bench $points --out "$TEST_TMP/model"
is "$RC" 0 "--search model (the default): exit status 0"
run_gpumem bench $points --search bisect --out "$TEST_TMP/bisect"
is "$RC" 0 "--search bisect: exit status 0"

# answers RUN METRIC: "workload variant precision pattern value" per search, sorted.
answers() {
    perl -e '
        open my $f, "<", $ARGV[0] or die; my @h = split /,/, scalar(<$f>) =~ s/\r?\n$//r;
        while (<$f>) { chomp; my %r; @r{@h} = split /,/; next unless $r{metric} eq $ARGV[1] && $r{status} eq "ok";
            print "$r{workload} $r{variant} $r{precision} $r{pattern} $r{value}\n" }
    ' "$1/results.csv" "$2" | sort
}
model=$(answers "$TEST_TMP/model" max_batch)
bisect=$(answers "$TEST_TMP/bisect" max_batch)
n=$(printf '%s\n' "$model" | grep -c .)
[ "$n" -ge 36 ]
ok $? "a largest batch for every point ($n)"
printf '%s\n' "$bisect" >"$TEST_TMP/bisect.txt"
printf '%s\n' "$model" | diff "$TEST_TMP/bisect.txt" - >"$TEST_TMP/diff"
ok $? "both searches give the same batch at every point"
[ -s "$TEST_TMP/diff" ] && diag "$(cat "$TEST_TMP/diff")"

sum() { answers "$1" probes | awk '{ s += $5 } END { print s + 0 }'; }
pm=$(sum "$TEST_TMP/model") pb=$(sum "$TEST_TMP/bisect")
note "probes: model $pm, bisect $pb"
[ "$pm" -lt "$pb" ]
ok $? "the model search needs fewer probes ($pm against $pb)"
is "$(answers "$TEST_TMP/model" search_time | grep -c .)" "$n" "each search records its time"
is "$(csv_count "$TEST_TMP/model/results.csv" '$_->{metric} eq "max_batch" && $_->{note} =~ /^\d+ probes in [0-9.]+ s; the model holds .*; search model, guess \d+ for /')" "$n" \
    "each model search notes its probes, time and guess"
like "$(grep -c '^point .*: held [0-9]* B; setup [0-9.]* s, run [0-9.]* s, verify [0-9.]* s, release [0-9.]* s; of these allocation [0-9.]* s, copies [0-9.]* s, kernel builds [0-9.]* s$' "$TEST_TMP/model/worker.log")" '^[1-9]' \
    "worker.log says where each probe's time went"
run_gpumem bench --backend opencl --suite oom --oom-parts batch --mem-limit 64MiB --workload block \
    --model tiny-llama-gqa --mode train --precision int8 --seq 64 --pattern per-tensor --out "$TEST_TMP/refused" --quiet
like "$(grep '^point ' "$TEST_TMP/refused/worker.log")" \
    '^point block blocked int8 seq 64 batch \d+ unsupported \(int8 training is not run \(plan refuses it too\)\): held 0 B;' \
    "a probe refused as unsupported: worker.log names the row status and why"
done_testing
