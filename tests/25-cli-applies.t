#!/bin/sh
# No silent surprises: an option given that concerns nothing the command
# was asked for is refused in one line naming it (exit 2), never ignored;
# help says what the default profile sets in place of each default; every
# command exits 4 when its output cannot be written; a finished run leaves
# no lock.
. tests/lib.sh
plan 103

# expect_refusal DESCRIPTION REGEX ARGS... : exit 2, one stderr line matching REGEX
expect_refusal() {
    desc=$1 re=$2
    shift 2
    run_gpumem "$@"
    is "$RC:$(printf '%s\n' "$ERR" | grep -c .)" "2:1" "$desc: exit status 2, one line"
    like "$ERR" "$re" "$desc: the message names the option and what it concerns"
}

L="--mem-limit $TEST_MEM_LIMIT"
# plan: a whole model's options with a workload, and the reverse.
expect_refusal "plan --workload kvcache --paged --fit" \
    "^gpumem plan: --fit concerns a whole model's plan \(--model without --workload\), and this plan is of --workload kvcache$" \
    plan --workload kvcache --paged --fit 24GiB
expect_refusal "plan --workload block --mode train" "^gpumem plan: --mode concerns a whole model's plan" \
    plan --workload block --mode train
expect_refusal "plan --workload attention --format csv" "^gpumem plan: --format concerns a whole model's plan" \
    plan --workload attention --format csv
expect_refusal "plan --zero 3 --gpus 1" \
    "^gpumem plan: --zero shards over the data-parallel GPUs \(--gpus / --tensor-parallel\), and this plan has 1" \
    plan --model llama-3-8b --mode train --zero 3 --gpus 1
expect_refusal "plan --zero without a training mode" \
    "^gpumem plan: --zero concerns --mode train, lora, qlora, and --mode is inference$" \
    plan --model llama-3-8b --zero 3 --gpus 8
expect_refusal "plan --logits with --mode train" "^gpumem plan: --logits concerns --mode inference, and --mode is train" \
    plan --model llama-3-8b --mode train --logits all
expect_refusal "plan --paged with linear" "^gpumem plan: --paged concerns the workload kvcache, and --workload is linear$" \
    plan --workload linear --paged
expect_refusal "plan --block-tokens without --paged" "^gpumem plan: --block-tokens sizes the blocks of the paged cache" \
    plan --workload kvcache --block-tokens 32
expect_refusal "plan --hidden with --model" \
    "^gpumem plan: --hidden shapes the workloads without a whole model, and --model gpt2 sets the shape" \
    plan --workload attention --model gpt2 --hidden 64
expect_refusal "plan --checkpoint with a whole model" "^gpumem plan: --checkpoint concerns block shaped by --hidden" \
    plan --workload block --model gpt2 --checkpoint
expect_refusal "plan --group-size without int4 weights" "^gpumem plan: --group-size concerns int4 weights" \
    plan --workload linear --group-size 64
run_gpumem plan --model llama-3-8b --mode train --zero 3 --gpus 8
is "$RC" 0 "plan --zero 3 --gpus 8 --mode train: accepted"
# plan: fine-tuning's options (bench/model/train_plan.h).
expect_refusal "plan --lora-alpha with --mode train" \
    "^gpumem plan: --lora-alpha concerns --mode lora, qlora, and --mode is train$" \
    plan --model llama-3-8b --mode train --lora-alpha 32
expect_refusal "plan --adapter-precision for inference" \
    "^gpumem plan: --adapter-precision concerns --mode lora, qlora, and --mode is inference$" \
    plan --model llama-3-8b --adapter-precision bf16
expect_refusal "plan --lora-targets with a workload" \
    "^gpumem plan: --lora-targets concerns a whole model's plan \(--model without --workload\), and this plan is of --workload linear$" \
    plan --workload linear --lora-targets q,v
expect_refusal "plan --zero-offload for inference" \
    "^gpumem plan: --zero-offload concerns --mode train, lora, qlora, and --mode is inference$" \
    plan --model llama-3-8b --zero-offload optimizer
expect_refusal "plan --saved for inference" "^gpumem plan: --saved concerns --mode train, lora, qlora" \
    plan --model llama-3-8b --saved pytorch
expect_refusal "plan --host-memory without --zero-offload" \
    "^gpumem plan: --host-memory sizes the host memory that offloaded states fit in: add --zero-offload optimizer or params$" \
    plan --model llama-3-8b --mode train --host-memory 64GiB
# LoRA trains: the training options concern it, and each but --lora-alpha
# (the step's scale) changes what a GPU holds.
total() { awk -F, '$2 == "total" && $3 == "total" { print $4 }'; }
tune="plan --model llama-3-8b --mode lora --precision bf16 --batch 2 --seq 2048 --format csv"
run_gpumem $tune
base=$OUT
for o in "--lora-rank 8" "--lora-targets q,v" "--adapter-precision bf16" "--optimizer sgd" "--recompute full" \
         "--zero 2 --gpus 8" "--zero-offload optimizer --host-memory 512GiB" "--saved pytorch"; do
    run_gpumem $tune $o
    ok $([ "$RC" = 0 ] && [ -n "$(printf '%s\n' "$OUT" | total)" ] && [ "$OUT" != "$base" ]; echo $?) \
        "plan --mode lora $o: accepted, and the plan changes"
done
run_gpumem $tune --lora-alpha 16
ok $([ "$RC" = 0 ] && [ "$OUT" = "$base" ]; echo $?) "plan --mode lora --lora-alpha 16: accepted, the same bytes"

# bench: options of suites, workloads and patterns the run does not ask for.
expect_refusal "bench --suite stream --batch" \
    "^gpumem bench: --batch concerns the suites workloads, swap, and this run's suites are stream \(--suite\)$" \
    bench $L --suite stream --batch 4
expect_refusal "bench --suite workloads --sizes" "^gpumem bench: --sizes concerns the suite stream" \
    bench $L --suite workloads --sizes 4MiB
expect_refusal "bench --block-tokens with linear" \
    "^gpumem bench: --block-tokens concerns the workloads kvcache, serve, and --workload is linear$" \
    bench $L --suite workloads --workload linear --block-tokens 8
expect_refusal "bench --paged" "^gpumem bench: unknown option '--paged'" bench $L --suite workloads --workload kvcache --paged
expect_refusal "bench --mode train without a model" "^gpumem bench: --mode train runs block with a whole model alone" \
    bench $L --suite workloads --workload block --mode train
expect_refusal "bench --mode qlora with linear" \
    "^gpumem bench: --mode qlora runs block with a whole model alone: add --workload block and --model NAME$" \
    bench $L --suite workloads --model tiny-llama-gqa --mode inference,qlora
expect_refusal "bench --checkpoint with a whole model's inference" \
    "^gpumem bench: --checkpoint concerns block shaped by --hidden" \
    bench $L --suite workloads --workload block --model tiny-llama-gqa --checkpoint
# --checkpoint recomputes a whole model's lora and qlora rows: plan's
# bytes with --recompute full.
run_gpumem bench $L --backend opencl --suite workloads --workload block --model tiny-llama-gqa --mode qlora \
    --checkpoint --precision fp32 --batch 2 --seq 32 --reps 1 --out "$TEST_TMP/qlora" --quiet
rc=$RC
run_gpumem plan --model tiny-llama-gqa --mode qlora --recompute full --precision fp32 --batch 2 --seq 32 --format csv
t=$(printf '%s\n' "$OUT" | total)
is "$rc:$(csv_value "$TEST_TMP/qlora/results.csv" '$_->{mode} eq "qlora"' model_bytes)" "0:${t:-no total}" \
    "bench --mode qlora --checkpoint: accepted, its row's model_bytes are plan's with --recompute full"
# --recompute: the whole model's training step on the device, and plan's
# bytes in its lora and qlora rows (where --checkpoint means full).
expect_refusal "bench --recompute with inference alone" \
    "^gpumem bench: --recompute concerns --mode train, lora, qlora, and --mode is inference$" \
    bench $L --suite workloads --workload block --model tiny-llama-gqa --recompute full
expect_refusal "bench --recompute with linear" \
    "^gpumem bench: --recompute concerns the workload block, and --workload is linear$" \
    bench $L --suite workloads --workload linear --recompute selective
expect_refusal "bench --recompute against --checkpoint" \
    "^gpumem bench: --recompute selective disagrees with --checkpoint, which recomputes every layer of a whole model's lora and qlora rows \(--recompute full\): drop one of them$" \
    bench $L --suite workloads --workload block --model tiny-llama-gqa --mode lora --checkpoint --recompute selective --precision fp32
run_gpumem bench $L --backend opencl --suite workloads --workload block --model tiny-llama-gqa --mode lora \
    --recompute selective --precision fp32 --batch 2 --seq 32 --reps 1 --out "$TEST_TMP/lora" --quiet
rc=$RC
run_gpumem plan --model tiny-llama-gqa --mode lora --recompute selective --precision fp32 --batch 2 --seq 32 --format csv
t=$(printf '%s\n' "$OUT" | total)
run_gpumem plan --model tiny-llama-gqa --mode lora --precision fp32 --batch 2 --seq 32 --format csv
t0=$(printf '%s\n' "$OUT" | total)
is "$rc:$(csv_value "$TEST_TMP/lora/results.csv" '$_->{mode} eq "lora"' model_bytes)" "0:${t:-no total}" \
    "bench --mode lora --recompute selective: accepted, its row's model_bytes are plan's with --recompute selective"
ok $([ -n "$t" ] && [ "$t" -lt "${t0:-0}" ]; echo $?) "and selective recomputation counts fewer bytes than none ($t < $t0)"
expect_refusal "bench --model with --hidden" "^gpumem bench: --hidden shapes the workloads without a whole model" \
    bench $L --suite workloads --model gpt2 --hidden 64
expect_refusal "bench --frag-fill without fragmentation" "^gpumem bench: --frag-fill concerns the fragmented pattern" \
    bench $L --suite workloads --frag-fill 30%
expect_refusal "bench --serial with one device" "^gpumem bench: --serial concerns several devices" bench $L --serial
expect_refusal "bench --search without the oom suite" "^gpumem bench: --search concerns the suite oom" \
    bench $L --suite stream --search bisect

expect_refusal "bench --search without the batch part" "^gpumem bench: --search concerns the largest batch's search" \
    bench $L --suite oom --oom-parts alloc --search bisect

# stress: options of checks that do not run.
expect_refusal "stress --duration with memtest alone" \
    "^gpumem stress: --duration concerns the checks churn, soak, and --checks is memtest$" \
    stress $L --checks memtest --duration 5
expect_refusal "stress --throttle without soak" "^gpumem stress: --throttle concerns the check soak" \
    stress $L --checks memtest,churn --throttle 20%

# --model names: a preset, a config.json or a model's folder; old names say which preset.
expect_refusal "bench --model llama-7b" "^gpumem bench: --model 'llama-7b': the shapes of models.ini are retired; use the preset llama-2-7b" \
    bench $L --suite workloads --workload block --model llama-7b

# The quick profile runs every suite: help says so beside --suite's default.
run_gpumem bench --help
like "$OUT" "--suite LIST +suites to run: any of stream, workloads, swap, oom,\s+serve\s+\(default:\s+stream;\s+profile\s+quick:\s+stream,workloads,swap,oom,serve\)" \
    "bench --help: --suite's default and what the quick profile runs"
like "$OUT" "--batch RANGE(.|\n)*\(default:\s+workloads:\s+1,4,16;\s+swap:\s+1;\s+profile\s+quick:\s+1:16:x4,\s+\[swap\]\s+1\)" \
    "bench --help: --batch's defaults, the suites' own, and the profile's"
like "$OUT" "--model NAME(.|\n)*\(known:[^)]*stories15m" "bench --help lists the model presets"
run_gpumem bench --profile full --help
like "$OUT" "--suite LIST(.|\n)*profile full:\s+stream,workloads,swap,oom" "bench --profile full --help: the full profile's"
# bench --sizes with the quick profile (every suite): accepted, the
# device it names is what fails.
run_gpumem bench $L --backend opencl --device 63 --sizes 64KiB
like "$RC $ERR" "^2 gpumem bench: .*--device 63" "bench --sizes with the quick profile: no refusal of --sizes"
run=$TEST_TMP/fleet/a
run_gpumem bench $L --backend opencl --suite stream --sizes 64KiB --kernels copy --precision fp32 --reps 2 \
    --out "$run" --quiet
is "$RC" 0 "a small stream run"
cp -r "$run" "$TEST_TMP/fleet/b"

# A finished run leaves no lock.
ok $([ ! -e "$run/lock" ]; echo $?) "a finished run leaves no lock file"

# Output that cannot be written: exit 4 in every command.
mkdir -p "$TEST_TMP/ro" && : >"$TEST_TMP/ro/file"
run_gpumem compare "$run" "$run" --out "$TEST_TMP/ro/file/cmp"
is "$RC" 4 "compare --out an unwritable folder: exit status 4"
like "$ERR" "^gpumem compare: --out: cannot create $TEST_TMP/ro/file/cmp: Not a directory$" "compare: the message names the folder"
run_gpumem fleet "$TEST_TMP/fleet" --out "$TEST_TMP/ro/file/fleet"
is "$RC" 4 "fleet --out an unwritable folder: exit status 4"
like "$ERR" "gpumem fleet: --out: cannot create $TEST_TMP/ro/file/fleet" "fleet: the message names the folder"
run_gpumem plot "$run" --out "$TEST_TMP/ro/file/plots"
is "$RC" 4 "plot --out an unwritable folder: exit status 4"
like "$ERR" "^gpumem plot: cannot create $TEST_TMP/ro/file/plots: Not a directory$" "plot: the message names the folder"

# The quick profile on a CPU device: its oom suite searches a small real
# model under a cap of its own, and the report's answers say both.
cpu=$TEST_TMP/quick-cpu
run_gpumem bench --backend opencl --suite oom --mem-limit 64MiB --oom-parts alloc,batch --precision bf16 --seq 128 \
    --out "$cpu" --quiet
is "$RC" 0 "the quick profile's oom suite on the CPU"
is "$(csv_count "$cpu/results.csv" '$_->{metric} eq "max_batch" && $_->{model} eq "stories15m" && $_->{value} >= 1')" 2 \
    "it searches the largest batch of stories15m, per tensor and pooled"
run_gpumem plot "$cpu"
md=$(cat "$cpu/report.md")
like "$md" "\*\*How much memory is usable\?\*\* [^\n]*of the oom suite's 64MiB cap[^\n]* The cap is the run's, not the device's: a CPU device's memory is the host's own, so the search stops there to keep the host out of its OOM killer" \
    "report: the first answer says the memory is capped, and why"
like "$md" "\*\*Where do the models stop fitting\?\*\* Under the oom suite's 64MiB cap: stories15m bf16 inference per-tensor, seq 128: batch <= [1-9]" \
    "report: the third answer names the model and the cap"

# version and help take no stray arguments; help COMMAND is the command's help.
expect_refusal "version with an argument" "^gpumem version: unexpected argument 'x'" version x
run_gpumem help plan
like "$RC $OUT" "^0 usage: gpumem plan" "help plan: plan's help"
done_testing
