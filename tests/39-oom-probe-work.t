#!/bin/sh
# A whole model's oom probe allocates the whole batch but runs and
# verifies only its first sequence (bench/workloads/model_*.c, gm_shape.probe),
# and of a longer one its first GM_PROBE_TOKENS (128) tokens: its run
# grows neither with the batch nor past that length. Every stage counts, the K and V
# projections into the KV cache included (straight, and through the phase
# buffer into an fp8 cache): on an 80 GB card a Llama-3-8B probe holds
# some 470 thousand tokens, and projecting K and V for all of them is
# some 500 TFLOP a probe (with the check's replay) instead of a few.
#
# The probe worker is driven directly (its wire format: bench/oom/probe.h):
# `point WORKLOAD IMPL PATTERN PRECISION BATCH SEQ TRAIN`, the numbers
# indices into GM_WORKLOAD_LIST (2: block), gm_pattern_kind (0:
# per-tensor) and gm_precision (2: bf16); worker.log's line for each probe
# (its stderr) names what ran and says how long its run took.
. tests/lib.sh
plan 10

model="--model tiny-llama-gqa"
small=16 big=4096
# Each batch twice: the faster of the two runs is compared, so that one
# run slowed by a busy machine does not decide.
printf 'point 2 tiled 0 2 %s 16 0\n' $small $small $big $big >"$TEST_TMP/requests"

for kv in bf16 fp8e4m3; do
    "$GPUMEM" __worker oom.cpu --backend opencl --workload block $model --precision bf16 --kv-precision $kv \
        --mem-limit 512MiB <"$TEST_TMP/requests" >"$TEST_TMP/answers" 2>"$TEST_TMP/log"
    RC=$?
    is "$RC-$(grep -c '^result 0 ' "$TEST_TMP/answers")" "0-4" \
        "KV cache $kv: the worker answers all four probes as fitting and verified"
    is "$(grep -c "^point block tiled bf16 seq 16 batch $big fits" "$TEST_TMP/log")" 2 \
        "KV cache $kv: worker.log names the probes at batch $big"
    runs=$(perl -ne 'print "$1 $2\n" if /^point block .* batch (\d+) fits: .* run ([0-9.]+) s,/' "$TEST_TMP/log")
    note "KV cache $kv, batch and run seconds:" "$runs"
    printf '%s\n' "$runs" | perl -e '
        my %min;
        while (<STDIN>) { my ($b, $s) = split; $min{$b} = $s if !defined $min{$b} || $s < $min{$b} }
        my ($small, $big) = @ARGV;
        exit 1 unless defined $min{$small} && defined $min{$big};
        my $base = $min{$small} > 0.02 ? $min{$small} : 0.02;
        exit($min{$big} <= 4 * $base ? 0 : 1)' $small $big
    ok $? "KV cache $kv: the probe at batch $big runs one sequence, no slower than at batch $small (4x slack)"
done

# Past 128 tokens a probe runs the first 128 of its sequence but holds the
# whole length: inference and train fit and verify at seq 1024, holding
# more than at 512.
printf 'point 2 tiled 0 2 1 %s %s\n' 512 0 1024 0 512 1 1024 1 >"$TEST_TMP/requests"
"$GPUMEM" __worker oom.cpu --backend opencl --workload block $model --precision bf16 --mem-limit 512MiB \
    <"$TEST_TMP/requests" >"$TEST_TMP/answers" 2>"$TEST_TMP/log"
is "$?-$(grep -c '^result 0 ' "$TEST_TMP/answers")" "0-4" "seq 512 and 1024, inference and train: every probe fits and verifies"
held=$(perl -ne 'print "$1 " if /^point block .* seq \d+ batch 1 fits: held (\d+) B/' "$TEST_TMP/log")
note "held at seq 512, 1024 (inference), 512, 1024 (train): $held"
set -- $held
ok "$([ $# -eq 4 ] && [ "$2" -gt "$1" ] && [ "$4" -gt "$3" ]; echo $?)" \
    "a probe at seq 1024 holds more than at 512 (inference and train): the whole length is allocated"
run_gpumem bench --backend opencl --suite oom --workload block $model --mode inference,train --precision bf16 \
    --seq 64,1024 --pattern per-tensor --mem-limit 128MiB --out "$TEST_TMP/oom" --quiet
is "$RC" 0 "the oom suite searches seq 64 and 1024 in both modes"
is "$(csv_count "$TEST_TMP/oom/results.csv" '$_->{metric} eq "max_batch" && $_->{status} eq "ok" && ($_->{seq_len} == 1024) == ($_->{note} =~ /ran and verified the first 128 tokens of its first sequence/)')" 4 \
    "its notes say that a probe at seq 1024 ran the first 128 tokens, one at seq 64 its whole sequence"
done_testing
