#!/bin/sh
# The Slurm path end to end on one machine: munged with a throwaway key,
# slurmctld and slurmd on localhost with a throwaway slurm.conf (free
# ports, state, spool and logs in the test's folder), the batch script
# scripts/slurm/gpumem.sbatch submitted with two tasks on PoCL; task 1 is
# slowed for real through the script's documented hook (GPUMEM_TASK_SETUP:
# PoCL on one thread, its kernels built without optimisation). gpumem fleet
# merges both run folders and flags the slow task's GPU, and only it.
# Every daemon started here is stopped at the end, pass or fail. Skips
# where Slurm or munge is missing or cannot start.
. tests/lib.sh
plain_pass_only "the fleet's dispatch is Slurm's"

sbin=/usr/sbin
for tool in "$sbin/munged" "$sbin/slurmctld" "$sbin/slurmd"; do
    [ -x "$tool" ] || skip_all "$tool not installed (Debian: slurm-wlm and munge; make test installs them as root)"
done
for tool in sbatch sinfo squeue scancel munge; do
    command -v $tool >/dev/null || skip_all "$tool not installed (Debian: slurm-wlm and munge)"
done
[ "$(id -u)" = 0 ] || skip_all "the throwaway Slurm runs its daemons as root (SlurmUser=root)"

S=$TEST_TMP/slurm
mkdir -p "$S/state" "$S/spool" "$S/log" "$S/results"
pids=""
stop_all() {
    if [ -n "${SLURM_CONF:-}" ] && [ -n "${job:-}" ]; then scancel "$job" 2>/dev/null; fi
    for p in $pids; do kill "$p" 2>/dev/null; done
    # Each daemon is this shell's child: wait reaps it, a KILL after 10 s
    # if it ignores TERM.
    for p in $pids; do
        (sleep 10; kill -9 "$p" 2>/dev/null) >/dev/null 2>&1 &
        killer=$!
        wait "$p" 2>/dev/null
        kill "$killer" 2>/dev/null
    done
    rm -rf "$TEST_TMP"
}
trap stop_all EXIT

free_port() {
    perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0) or exit 1; print $s->sockport'
}
log_tail() { tail -n 3 "$@" 2>/dev/null | tr '\n' ' ' | cut -c1-300; }

# munge: a throwaway key and socket.
head -c 1024 /dev/urandom >"$S/munge.key" && chmod 400 "$S/munge.key"
"$sbin/munged" -F --force --socket="$S/munge.sock" --key-file="$S/munge.key" --log-file="$S/log/munged.log" \
    --pid-file="$S/munged.pid" --seed-file="$S/munged.seed" >"$S/log/munged.out" 2>&1 &
pids="$pids $!"
i=0
until munge -S "$S/munge.sock" -n 2>/dev/null | unmunge -S "$S/munge.sock" >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 50 ] || skip_all "munged did not start: $(log_tail "$S/log/munged.out")"
    sleep 0.2
done

host=$(hostname -s)
ctld_port=$(free_port) && slurmd_port=$(free_port) || skip_all "no free TCP port on 127.0.0.1"
cat >"$S/slurm.conf" <<CONF
ClusterName=gpumemtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=gpumemtest Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF="$S/slurm.conf"
"$sbin/slurmctld" -D -i -f "$SLURM_CONF" >"$S/log/slurmctld.out" 2>&1 &
pids="$pids $!"
"$sbin/slurmd" -D -N "$host" -f "$SLURM_CONF" >"$S/log/slurmd.out" 2>&1 &
pids="$pids $!"
i=0
until sinfo -h -o '%t' 2>/dev/null | grep -qx 'idle'; do
    i=$((i + 1))
    [ $i -lt 100 ] || skip_all "Slurm did not start: $(log_tail "$S/log/slurmctld.log" "$S/log/slurmd.log")"
    sleep 0.2
done

plan 9

# The hook: task 1 gets PoCL on one thread with unoptimised kernels.
cat >"$S/slow-task1.sh" <<'HOOK'
if [ "$SLURM_PROCID" = 1 ]; then
    export POCL_MAX_PTHREAD_COUNT=1 POCL_EXTRA_BUILD_FLAGS=-cl-opt-disable
fi
HOOK
gpumem_abs=$(cd "$(dirname "$GPUMEM")" && pwd)/$(basename "$GPUMEM")
job=$(GPUMEM="$gpumem_abs" GPUMEM_RESULTS="$S/results" GPUMEM_TASK_SETUP="$S/slow-task1.sh" \
    GPUMEM_ARGS="--backend opencl --mem-limit 64MiB --suite stream --sizes 4MiB --kernels triad,dot --precision fp32 --reps 9" \
    sbatch --parsable --ntasks=2 --output="$S/job.out" scripts/slurm/gpumem.sbatch 2>"$S/sbatch.err")
like "$job" '^[0-9]+$' "sbatch accepts the batch script (job $job)"
i=0
while squeue -h -j "$job" 2>/dev/null | grep -q .; do
    i=$((i + 1))
    [ $i -lt 600 ] || break
    sleep 0.2
done
is "$(squeue -h -j "$job" 2>/dev/null | wc -l)" 0 "the job finishes within two minutes"
like "$(cat "$S/job.out" 2>/dev/null)" "tasks done \(srun exit status 0\)" "both tasks exit 0"
task0="$S/results/$host-$job-task0"
task1="$S/results/$host-$job-task1"
[ -s "$task0/results.csv" ] && [ -s "$task1/results.csv" ] && [ -s "$task0/meta.json" ] && [ -s "$task1/meta.json" ]
ok $? "each task wrote its own run folder <host>-<job>-task<N>"
is "$(csv_count "$task0/results.csv" '$_->{status} eq "ok"')-$(csv_count "$task1/results.csv" '$_->{status} eq "ok"')" \
    "6-6" "each measured its two points' three rows (bandwidth, time, verify_time)"

run_gpumem fleet "$S/results" --format markdown
is "$RC" 1 "gpumem fleet: exit status 1, a GPU flagged"
note "$OUT"
like "$OUT" "^\| 2 \| $host \| \S+ \| \S+/$host-$job-task1 \| 4 \| [1-4] \|" "the slowed task's GPU is flagged"
like "$OUT" "^\| 1 \| $host \| \S+ \| \S+/$host-$job-task0 \| 4 \| 0 \|" "and the other is not"
like "$OUT" "^# fleet \S+: 2 GPUs, 6 points, 1 GPU flagged" "one GPU of two flagged"
