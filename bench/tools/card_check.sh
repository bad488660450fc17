#!/bin/sh
# shellcheck disable=SC2317 # the steps are functions called by name (step_$s)
# A GPU machine's checks in one go, on a ./gpumem already built (nothing
# is installed or built here: such a machine may have no network and no
# compiler's libraries). Each step runs under a time limit of its own and
# is stopped by SIGINT past it (gpumem keeps every row it measured); a
# step that fails is reported and the next one runs.
#
#   bench/tools/card_check.sh DIR [STEP...]     (default: every step, in order)
#
#   env         the card (nvidia-smi: name, memory, clocks) and gpumem info
#   bench       make bench's run: gpumem bench --profile quick, its stress
#               checks (the Makefile's BENCH_STRESS_ARGS) and the report,
#               with the wall time; DIR/bench is the run folder that
#               results/reference/<device>/ keeps (results.csv,
#               samples.csv, meta.json). The report needs gnuplot: where
#               it is missing, run gpumem plot on the folder elsewhere
#   precisions  every stream kernel in every precision against fp32
#               (bench/tools/precisions.sh) at CARD_PREC_SIZE
#   gemm        linear with m = n = k = CARD_GEMM_SIZE (the vendor GEMM at
#               8192^3 by default) in every precision the GEMMs take
#   search      the largest batch of one shape, found by the model-guided
#               search and by bisection, side by side (the oom suite's
#               searches alone: --oom-parts batch): answers, probes, time
# and three steps run only when named, the whole model's prefill and the
# peers on the same card:
#   prefill     a whole model's bf16 prefill (CARD_PREFILL_ARGS; default:
#               Llama-3-8B, batch 8 x 2048 tokens, every product by the
#               vendor GEMM, 5 timed repetitions each verified): time,
#               tokens/s and MFU, the note naming what ran each product;
#               then once more under the kernel profile: the device time
#               by kernel and vendor GEMM, and attention's share of it;
#               beside torch's forward of the same shape
#   peers       bench/tools/peers.sh at CARD_PEERS_SIZE, against the BabelStream
#               that BABELSTREAM names (a build of the user's; none: the
#               theoretical peak alone)
#   torch       bench/tools/peers/torch_card.py in plain PyTorch (python3 with
#               torch): memory, copy, matmul at 8192^3, a bf16 prefill of
#               CARD_TORCH_MODEL, and its training steps (full, LoRA,
#               QLoRA) as CARD_TORCH_RUNS lists them; DIR/torch.jsonl
#
# Writes DIR/STEP.log for each step (every command and its output), its run
# folders under DIR, and DIR/summary.txt: a line a step with its exit
# status and wall time, then the figures worth quoting, between the card's
# free memory before the first step and after the last (nvidia-smi: they
# should be the same). Exits 0 when every step exited 0, 1 when one did
# not, 2 on bad usage.
# CUDA numbers the cards by PCI bus, as nvidia-smi does (CUDA_DEVICE_ORDER,
# unless set). Settings:
#   GPUMEM             the binary (default ./gpumem)
#   CARD_BACKEND       cuda (default) or opencl; CARD_DEVICE its index (0)
#   CARD_MEM_LIMIT     --mem-limit for every run (default none: the card
#                      whole; a CPU device needs one)
#   CARD_BENCH_ARGS    options added to bench's run (e.g. --suite stream)
#   CARD_PREC_SIZE     the precisions' array size (default 1GiB)
#   CARD_PREC_PRECISIONS  their precisions (default every stream precision)
#   CARD_GEMM_SIZE     m = n = k of the GEMMs (default 8192)
#   CARD_GEMM_PRECISIONS  (default fp32,fp16,bf16,int8,fp8e4m3)
#   CARD_SEARCH_ARGS   the searched shape (default: Llama-3-8B, bf16,
#                      inference, seq 2048, one allocation a tensor)
#   CARD_PREFILL_ARGS  the prefill's shape and implementation
#   CARD_PEERS_SIZE    bytes an array for peers (default 1GiB)
#   CARD_TORCH_MODEL   a config.json (default share/models/llama-3-8b.json)
#   CARD_TORCH_RUNS    torch_card.py's runs after basics, ';' between them
#                      (default: a prefill of 8 x 2048; full training at
#                      1 x 512; LoRA and QLoRA at 2 x 2048, recompute none
#                      and full)
#   CARD_<STEP>_LIMIT  seconds a step may run (ENV 30, BENCH 330,
#                      PRECISIONS 150, GEMM 150, PEERS 120, PREFILL 180; SEARCH 100 for
#                      each of its two searches, TORCH 120 for each run)
# The limits add up to 860 s, so that a card's checks fit two runs of
# under 10 minutes (env and bench, then precisions, gemm and search). An
# H100 80GB took 290 s for them all: bench 130 s, precisions 28 s, gemm
# about 90 s (11 points of some 8 s, of which the card's 6 products of
# 8192^3 take under 0.4 s), search 38 s.
set -u
gpumem=${GPUMEM:-./gpumem}
backend=${CARD_BACKEND:-cuda}
device=${CARD_DEVICE:-0}
mem_limit=${CARD_MEM_LIMIT:-}
here=$(dirname "$0")
all_steps="env bench precisions gemm search"
named_steps="prefill peers torch"

usage() {
    echo "card_check: $*" >&2
    echo "usage: bench/tools/card_check.sh DIR [STEP...]   (steps: $all_steps; named only: $named_steps)" >&2
    exit 2
}
[ $# -ge 1 ] || usage "a folder for the logs and run folders is required"
dir=$1
shift
steps=${*:-$all_steps}
for s in $steps; do
    case " $all_steps $named_steps " in
    *" $s "*) ;;
    *) usage "unknown step '$s'" ;;
    esac
done
case $backend in
cuda | opencl) ;;
*) usage "CARD_BACKEND must be cuda or opencl (got '$backend')" ;;
esac
# Each step's time limit in seconds: CARD_<STEP>_LIMIT, else its default.
for pair in env:30 bench:330 precisions:150 gemm:150 search:100 prefill:180 peers:120 torch:120; do
    name=CARD_$(echo "${pair%%:*}" | tr '[:lower:]' '[:upper:]')_LIMIT
    v=
    eval "v=\${$name:-${pair#*:}}"
    case $v in
    '' | *[!0-9]* | 0*) usage "$name must be a whole number of seconds from 1 (got '$v')" ;;
    esac
    eval "limit_${pair%%:*}=$v"
done

[ -x "$gpumem" ] || usage "$gpumem is not an executable: build it first (make), or set GPUMEM"
# make bench's stress checks, as the Makefile declares them.
stress_args=$(sed -n 's/^BENCH_STRESS_ARGS ?= //p' "$here/../../Makefile" 2>/dev/null)
[ -n "$stress_args" ] || usage "no BENCH_STRESS_ARGS in $here/../../Makefile: run the script from its checkout"
# --device and nvidia-smi --id name the same card.
export CUDA_DEVICE_ORDER="${CUDA_DEVICE_ORDER:-PCI_BUS_ID}"
command -v timeout >/dev/null || usage "timeout (coreutils) is required"
mkdir -p "$dir" || usage "cannot create $dir"
[ -w "$dir" ] || usage "$dir is not writable"
summary=$dir/summary.txt
figures=$dir/.figures
: >"$figures" || usage "cannot write in $dir"

# Options every gpumem bench run takes: the device and the cap.
dev_opts="--backend $backend --device $device${mem_limit:+ --mem-limit $mem_limit}"

# logged COMMAND...: runs it, its command line, output and exit status
# going to the step's log; returns its exit status.
logged() {
    echo "\$ $*" >>"$log"
    "$@" >>"$log" 2>&1
    logged_rc=$?
    echo "(exit $logged_rc)" >>"$log"
    return "$logged_rc"
}

# limited SECONDS COMMAND...: logged, stopped by SIGINT past SECONDS (its
# process group: a script's gpumem too), killed 30 s later.
limited() {
    limited_s=$1
    shift
    logged timeout -s INT -k 30 "$limited_s" "$@"
}

# quote RUN METRICS [failures]: the rows of RUN/results.csv worth quoting
# (bench/tools/card_rows.awk) into the figures.
quote() {
    [ -f "$1/results.csv" ] || { echo "  (no results.csv in $1)" >>"$figures"; return 0; }
    awk -f "$here/csv.awk" -f "$here/card_rows.awk" -v metrics="$2" -v failures="${3:-0}" \
        "$1/results.csv" >>"$figures"
}

step_env() {
    if command -v nvidia-smi >/dev/null; then
        logged nvidia-smi -L
        logged nvidia-smi -q -d MEMORY,CLOCK
    else
        echo "nvidia-smi: not found" >>"$log"
    fi
    logged "$gpumem" info
}

step_bench() {
    run=$dir/bench
    # shellcheck disable=SC2086
    limited "$1" "$gpumem" bench --profile quick $dev_opts --out "$run" ${CARD_BENCH_ARGS:-}
    rc=$?
    # shellcheck disable=SC2086
    logged "$gpumem" stress $stress_args --backend "$backend" --device "$device" --out "$run/stress" ||
        [ "$rc" != 0 ] || rc=1
    echo "bench: the searches (largest batch, the model's guess, probes, time):" >>"$figures"
    quote "$run" "max_batch search_time"
    if command -v gnuplot >/dev/null; then
        logged "$gpumem" plot "$run" || [ "$rc" != 0 ] || rc=1
        if [ -f "$run/report.md" ]; then
            echo "bench: the report's opening ($run/report.md):" >>"$figures"
            sed -n '1,30p' "$run/report.md" >>"$figures"
        fi
    else
        echo "bench: no gnuplot here: gpumem plot $run where there is one" >>"$figures"
    fi
    return "$rc"
}

step_precisions() {
    # The table is bench/tools/precisions.sh's; its exit 1 (a cell under the goal) is a finding.
    limited "$1" env GPUMEM="$gpumem" PREC_BACKEND="$backend" PREC_DEVICE="$device" \
        PREC_SIZE="${CARD_PREC_SIZE:-1GiB}" PREC_ROUNDS=3 PREC_REPS=3 PREC_MEM_LIMIT="$mem_limit" \
        PREC_PRECISIONS="${CARD_PREC_PRECISIONS:-}" PREC_OUT="$dir/precisions" sh "$here/precisions.sh"
    rc=$?
    echo "precisions:" >>"$figures"
    sed -n '/^\(note: \|Each precision\|kernel \)/,/^run folder/p' "$log" >>"$figures"
    [ "$rc" = 1 ] && return 0
    return "$rc"
}

step_gemm() {
    n=${CARD_GEMM_SIZE:-8192}
    # shellcheck disable=SC2086
    limited "$1" "$gpumem" bench --suite workloads --workload linear $dev_opts \
        --batch 1 --seq "$n" --hidden "$n" --out-features "$n" \
        --precision "${CARD_GEMM_PRECISIONS:-fp32,fp16,bf16,int8,fp8e4m3}" --reps 5 --out "$dir/gemm"
    rc=$?
    echo "gemm, m = n = k = $n (the variant names the implementation):" >>"$figures"
    quote "$dir/gemm" throughput 1
    return "$rc"
}

step_search() {
    shape=${CARD_SEARCH_ARGS:---workload block --model llama-3-8b --precision bf16 --mode inference --seq 2048 --pattern per-tensor}
    rc=0
    for search in model bisect; do
        # shellcheck disable=SC2086
        limited "$1" "$gpumem" bench --suite oom --oom-parts batch $dev_opts $shape --search "$search" \
            --out "$dir/search-$search" || rc=$?
        echo "search $search:" >>"$figures"
        quote "$dir/search-$search" "max_batch max_batch_model probes search_time"
    done
    return "$rc"
}

step_prefill() {
    shape=${CARD_PREFILL_ARGS:---workload block --model llama-3-8b --precision bf16 --batch 8 --seq 2048 --variant vendor}
    # shellcheck disable=SC2086
    limited "$1" "$gpumem" bench --suite workloads $dev_opts $shape --reps 5 --warmup 1 --out "$dir/prefill"
    rc=$?
    echo "prefill (the note names what ran each product; mfu's, its basis):" >>"$figures"
    quote "$dir/prefill" "time tokens mfu" 1
    # Once more under the kernel profile (a diagnosis: its events slow the
    # run): attention's share of the device time the forward passes took
    # (the timed one and the check's replay; set-up's initialisation left
    # out), its GEMMs being the batched ones.
    # shellcheck disable=SC2086
    limited "$1" env GPUMEM_KERNEL_PROFILE=1 "$gpumem" bench --suite workloads $dev_opts $shape --reps 1 \
        --warmup 0 --out "$dir/prefill-profile" || [ "$rc" != 0 ] || rc=1
    sed -n '/^kernel profile/,$p' "$log" | awk '
        /^  / { name = $1; for (i = 2; $i != "" && $i !~ /^[0-9]+$/; i++) name = name " " $i
                ms = $(i + 2)
                if (name ~ /^(model_init|model_fill_f32|model_master_init|block_int4)/) next
                all += ms
                if (name ~ / batched$|^attention_softmax_rows|^attention_tiled/) attn += ms
                print }
        END { if (all > 0) printf "  attention: %.1f%% of the forward passes'\'' %.1f ms (its GEMMs and softmax)\n", 100 * attn / all, all }' \
        >>"$figures"
    return "$rc"
}

step_peers() {
    limited "$1" env PEERS_BACKEND="$backend" PEERS_DEVICE="$device" PEERS_ROUNDS=3 \
        PEERS_SIZE="${CARD_PEERS_SIZE:-1073741824}" BABELSTREAM="${BABELSTREAM:-}" sh "$here/peers.sh"
    rc=$?
    echo "peers (the summary of $log):" >>"$figures"
    tail -n 9 "$log" >>"$figures"
    [ "$rc" = 1 ] && return 0
    return "$rc"
}

step_torch() {
    model=${CARD_TORCH_MODEL:-$here/../../share/models/llama-3-8b.json}
    runs=${CARD_TORCH_RUNS:-"forward --batch 8 --seq 2048;train --method full --batch 1 --seq 512;\
train --method lora --batch 2 --seq 2048;train --method lora --batch 2 --seq 2048 --recompute full;\
train --method qlora --batch 2 --seq 2048;train --method qlora --batch 2 --seq 2048 --recompute full"}
    if ! python3 -c 'import torch' >>"$log" 2>&1; then
        echo "torch: python3 cannot import torch: this step needs a machine with PyTorch" >>"$figures"
        return 2
    fi
    rc=0
    limited "$1" python3 "$here/peers/torch_card.py" basics || rc=$?
    old_ifs=$IFS
    IFS=';'
    for r in $runs; do
        IFS=$old_ifs
        # shellcheck disable=SC2086 # a run is a list of words: the command, then options
        set -- "$1" $r
        cmd=$2
        lim=$1
        shift 2
        limited "$lim" python3 "$here/peers/torch_card.py" "$cmd" "$model" "$@" || rc=$?
        set -- "$lim"
        IFS=';'
    done
    IFS=$old_ifs
    out=$dir/torch.jsonl
    grep '^{' "$log" >"$out"
    echo "torch ($out):" >>"$figures"
    cat "$out" >>"$figures"
    return "$rc"
}

# free_memory WHEN: the card's free memory (nvidia-smi) into the figures.
free_memory() {
    command -v nvidia-smi >/dev/null || return 0
    echo "the card's free memory $1: $(nvidia-smi --query-gpu=memory.free --format=csv,noheader \
        --id="$device" 2>&1)" >>"$figures"
}

status=0
: >"$summary.steps"
free_memory "before the first step"
for s in $steps; do
    lim=
    eval "lim=\$limit_$s"
    log=$dir/$s.log
    : >"$log"
    start=$(date +%s)
    "step_$s" "$lim"
    rc=$?
    took=$(($(date +%s) - start))
    case $rc in
    124 | 130 | 137) how="stopped at its limit of $lim s (exit $rc)" ;;
    *) how="exit $rc" ;;
    esac
    line="$s: $how in $took s (log: $log)"
    echo "$line"
    echo "$line" >>"$summary.steps"
    [ "$rc" = 0 ] || status=1
done
free_memory "after the last step"
{ cat "$summary.steps"; echo; cat "$figures"; } >"$summary"
rm -f "$summary.steps" "$figures"
echo "summary: $summary"
exit "$status"
