#!/bin/sh
# Device faults through the backend shim (GPUMEM_BACKEND_FAULT=OP:N:MODE):
# every op of the backend table (trim too: each point ends with one; queue_hold,
# before each timed rep of a kernel) fails
# as a lost device at an early and at a later call of a small real bench
# run (and of a stress run for the ops stress uses), and allocations fail
# as out of memory. A lost device must give `error` rows naming the fault,
# an intact results.csv, meta.json status device-lost, no leaked device
# objects, and exit status 3; never a crash (status >= 128).
. tests/lib.sh

BENCH="bench --backend opencl --mem-limit 64MiB --suite stream,workloads,swap --precision fp32
       --sizes 1MiB --kernels copy,dot --reps 1 --warmup 0 --workload linear --batch 1 --seq 16
       --hidden 64 --pattern per-tensor,monolithic --blocks 64KiB --kv-block-sizes 64KiB --swap-batch 1
       --unified-sizes 1MiB --layers 1 --heads 2 --head-dim 32 --quiet"
STRESS="stress --backend opencl --mem-limit 32MiB --duration 0.5 --checks memtest,churn,oom-recovery,concurrency"

# csv_intact FILE : every line of the CSV has the header's field count.
csv_intact() {
    perl -e "$CSV_PERL"'
        open my $fh, "<", $ARGV[0] or exit 1; my @h = parse(scalar(<$fh>) =~ s/\r?\n$//r);
        while (my $l = <$fh>) { chomp $l; my @f = parse($l); exit 1 if @f != @h } exit 0' "$1"
}

# lost_ok NAME DIR OP N : the checks every lost-device run must pass.
lost_ok() {
    why=""
    [ "$RC" -eq 3 ] || why="$why exit status $RC, want 3;"
    [ -f "$2/results.csv" ] && csv_intact "$2/results.csv" || why="$why results.csv missing or torn;"
    [ "$(json "$2/meta.json" '$m->{status}')" = device-lost ] || why="$why meta.json status not device-lost;"
    [ "$(json "$2/meta.json" '$m->{device_leak_check}{result}')" = ok ] || why="$why device objects leaked;"
    note="device lost (injected fault at $3 call $4)"
    [ "$(csv_count "$2/results.csv" "\$_->{status} eq 'error' && index(\$_->{note}, '$note') >= 0")" -ge 1 ] ||
        why="$why no error row noting '$note';"
    case $ERR in *"$note"*) ;; *) why="$why stderr does not name the fault;" ;; esac
    if [ -z "$why" ]; then ok 0 "$1"; else ok 1 "$1"; diag "$why" "$ERR"; fi
}

# A clean run: how often it calls each op.
run_gpumem $BENCH --out "$TEST_TMP/clean"
is "$RC" 0 "a clean bench run: exit status 0"
is "$(json "$TEST_TMP/clean/meta.json" '$m->{device_leak_check}{result}')" ok "a clean bench run leaks nothing"
ops="mem_info alloc view copy map unmap prefetch program_build kernel_get launch event_record event_elapsed_ms synchronize blas_gemm trim queue_hold"
for op in $ops; do
    calls=$(json "$TEST_TMP/clean/meta.json" "\$m->{backend_calls}{$op}")
    if [ "${calls:-0}" -lt 1 ]; then
        ok 1 "bench calls $op"
        continue
    fi
    later=$((calls / 2 + 1))
    for n in 1 $later; do
        # Under the sanitizers the later call alone (mid-run, the most
        # to release); the plain pass loses each op at both.
        if [ "$n" = 1 ] && [ "$later" != 1 ] && sanitizer_pass; then
            skip "bench, $op lost at call 1: the plain pass runs it"
            continue
        fi
        dir="$TEST_TMP/$op-$n"
        GPUMEM_BACKEND_FAULT=$op:$n:lost run_gpumem $BENCH --out "$dir"
        lost_ok "bench, $op lost at call $n of $calls: error rows, status device-lost, exit 3" "$dir" "$op" "$n"
    done
done

# Out of memory at an allocation: an oom row, the run goes on.
calls=$(json "$TEST_TMP/clean/meta.json" '$m->{backend_calls}{alloc}')
for n in 1 $((calls / 2 + 1)); do
    dir="$TEST_TMP/oom-$n"
    GPUMEM_BACKEND_FAULT=alloc:$n:oom run_gpumem $BENCH --out "$dir"
    is "$RC" 0 "bench, alloc out of memory at call $n: exit status 0"
    got=$(csv_count "$dir/results.csv" "\$_->{status} eq 'oom' && \$_->{note} =~ /out of memory \\(injected fault at alloc call $n\\)/")
    ok $((got < 1)) "bench, alloc out of memory at call $n: oom rows noting it ($got)"
    is "$(json "$dir/meta.json" '$m->{status} . " " . $m->{device_leak_check}{result}')" "complete ok" \
        "bench, alloc out of memory at call $n: run complete, nothing leaked"
done

# The device lost while it opens.
GPUMEM_BACKEND_FAULT=open:1:lost run_gpumem $BENCH --out "$TEST_TMP/open"
is "$RC" 3 "bench, the device lost at open: exit status 3"
like "$ERR" 'cannot open opencl device 0: device lost \(injected fault at open call 1\)' "bench, lost at open: says so"

# The oom suite's probe workers inherit the switch.
OOM="bench --backend opencl --suite oom --mem-limit 16MiB --workload linear --precision fp32 --seq 16 --hidden 32
     --pattern per-tensor --quiet"
GPUMEM_BACKEND_FAULT=alloc:3:lost run_gpumem $OOM --out "$TEST_TMP/oom-worker"
lost_ok "oom suite, a worker's alloc lost at call 3: error row, status device-lost, exit 3" "$TEST_TMP/oom-worker" alloc 3

# Stress: the ops its checks call, lost early and later.
run_gpumem $STRESS --out "$TEST_TMP/stress-clean"
is "$RC" 0 "a clean stress run: exit status 0"
is "$(json "$TEST_TMP/stress-clean/meta.json" '$m->{device_leak_check}{result}')" ok "a clean stress run leaks nothing"
for op in fill alloc copy launch synchronize program_build kernel_get; do
    calls=$(json "$TEST_TMP/stress-clean/meta.json" "\$m->{backend_calls}{$op}")
    later=$((calls / 2 + 1))
    [ "$later" -gt 1 ] || later=""
    for n in 1 $later; do
        [ "$n" -le "${calls:-0}" ] || continue
        # Churn runs for --duration: a loaded host makes fewer calls than
        # the clean run did, and a run that ended before call n is run
        # again with n at half the calls it made (at most twice).
        for try in 1 2 3; do
            dir="$TEST_TMP/stress-$op-$n-$try"
            GPUMEM_BACKEND_FAULT=$op:$n:lost run_gpumem $STRESS --out "$dir"
            made=$(json "$dir/meta.json" "\$m->{backend_calls}{$op}")
            [ "$RC" -eq 0 ] && [ "${made:-0}" -lt "$n" ] && [ "$try" -lt 3 ] || break
            diag "stress, $op: the run made $made calls, short of $n: again at call $((made / 2 + 1))"
            n=$((made / 2 + 1))
        done
        why=""
        [ "$RC" -eq 3 ] || why="$why exit status $RC, want 3;"
        [ "$(json "$dir/meta.json" '$m->{status} . " " . $m->{device_leak_check}{result}')" = "device-lost ok" ] ||
            why="$why meta.json not device-lost with no leak;"
        grep -q "^not ok .*" "$dir/stress.tap" && grep -q "device lost (injected fault at $op call $n)" "$dir/stress.tap" ||
            why="$why no failed check naming the fault in stress.tap;"
        if [ -z "$why" ]; then ok 0 "stress, $op lost at call $n of $calls: failed checks, device-lost, exit 3"
        else ok 1 "stress, $op lost at call $n of $calls"; diag "$why" "$ERR"; fi
    done
done

# A switch that does not parse is refused before anything runs.
GPUMEM_BACKEND_FAULT=alloc:x:lost run_gpumem $BENCH --out "$TEST_TMP/bad"
is "$RC" 2 "a malformed GPUMEM_BACKEND_FAULT: exit status 2"
like "$ERR" "GPUMEM_BACKEND_FAULT 'alloc:x:lost': the call number" "a malformed switch: one clear message"
GPUMEM_BACKEND_FAULT=free:1:lost run_gpumem $STRESS --out "$TEST_TMP/bad2"
is "$RC" 2 "free cannot be lost, only leak: exit status 2"

plan "$_tap_n"
done_testing
