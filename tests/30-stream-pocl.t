#!/bin/sh
# Every stream kernel in every precision (fp8 included) and both access patterns runs for
# real on the OpenCL device (PoCL on the CPU) and is verified; the run
# folder holds the documented files and columns.
. tests/lib.sh
plan 22

out=$TEST_TMP/run
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite stream \
    --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --access both --sizes 1MiB,1572868 --reps 2 --warmup 1 \
    --out "$out" --quiet
is "$RC" 0 "stream on OpenCL: exit status 0"
[ -n "$ERR" ] && diag "$ERR"

# 7 kernels x 6 precisions x 2 access patterns x 2 sizes, three metrics each
# (bandwidth, time, and verify_time: the whole-output check's)
# (1572868 bytes: a tail past the last whole 16-byte vector in every
# precision but fp32).
is "$(csv_count "$out/results.csv" '$_->{status} eq "ok"')" 504 "every point ok (504 rows)"
is "$(csv_count "$out/results.csv" '$_->{status} ne "ok"')" 0 "no row failed"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "bandwidth" && $_->{unit} eq "GB/s" && $_->{value} > 0')" 168 \
    "a positive bandwidth for every point"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "bandwidth" && $_->{min} <= $_->{value} && $_->{value} <= $_->{max}')" 168 \
    "min <= median <= max"
for p in fp32 fp16 bf16 int8 fp8e4m3 fp8e5m2; do
    is "$(csv_count "$out/results.csv" "\$_->{precision} eq '$p' && \$_->{metric} eq 'bandwidth'")" 28 "$p: 28 verified points"
done
is "$(head -1 "$out/results.csv")" \
    "schema_version,run_id,backend,device,device_id,suite,workload,variant,pattern,precision,weight_precision,kv_precision,activation_precision,model,mode,batch,seq_len,bytes,model_bytes,measured_bytes,metric,unit,value,min,max,stdev,reps,status,note" \
    "results.csv has the documented columns"
is "$(head -1 "$out/samples.csv")" \
    "schema_version,run_id,backend,device,device_id,suite,workload,variant,pattern,precision,weight_precision,kv_precision,activation_precision,model,mode,batch,seq_len,bytes,model_bytes,measured_bytes,metric,unit,rep,value,round" \
    "samples.csv has the documented columns"
# Every repetition of every metric is in samples.csv.
is "$(csv_count "$out/samples.csv" '1')" 840 \
    "samples.csv holds every repetition (336 rows x 2 reps, and each verify_time row's one: the first rep's)"
perl -MJSON::PP -e '
    local $/; open my $f, "<", $ARGV[0] or die; my $m = decode_json(<$f>);
    for my $k (qw(run_id suite_version command_line start_time end_time host device)) { die "no $k\n" unless defined $m->{$k} }
    die "status $m->{status}\n" unless $m->{status} eq "complete";
    die "no device name\n" unless $m->{device}{name} ne "";
    die "no cap\n" unless $m->{device}{mem_limit_bytes} == 512 * 1048576;
' "$out/meta.json" 2>"$TEST_TMP/json.err"
ok $? "meta.json parses and holds host, device, versions, times and the cap"
[ -s "$TEST_TMP/json.err" ] && diag "$(cat "$TEST_TMP/json.err")"

# Arrays past the last-level cache: the kernels that write store past the
# caches (kernels/stream.cl gm_store16_nt); every one still verifies, the
# tail included (20 bytes past the cache: 5 fp32 elements past it).
llc=$(perl -MJSON::PP -e 'local $/; open my $f, "<", $ARGV[0] or die; print decode_json(<$f>)->{device}{llc_bytes} // 0' "$out/meta.json")
if [ "${llc:-0}" -gt 0 ] && [ "$llc" -le $((64 << 20)) ]; then
    run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite stream --kernels write,copy,scale,add,triad \
        --precision fp32,bf16,int8,fp8e4m3 --access both --sizes $((llc + 20)) --reps 1 --warmup 0 \
        --out "$TEST_TMP/past" --quiet
    is "$RC" 0 "arrays past the ${llc}-byte last-level cache: exit status 0"
    is "$(csv_count "$TEST_TMP/past/results.csv" '$_->{status} eq "ok" && $_->{metric} eq "bandwidth"')" 40 \
        "every store kernel verifies with streaming stores (5 kernels x 4 precisions x 2 access patterns)"
else
    skip "last-level cache unknown or over 64MiB (${llc:-0} bytes): arrays past it do not fit the test's cap"
    skip "as above"
fi

# Short kernels launch back to back within a rep (bench/stream/stream.c): 4KiB
# arrays take microseconds a launch, so a rep launches them many times, says
# so in the note, and reports one launch's time; the output still verifies.
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite stream --kernels copy,triad,dot \
    --precision fp32 --sizes 4KiB,32MiB --reps 3 --out "$TEST_TMP/short" --quiet
is "$(csv_count "$TEST_TMP/short/results.csv" '$_->{bytes} == 4096 && $_->{status} eq "ok" && $_->{metric} eq "bandwidth" && $_->{note} =~ /^(\d+) launches back to back a rep/ && $1 > 1 && $1 <= 64')" 3 \
    "4KiB arrays: every kernel launches 2 to 64 times a rep, verified"
is "$(csv_count "$TEST_TMP/short/results.csv" '$_->{bytes} == 4096 && $_->{metric} eq "time" && $_->{value} < 0.25')" 3 \
    "the time row is one launch's, below the rep's 0.25ms target"
is "$(csv_count "$TEST_TMP/short/results.csv" '$_->{bytes} == 33554432 && $_->{status} eq "ok" && $_->{metric} ne "verify_time" && $_->{note} eq ""')" 6 \
    "32MiB arrays (milliseconds a launch on the CPU) launch once a rep, with no note"

# A run that cannot fit under its cap records oom rows and goes on.
run_gpumem bench --backend opencl --mem-limit 8MiB --suite stream --sizes 1MiB,4MiB --precision fp32 \
    --kernels copy --reps 1 --out "$TEST_TMP/cap" --quiet
is "$(csv_count "$TEST_TMP/cap/results.csv" '$_->{status} eq "oom" && $_->{bytes} == 4194304')" 1 \
    "arrays beyond --mem-limit give an oom row"
is "$(csv_count "$TEST_TMP/cap/results.csv" '$_->{status} eq "ok" && $_->{bytes} == 1048576')" 3 \
    "the smaller size before it still measured"
done_testing
