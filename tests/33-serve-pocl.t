#!/bin/sh
# The serve suite on the CPU device: a tiny model served to a full KV pool
# under a 128MiB cap, as vLLM's V1 engine sizes and runs it: the pool as
# measured beside plan --mode serve's, verified prefill and decode at 1,
# 2, 4, ... running sequences against the stream suite's roofline, and
# preemption by swap and by recompute; every checked step against the CPU
# reference, a wrong output a mismatch row. And the serve workload's one
# decode step in the workloads suite.
. tests/lib.sh
plan 36

run=$TEST_TMP/serve
serve_args="--backend opencl --model tiny-serve --precision bf16 --seq 512 --output-tokens 64
      --prefill-requests 2 --max-batched-tokens 256 --max-seqs 64 --reps 3 --quiet"
args="$serve_args --mem-limit 128MiB"
# The roofline's read: arrays the stream suite counts as device memory on
# this CPU, under a cap of the stream suite's own that holds its three
# arrays; the serve suite under 128MiB (the profile's sections).
dram=$(dram_array_mib 32)
printf '[stream]\nmem-limit = %sMiB\n\n[serve]\nmem-limit = 128MiB\n' "$((4 * dram))" >"$TEST_TMP/roofline.ini"
# shellcheck disable=SC2086
run_gpumem bench $serve_args --profile "$TEST_TMP/roofline.ini" --suite stream,serve --sizes "${dram}MiB" \
    --kernels read --out "$run"
is "$RC" 0 "stream and serve: exit status 0"
csv=$run/results.csv
serve() { csv_count "$csv" "\$_->{suite} eq 'serve' && ($1)"; }
is "$(serve '$_->{status} ne "ok"')" 0 "every serve row is ok (each checked step verified)"
is "$(serve '$_->{mode} ne "serve" || $_->{model} ne "tiny-serve"')" 0 "serve rows carry mode serve and the model"

# The pool: the device's memory x 0.9 less what the engine measured
# besides it, within 2% of plan --mode serve's for the same memory.
ratio=$(csv_value "$csv" '$_->{metric} eq "kv_pool_vs_plan"' value)
perl -e 'exit !($ARGV[0] >= 0.98 && $ARGV[0] <= 1.02)' "$ratio"
ok $? "the measured pool is within 2% of plan's ($ratio)"
pool=$(csv_value "$csv" '$_->{metric} eq "kv_pool_tokens"' value)
run_gpumem plan --model tiny-serve --mode serve --precision bf16 --fit 128MiB --max-batched-tokens 256 \
    --max-seqs 64 --format csv
planned=$(printf '%s\n' "$OUT" | awk -F, '$3 == "tokens" { print $4 }')
is "$(perl -e 'printf "%.6f", $ARGV[0] / $ARGV[1]' "$pool" "$planned")" "$(perl -e 'printf "%.6f", $ARGV[0]' "$ratio")" \
    "kv_pool_vs_plan is the pool over plan --mode serve's tokens ($pool / $planned)"
like "$(csv_value "$csv" '$_->{metric} eq "kv_pool_tokens"' note)" \
    "^pool of [0-9]+ blocks of 16 tokens: .* measured besides the KV cache; plan --mode serve: $planned tokens" \
    "the pool's note says what was measured and what plan says"
occupancy=$(csv_value "$csv" '$_->{metric} eq "occupancy"' value)
perl -e 'exit !($ARGV[0] >= 0.95 && $ARGV[0] <= 1)' "$occupancy"
ok $? "the pool is filled ($occupancy of its blocks held at the most)"
full_seqs=$(csv_value "$csv" '$_->{metric} eq "token_share"' batch)
# Paged blocks waste only each sequence's last block's tail: at the full
# pool, the held slots less the tokens held are fewer than 16 a sequence.
share=$(csv_value "$csv" '$_->{metric} eq "token_share"' value)
is "$(printf '%s\n' "$(csv_value "$csv" '$_->{metric} eq "token_share"' note)" | perl -e '
        my ($t, $b, $slots) = <STDIN> =~ /^at the full pool, (\d+) tokens.* in the (\d+) blocks held \((\d+) slots\)/
            or do { print "no figures in the note"; exit };
        my $ok = $slots == 16 * $b && $slots - $t < 16 * $ARGV[0] && abs($t / $slots - $ARGV[1]) < 1e-9;
        print $ok ? "ok" : "bad"' "$full_seqs" "$share")" ok \
   "token_share: the held blocks' tokens over their slots ($share), less than a block's tail a sequence unfilled"

# Prefill, and decode at every running count up to the full pool.
is "$(serve '$_->{variant} eq "prefill" && $_->{metric} eq "tokens" && $_->{value} > 0')" 1 "prefill tokens/s"
# At the full pool the running requests outgrow the free blocks and the
# ones admitted last are preempted: its decode row counts the rows its
# steps decoded (their median), more than 32 and at most the admitted.
admitted=$(csv_value "$csv" '$_->{metric} eq "occupancy"' batch)
batches=$(perl -e "$CSV_PERL"'print join " ", map { $_->{batch} } grep { $_->{suite} eq "serve" && $_->{variant} eq "decode" && $_->{metric} eq "tokens" } rows($ARGV[0])' "$csv")
full=${batches##* }
is "$(printf '%s' "$batches" | sed 's/ [0-9]*$//'):$(perl -e 'print $ARGV[0] > 32 && $ARGV[0] <= $ARGV[1] ? "full" : "not"' "$full" "$admitted")" \
   "1 2 4 8 16 32:full" "decode rows at 1, 2, 4, ... running sequences and at the full pool ($full of $admitted admitted)"
is "$(serve '$_->{variant} eq "decode" && $_->{metric} eq "time" && $_->{value} > 0
             && $_->{reps} == ($_->{batch} == '"$full"' ? 24 : 8)')" 7 \
   "each decode row: 8 timed steps, 24 at the full pool"
# The roofline's yardstick: a read of the KV pool in its precision timed
# after each decode step, under the load the step met (the stream suite's
# read of another moment of the run is the fallback, below).
is "$(serve '$_->{variant} eq "decode" && $_->{metric} =~ /^(time|tokens|roofline_time)$/ && $_->{note} =~ /roofline at the KV pool.s read beside the steps, [0-9.]+ GB\/s \(bf16, the median of (\d+) reads, one after each step/
             && $1 == ($_->{batch} == '"$full"' ? 24 : 8)')" 21 \
   "decode rows name their yardstick: the KV pool's read beside the steps, in its precision (bf16)"
# The roofline: the bytes a step reads over that bandwidth (the note's,
# rounded to 1 MB/s), a figure of its own at each count.
roofline_check='my %b; my $bad = 0;
        for (rows($ARGV[0])) { next unless $_->{suite} eq "serve" && $_->{variant} eq "decode";
            $b{$_->{batch}}{$_->{metric}} = $_->{value};
            $b{$_->{batch}}{gbps} = $1 if $_->{metric} eq "roofline_time" && $_->{note} =~ /, ([0-9.]+) GB\/s/ }
        for my $n (keys %b) { my $gbps = $ARGV[1] ne "" ? $ARGV[1] : $b{$n}{gbps} // 0;
            my $want = $gbps > 0 ? $b{$n}{step_bytes} / ($gbps * 1e9) * 1e3 : -1;
            $bad++ unless abs($b{$n}{roofline_time} - $want) <= (5e-4 / $gbps + 1e-3) * $want
                && $b{$n}{roofline_share} > 0 }
        print scalar(keys %b) == 7 ? $bad : "levels: " . scalar(keys %b)'
is "$(perl -e "$CSV_PERL$roofline_check" "$csv" "")" 0 \
   "roofline_time = step_bytes / the pool read's bandwidth at each count, and a share of it"
# The largest batch: its decode steps were checked (every row ok above) and
# reach a share of the roofline in (0, 1.2] (above 1 only within the noise
# of two timings).
top=$(csv_value "$csv" '$_->{metric} eq "roofline_share" && $_->{batch} == '"$full" value)
note "decode at $full running sequences: $top of the roofline"
perl -e 'exit !($ARGV[0] ne "" && $ARGV[0] > 0 && $ARGV[0] <= 1.2)' "${top:-}"
ok $? "roofline_share at the full pool ($full sequences) is in (0, 1.2]: ${top:-none}"
# tiny-serve: 1049728 parameters, 65536 of them the embedding, in bf16;
# one embedding row of 128; keys and values 2 x 4 layers x 2 heads x 128
# x 2 bytes a token, of the 449 to 512 tokens the sequence holds (the
# mean over the row's steps).
is "$(serve '$_->{variant} eq "decode" && $_->{metric} eq "step_bytes" && $_->{batch} == 1
             && ($_->{value} - (1049728 - 65536) * 2 - 128 * 2) / 4096 >= 449
             && ($_->{value} - (1049728 - 65536) * 2 - 128 * 2) / 4096 <= 512')" 1 \
   "step_bytes at 1 sequence: the weights but the embedding, its embedding row, its keys and values"

# Preemption: both kinds happened, were resumed and timed.
for m in swap recompute; do
    is "$(serve '$_->{variant} eq "'$m'" && $_->{metric} =~ /^latency_per_(block|token)$/ && $_->{value} > 0')" 2 \
       "$m: time per block and per token"
done
like "$(csv_value "$csv" '$_->{variant} eq "swap"' note)" "^[0-9]+ preempted: [0-9]+ blocks \\([0-9]+ tokens\\) out in [0-9.]+ ms, back in [0-9.]+ ms" \
     "swap: blocks out and back in, timed"

# The report's third answer: how many requests of that length run at once, and their decode rate.
run_gpumem plot "$run"
like "$(cat "$run/report.md")" "tiny-serve bf16 serving, 512-token requests: $full concurrent, [0-9]+ tokens/s at that load" \
     "the report's third answer gains the serving line"
if command -v gnuplot >/dev/null; then
    is "$(grep -c '(roofline)' "$run/plots/data/serve.all.dashed.dat")" 1 "the serving plot: decode tokens/s with the roofline dashed"
else
    skip "gnuplot not installed"
fi

# A wrong output is a mismatch row, never a number.
# shellcheck disable=SC2086
GPUMEM_FAULT=corrupt-output run_gpumem bench $args --suite serve --out "$TEST_TMP/fault"
is "$RC" 1 "a corrupted step: exit status 1"
like "$(csv_value "$TEST_TMP/fault/results.csv" '$_->{suite} eq "serve"' note)" "logits of the step against its replay" \
     "the corrupted logit is found"
is "$(csv_count "$TEST_TMP/fault/results.csv" '$_->{status} eq "ok"')" 0 "no figure of a mismatched point is written"

# Where the pool's read cannot be built (its program, the 7th the serve
# suite builds: the engine's three for the budget's profile step and for
# serving, then the read's; the 8th after the stream suite's), the stream
# suite's read in the run is the yardstick, and the rows say which and
# why; without that either, no roofline rows, and the rows say why.
# shellcheck disable=SC2086
GPUMEM_BACKEND_FAULT=program_build:8:oom run_gpumem bench $serve_args --profile "$TEST_TMP/roofline.ini" \
    --suite stream,serve --sizes "${dram}MiB" --kernels read --out "$TEST_TMP/fallback"
fb=$TEST_TMP/fallback/results.csv
is "$RC:$(csv_count "$fb" '$_->{metric} eq "tokens" && $_->{variant} eq "decode" && $_->{status} eq "ok" && $_->{note} =~ /roofline at the stream suite.s read, [0-9.]+ GB\/s \(bf16, [0-9.]+[KMG]iB arrays\) \(no read of the KV pool beside the steps: out of memory \(injected fault at program_build call 8\)\)/')" \
   "0:7" "no pool read: the decode rows name the stream suite's read instead, and why"
bw=$(csv_value "$fb" '$_->{suite} eq "stream" && $_->{metric} eq "bandwidth"' value)
is "$(perl -e "$CSV_PERL$roofline_check" "$fb" "$bw")" 0 \
   "then roofline_time = step_bytes / the stream read bandwidth ($bw GB/s), and a share of it"
# shellcheck disable=SC2086
GPUMEM_BACKEND_FAULT=program_build:7:oom run_gpumem bench $args --suite serve --out "$TEST_TMP/noroof"
nr=$TEST_TMP/noroof/results.csv
is "$RC:$(csv_count "$nr" '$_->{metric} =~ /^roofline/')-$(csv_count "$nr" '$_->{metric} eq "tokens" && $_->{variant} eq "decode" && $_->{status} eq "ok" && $_->{note} =~ /no roofline: the stream suite.s read of bf16 from device memory did not run in this run \(no read of the KV pool beside the steps: out of memory \(injected fault at program_build call 7\)\)/')" \
   "0:0-7" "neither read: no roofline rows, verified decode rows that say why"

# A request longer than the model's context, and no whole model: skipped.
run_gpumem bench --backend opencl --mem-limit 64MiB --suite serve --model tiny-serve --precision bf16 --seq 5000 \
    --out "$TEST_TMP/long" --quiet
like "$(csv_value "$TEST_TMP/long/results.csv" '$_->{status} eq "skipped"' note)" \
     "a request of 5000 tokens is longer than the model's context \\(4096 tokens\\)" "a request past the context: skipped"
# The oom suite answers no batch of sequences past a whole model's context.
run_gpumem bench --backend opencl --mem-limit 64MiB --suite oom --oom-parts batch --workload block \
    --model tiny-llama-gqa --precision bf16 --seq 4096 --out "$TEST_TMP/oomlong" --quiet
like "$(csv_value "$TEST_TMP/oomlong/results.csv" '$_->{metric} eq "max_batch"' status):$(csv_value "$TEST_TMP/oomlong/results.csv" '$_->{metric} eq "max_batch"' note)" \
     "^skipped:seq 4096 is longer than tiny-llama-gqa's context, 2048 tokens" "oom: no largest batch past the context"
run_gpumem bench --backend opencl --mem-limit 64MiB --suite serve --gpu-memory-utilization 0 --out "$TEST_TMP/bad" --quiet
is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "2:1" "--gpu-memory-utilization 0: exit status 2, one line"

# Blocks of 128 tokens, vLLM's on a CPU (the CPU attention's tile then
# spans 512 tokens): served in fp32 to a full pool, verified, preempted
# both ways; a block of 129 is past the engine's bound.
run_gpumem bench --backend opencl --mem-limit 40MiB --suite serve --model tiny-serve --precision fp32 --seq 512 \
    --output-tokens 128 --block-tokens 128 --max-model-len 512 --prefill-requests 2 --reps 3 --out "$TEST_TMP/b128" \
    --quiet
b128=$TEST_TMP/b128/results.csv
ratio=$(csv_value "$b128" '$_->{metric} eq "kv_pool_vs_plan"' value)
is "$RC:$(csv_count "$b128" '$_->{suite} eq "serve" && $_->{status} ne "ok"'):$(csv_count "$b128" '$_->{variant} =~ /^(swap|recompute)$/ && $_->{metric} eq "latency_per_block" && $_->{value} > 0'):$(perl -e 'print $ARGV[0] >= 0.98 && $ARGV[0] <= 1.02 ? "pool" : "pool $ARGV[0]"' "$ratio")" \
   "0:0:2:pool" "128-token blocks: every step verified, both preemptions timed, the pool within 2% of plan's"
like "$(csv_value "$b128" '$_->{metric} eq "kv_pool_tokens"' note)" "^pool of [0-9]+ blocks of 128 tokens" \
     "the pool's note names the blocks of 128 tokens"
run_gpumem bench --backend opencl --mem-limit 40MiB --suite serve --model tiny-serve --precision fp32 --seq 512 \
    --block-tokens 129 --out "$TEST_TMP/b129" --quiet
like "$(csv_value "$TEST_TMP/b129/results.csv" '$_->{suite} eq "serve"' status):$(csv_value "$TEST_TMP/b129/results.csv" '$_->{suite} eq "serve"' note)" \
     "^unsupported:the serving engine runs --block-tokens at most 128" "a block of 129 tokens: unsupported, the bound named"

# The serve workload: one decode step over running sequences, its tensors the model's.
run_gpumem bench --backend opencl --mem-limit 64MiB --suite workloads --workload serve --mode serve --model tiny-serve \
    --precision fp32,bf16 --batch 3 --seq 40 --reps 2 --out "$TEST_TMP/wl" --quiet
is "$(csv_count "$TEST_TMP/wl/results.csv" '$_->{metric} eq "tokens" && $_->{status} eq "ok" && $_->{mode} eq "serve"')" 2 \
   "the serve workload decodes 3 sequences, verified, in fp32 and bf16"
# make bench's command with suites named: the quick profile's [serve] and
# [serve.cpu] sections apply to the serve suite (tiny-serve, fp32, 2048 and
# 4096 tokens in blocks of 128), whatever else runs (a cap of 16MiB: rows,
# not a run).
run_gpumem bench --profile quick --suite stream,serve --backend opencl --mem-limit 16MiB --reps 1 --sizes 4MiB \
    --kernels read --out "$TEST_TMP/quick"
q=$TEST_TMP/quick/results.csv
is "$(perl -e "$CSV_PERL"'my %k; $k{"$_->{model} $_->{precision} $_->{seq_len}"} = 1 for grep { $_->{suite} eq "serve" } rows($ARGV[0]); print join ",", sort keys %k' "$q")" \
   "tiny-serve fp32 2048,tiny-serve fp32 4096" "--profile quick --suite stream,serve: [serve.cpu] applies to serve"
# A profile that does not name a suite that runs (one of another version
# than the binary, say) is named on stderr with its file.
mkdir -p "$TEST_TMP/profiles"
printf '[bench]\nsuite = stream\nprecision = fp32\n' >"$TEST_TMP/profiles/old.ini"
GPUMEM_PROFILE_DIR=$TEST_TMP/profiles run_gpumem bench --profile old --suite stream,serve --backend opencl \
    --mem-limit 16MiB --reps 1 --sizes 4MiB --kernels read --out "$TEST_TMP/old"
like "$ERR" "note: profile old \\($TEST_TMP/profiles/old.ini\\) does not name the serve suite \\(in \\[bench\\].s suite list, a \\[serve\\] or a \\[serve.cpu\\] section\\)" \
     "a suite the profile does not name: a note with the profile's file"
is "$(printf '%s\n' "$ERR" | grep -c 'does not name the stream suite')" 0 "no note for a suite it names"
done_testing
