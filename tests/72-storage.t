#!/bin/sh
# Storage faults and the run folder's lock. A full filesystem (a small
# tmpfs) or a folder the OS refuses stops the run at once with one message
# naming the file and the OS error, exit 4, every row written before
# intact. (Tests run as root, where chmod does not stop writes, so the
# refused folder is a read-only tmpfs where mounting works, and always a
# path under a regular file. ulimit -f is no use here: PoCL itself writes
# files and dies on the limit.) A second run on a folder in use is refused
# with exit 2 naming the first; --resume refuses what it cannot continue.
. tests/lib.sh
. tests/lib_files.sh
plan 25

A="bench --backend opencl --mem-limit 32MiB --suite stream --sizes 64KiB:1MiB:x2 --precision fp32,fp16
   --kernels copy,triad,dot --reps 3 --warmup 0 --quiet"
# The same points measured long enough (seconds) that a run is still under
# way while the lock checks below start gpumem twice beside it.
LONG="$A --reps 40"

# A full filesystem.
mnt=$TEST_TMP/small
mkdir -p "$mnt"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$TEST_TMP"' EXIT
if mount -t tmpfs -o size=32k tmpfs "$mnt" 2>/dev/null; then
    run_gpumem $A --out "$mnt/run"
    is "$RC" 4 "full filesystem: exit status 4"
    is "$(printf '%s\n' "$ERR" | grep -c .)" 1 "full filesystem: one line on stderr"
    like "$ERR" "stopped: cannot write $mnt/run/(results|samples)\.csv: No space left on device" \
        "full filesystem: the message names the file and the OS error"
    rows=$(csv_count "$mnt/run/results.csv" 1)
    ok "$([ "$(csv_whole "$mnt/run/results.csv")" = ok ] && [ "$(csv_whole "$mnt/run/samples.csv")" = ok ] \
          && [ "$rows" -gt 0 ]; echo $?)" "full filesystem: the $rows rows written before are whole"
    is "$(csv_count "$mnt/run/results.csv" '$_->{status} ne "ok" || $_->{value} eq ""')" 0 \
        "full filesystem: every row written is a complete measurement"
    umount "$mnt"
    mount -t tmpfs -o ro,size=24k tmpfs "$mnt"
    run_gpumem $A --out "$mnt/run"
    is "$RC" 4 "read-only filesystem: exit status 4"
    like "$ERR" "cannot create output folder $mnt/run: Read-only file system" "read-only filesystem: the message"
    umount "$mnt"
else
    for i in 1 2 3 4 5 6 7; do skip "cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN)"; done
fi

# A folder under a regular file.
: >"$TEST_TMP/plain"
run_gpumem $A --out "$TEST_TMP/plain/run"
is "$RC" 4 "folder under a regular file: exit status 4"
like "$ERR" "cannot create output folder $TEST_TMP/plain/run: Not a directory" "folder under a regular file: the message"

# The lock: a second run on a folder in use is refused, naming the first.
run=$TEST_TMP/locked
"$GPUMEM" $LONG --out "$run" >/dev/null 2>&1 &
pid=$!
n=0
while [ ! -s "$run/lock" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
run_gpumem $A --out "$run"
is "$RC" 2 "second run on a folder in use: exit status 2"
like "$ERR" "run folder $run is in use by another gpumem \(pid $pid on .*, started [0-9T:Z-]+\)" \
    "second run: the message names the first's pid and start"
run_gpumem bench --resume "$run"
is "$RC" 2 "--resume of a run in progress: exit status 2"
like "$ERR" "in use by another gpumem \(pid $pid " "--resume of a run in progress: names the holder"
wait $pid
is "$?" 0 "the first run is untouched by them and completes"
is "$(csv_whole "$run/results.csv")" ok "its results.csv whole"

# A stale lock (its process killed) is taken over by --resume.
"$GPUMEM" $LONG --out "$TEST_TMP/stale" >/dev/null 2>&1 &
pid=$!
n=0
while ! grep -q '^point ' "$TEST_TMP/stale/points.journal" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
kill -9 $pid
wait $pid 2>/dev/null
like "$(cat "$TEST_TMP/stale/lock")" "^pid $pid " "a killed run leaves its lock file behind"
run_gpumem bench --resume "$TEST_TMP/stale" --quiet
is "$RC" 0 "--resume takes over the stale lock and finishes the run"

# What --resume refuses (exit 2, one message).
expect_refusal() {
    desc=$1 re=$2
    shift 2
    run_gpumem bench --resume "$@"
    is "$RC" 2 "--resume $desc: exit status 2"
    like "$ERR" "$re" "--resume $desc: the message"
}
mkdir -p "$TEST_TMP/empty"
expect_refusal "a folder that is not a run" "is not a gpumem bench run" "$TEST_TMP/empty"
expect_refusal "a completed run" "attempted every point \(status complete\)" "$TEST_TMP/stale"
cp -r "$TEST_TMP/locked" "$TEST_TMP/other"
sed -i '$d' "$TEST_TMP/other/points.journal"
sed -i '1s/ [^ ]*$/ 0.0-other/' "$TEST_TMP/other/points.journal"
expect_refusal "a run of another version" "written by another version .*suite 0\.0-other" "$TEST_TMP/other"
cp -r "$TEST_TMP/locked" "$TEST_TMP/corrupt"
sed -i '$d' "$TEST_TMP/corrupt/points.journal"
sed -i '3s/.*/point 7 garbage/' "$TEST_TMP/corrupt/points.journal"
expect_refusal "a corrupt journal" "points.journal is corrupt \(line 3: " "$TEST_TMP/corrupt"
