#!/bin/sh
# --device all runs one worker per device (three PoCL CPU devices), each
# into its own run folder with every row tagged with the device's identity;
# gpumem fleet merges them, and flags a run slowed for real (PoCL on one
# thread, kernels unoptimised) beside two normal ones, and only it; bad input is exit 2
# naming the file and line; 300 run folders are read in one pass.
. tests/lib.sh
plan 23

small="--backend opencl --mem-limit 32MiB --suite stream --sizes 1MiB --kernels triad --precision fp32 --reps 3 --quiet"
all=$TEST_TMP/all
POCL_DEVICES="pthread pthread pthread" run_gpumem bench $small --device all --serial --out "$all"
is "$RC" 0 "--device all: exit status 0"
is "$(ls -d "$all"/device*/results.csv 2>/dev/null | wc -l)" 3 "one run folder per device"
is "$(csv_count "$all/devices.csv" '$_->{exit_status} eq "0" && $_->{folder} =~ /^device[0-2]$/')" 3 \
    "devices.csv lists the three, each complete"
ids=$(for d in 0 1 2; do csv_value "$all/devices.csv" "\$_->{index} eq '$d'" device_id; done | sort -u | wc -l)
is "$ids" 3 "three distinct device identities"
tagged=0
for d in 0 1 2; do
    id=$(csv_value "$all/devices.csv" "\$_->{index} eq '$d'" device_id)
    rows=$(csv_count "$all/device$d/results.csv" '1')
    [ "$rows" -gt 0 ] && [ "$(csv_count "$all/device$d/results.csv" "\$_->{device_id} eq '$id'")" = "$rows" ] && tagged=$((tagged + 1))
done
is "$tagged" 3 "every row of each device carries that device's identity"
like "$(cat "$all/device1/meta.json")" '"uuid": "opencl:[0-9a-f]{8}:1"' "meta.json names the device's identity"

POCL_DEVICES="pthread pthread" run_gpumem bench $small --device 0,2 --out "$TEST_TMP/bad"
is "$RC" 2 "a device that does not exist in a list: exit status 2"
like "$ERR" "--device '0,2': '2' is not a device \(0 to 1, or all\)" "naming it and what exists"

# A device whose worker fails (its folder already holds a run) does not
# stop the others.
mkdir -p "$TEST_TMP/fail/device1" && echo taken >"$TEST_TMP/fail/device1/results.csv"
POCL_DEVICES="pthread pthread" run_gpumem bench $small --device all --out "$TEST_TMP/fail"
is "$RC" 2 "a worker that fails: the run's exit status is its own"
is "$(csv_count "$TEST_TMP/fail/devices.csv" '$_->{index} eq "1" && $_->{exit_status} eq "2"'):$(csv_count "$TEST_TMP/fail/device0/results.csv" '$_->{status} eq "ok"')" \
    "1:3" "devices.csv says so, and the other device measured its points (bandwidth, time, verify_time)"
like "$(cat "$TEST_TMP/fail/device1/bench.log")" "already holds a (run|results.csv)|cannot create" "the worker's log says why"

run_gpumem fleet "$all" --outlier-mad 1000 --format csv
is "$RC" 0 "fleet: nothing past the threshold, exit status 0"
is "$(printf '%s\n' "$OUT" | head -1)" \
    "gpu,host,device_id,device,run_dir,suite,workload,variant,pattern,precision,mode,batch,seq_len,bytes,metric,unit,value,fleet_median,scale,deviation,better,flagged" \
    "fleet CSV has the documented columns"
printf '%s\n' "$OUT" >"$TEST_TMP/fleet.csv"
is "$(csv_count "$TEST_TMP/fleet.csv" '$_->{metric} eq "time" && $_->{better} eq "lower"')" 3 "a point per device, time judged lower-is-better"

# An outlier for real: two devices, and a run slowed down for real: PoCL
# on one thread, its kernels built without optimisation.
work="--backend opencl --mem-limit 64MiB --suite stream --sizes 4MiB --kernels triad,dot --precision fp32 --reps 9 --quiet"
fleet=$TEST_TMP/fleet
POCL_DEVICES="pthread pthread" run_gpumem bench $work --device all --serial --out "$fleet/normal"
normal_rc=$RC
POCL_MAX_PTHREAD_COUNT=1 POCL_EXTRA_BUILD_FLAGS=-cl-opt-disable run_gpumem bench $work --out "$fleet/slow"
is "$normal_rc-$RC" "0-0" "two devices and a slowed run"
run_gpumem fleet "$fleet" --out "$TEST_TMP/report"
is "$RC" 1 "fleet: exit status 1, a GPU was flagged"
note "$OUT"
like "$OUT" "^3 +\S+ +\S+ +\S+/slow +[0-9]+ +[1-9][0-9]* " "the slowed run is flagged"
like "$OUT" "^1 +\S+ +\S+ +\S+/device0 +[0-9]+ +0 .*\n2 +\S+ +\S+ +\S+/device1 +[0-9]+ +0 " "and neither normal one"
[ -s "$TEST_TMP/report/fleet.csv" ] && grep -q '^## GPUs' "$TEST_TMP/report/fleet.md"
ok $? "--out writes fleet.csv and fleet.md"

# Bad input names the file and line.
mkdir -p "$TEST_TMP/cut/r" && cp "$all/device0/meta.json" "$TEST_TMP/cut/r/"
head -c $(($(head -1 "$all/device0/results.csv" | wc -c) + 60)) "$all/device0/results.csv" >"$TEST_TMP/cut/r/results.csv"
run_gpumem fleet "$TEST_TMP/cut"
is "$RC" 2 "a truncated results.csv: exit status 2"
like "$ERR" "cut/r/results.csv:2: truncated line" "naming the file and line"
run_gpumem fleet "$TEST_TMP/report"
like "$RC:$ERR" "^2:.*no run folder" "a folder without runs: exit status 2"

# Hundreds of run folders: each read once.
mkdir -p "$TEST_TMP/many"
for i in $(seq 1 300); do cp -r "$all/device$((i % 3))" "$TEST_TMP/many/run$i"; done
start=$(date +%s)
run_gpumem fleet "$TEST_TMP/many" --format csv
took=$(($(date +%s) - start))
like "$ERR" "300 run folders, 900 rows" "300 run folders merged (in ${took}s): 3 rows each"
