#!/bin/sh
# gpumem bench --rounds on PoCL: the rows of a run in rounds aggregate
# every round (one row per point and metric, reps the total), samples.csv
# records each sample's round; a run killed (kill -9) in the middle of
# round 2 resumes there and ends holding each round's samples of every
# point exactly once, and the rows of an uninterrupted run.
. tests/lib.sh
. tests/lib_files.sh
plan 8

A="bench --backend opencl --mem-limit 128MiB --suite stream --sizes 256KiB:4MiB:x4 --precision fp32
   --kernels copy,triad --reps 7 --rounds 3 --warmup 0 --quiet"
run_gpumem $A --out "$TEST_TMP/ref"
is "$RC" 0 "an uninterrupted run in 3 rounds"
point_keys "$TEST_TMP/ref/results.csv" >"$TEST_TMP/ref.keys"
# 3 sizes x 2 kernels = 6 points, 18 rows; 7 reps over 3 rounds: 3, 2, 2
# (the verify_time rows: the device's check of each round's first rep, 3).
is "$(csv_count "$TEST_TMP/ref/results.csv" '$_->{reps} == 7 && $_->{status} eq "ok" && $_->{metric} ne "verify_time"'):$(csv_count "$TEST_TMP/ref/results.csv" '$_->{reps} == 3 && $_->{metric} eq "verify_time"'):$(wc -l <"$TEST_TMP/ref.keys")" \
    "12:6:18" "one row per point and metric, each over all 7 repetitions (verify_time: 3, a round's first)"
# samples_by_round RUN: per key and round, the number of samples ("n1/n2/n3"), sorted; "dup" if any rep twice.
samples_by_round() {
    perl -e "$CSV_PERL"'
        my (%n, %seen);
        for (rows($ARGV[0])) {
            my $k = join("|", @{$_}{qw(suite workload variant pattern precision batch seq_len bytes metric)});
            print "dup $k\n" if $seen{"$k|$_->{round}|$_->{rep}"}++;
            $n{$k}[$_->{round}]++;
        }
        for my $k (sort keys %n) { print "$k ", join("/", map { $n{$k}[$_] // 0 } 1 .. 3), "\n" }
    ' "$1"
}
samples_by_round "$TEST_TMP/ref/samples.csv" >"$TEST_TMP/ref.samples"
is "$(grep -v '|verify_time ' "$TEST_TMP/ref.samples" | awk '{print $2}' | sort -u):$(grep '|verify_time ' "$TEST_TMP/ref.samples" | awk '{print $2}' | sort -u)" \
    "3/2/2:1/1/1" "samples.csv: 3, 2 and 2 samples of every row in rounds 1, 2, 3 (verify_time: 1 a round)"

# Killed once the journal shows a point of round 2 (points 6..11) finished.
run=$TEST_TMP/killed
"$GPUMEM" $A --out "$run" >/dev/null 2>&1 &
pid=$!
i=0
journaled() { n=$(grep -c '^point ' "$run/points.journal" 2>/dev/null); echo "${n:-0}"; }
while [ "$(journaled)" -lt 8 ] && [ $i -lt 1000 ]; do
    sleep 0.01
    i=$((i + 1))
done
kill -9 "$pid" 2>/dev/null
{ wait "$pid"; } 2>/dev/null
done_points=$(journaled)
ok "$([ "$done_points" -ge 8 ] && [ "$done_points" -lt 18 ]; echo $?)" \
    "killed after $done_points of 18 point-rounds (round $((done_points / 6 + 1)))"
run_gpumem bench --resume "$run" --quiet
is "$RC" 0 "the killed run resumed to its end"
[ "$RC" -eq 0 ] || diag "$ERR"
point_keys "$run/results.csv" | cmp -s - "$TEST_TMP/ref.keys"
ok $? "its rows are the uninterrupted run's: same points, none twice"
samples_by_round "$run/samples.csv" | cmp -s - "$TEST_TMP/ref.samples"
ok $? "its samples: each round of every point exactly once" || diag "$(samples_by_round "$run/samples.csv")"
is "$(csv_count "$run/results.csv" '$_->{reps} == 7 && $_->{status} eq "ok"')" 12 "each of its rows over all 7 repetitions (but verify_time's)"
