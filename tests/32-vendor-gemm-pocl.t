#!/bin/sh
# The vendor GEMM beside our linear kernel on the OpenCL device: CLBlast's
# SGEMM in fp32 and its HGEMM in fp16 where the device has cl_khr_fp16,
# verified by the same check as ours (bench/workloads/linear.c; HGEMM's bound
# allows for its fp16 sums); elsewhere `unsupported` rows that say why,
# never a silent fallback: fp16 without cl_khr_fp16, fp8 (CLBlast has
# none). bf16 and int8, which CLBlast does not have at all, get no row.
# A wrong output is a mismatch row; a failing call an error row.
. tests/lib.sh
plan 14

out=$TEST_TMP/run
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload linear \
    --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --batch 1,3 --seq 16 --hidden 96 --out-features 80 \
    --reps 2 --warmup 1 --out "$out" --quiet
is "$RC" 0 "exit status 0"
[ "$RC" = 0 ] || diag "$ERR"
is "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{precision} eq "fp32" && $_->{metric} eq "time" && $_->{status} eq "ok"')" 2 \
    "CLBlast's SGEMM verifies in fp32 (m 16 and 48, n 80, k 96)"
is "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{metric} eq "throughput" && $_->{unit} eq "GFLOP/s" && $_->{value} > 0 && $_->{status} eq "ok"')" \
    "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{metric} eq "time" && $_->{status} eq "ok"')" \
    "a GFLOP/s row for every verified vendor point"
# fp16: HGEMM where the device computes in fp16, else the reason.
fp16=$(json "$out/meta.json" '$m->{device}{fp16_arithmetic} ? "yes" : "no"')
if [ "$fp16" = yes ]; then
    is "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{precision} eq "fp16" && $_->{metric} eq "time" && $_->{status} eq "ok"')" 2 \
        "fp16: the device has cl_khr_fp16, CLBlast's HGEMM verifies"
else
    dev=$(csv_value "$out/results.csv" '1' device)
    is "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{precision} eq "fp16" && $_->{metric} eq "time" && $_->{status} eq "unsupported" && $_->{note} eq "CLBlast'"'"'s HGEMM needs cl_khr_fp16, which '"$dev"' lacks"')" 2 \
        "fp16: without cl_khr_fp16 ($dev) the HGEMM row is unsupported and says why"
fi
want=$([ "$fp16" = yes ] && echo ok || echo unsupported)
is "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{precision} eq "fp16" && $_->{status} ne "'"$want"'"')" 0 \
    "fp16: no vendor row of another status (never a silent fallback)"
is "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{precision} =~ /^fp8/ && $_->{status} eq "unsupported" && $_->{note} eq "CLBlast has no fp8 GEMM"')" 4 \
    "fp8: unsupported rows, CLBlast has no fp8 GEMM"
is "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && ($_->{precision} eq "bf16" || $_->{precision} eq "int8")')" 0 \
    "bf16, int8: no vendor row (CLBlast has no such GEMM)"
is "$(csv_count "$out/results.csv" '$_->{variant} eq "blocked" && $_->{metric} eq "time" && $_->{status} eq "ok"')" 12 \
    "our kernel verifies beside it in all six precisions"
# Each verified vendor point called the GEMM once per warm-up and rep.
vendor_ok=$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{metric} eq "time" && $_->{status} eq "ok"')
is "$(json "$out/meta.json" '$m->{backend_calls}{blas_gemm}')" $((vendor_ok * 3)) \
    "meta.json counts the vendor GEMM calls (backend_calls.blas_gemm)"
is "$(json "$out/meta.json" '$m->{device}{fp16_arithmetic} ? "yes" : "no"')" "$fp16" \
    "meta.json says whether the device has fp16 arithmetic"

# The fault switch makes every vendor output wrong: mismatch rows naming the element.
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads \
    --workload linear --precision fp32,fp16 --batch 2 --seq 32 --hidden 64 --reps 1 --out "$TEST_TMP/fault" --quiet
is "$RC" 1 "a wrong vendor output makes the run exit 1"
is "$(csv_count "$TEST_TMP/fault/results.csv" '$_->{variant} eq "clblast" && $_->{status} eq "mismatch" && $_->{note} =~ /^(?:y\[\d+\]\[\d+\]: expected|y: checksums)/')" \
    "$([ "$fp16" = yes ] && echo 2 || echo 1)" "the corrupted element of the vendor's output is found"
is "$(csv_count "$TEST_TMP/fault/results.csv" '$_->{variant} eq "clblast" && $_->{status} eq "ok"')" 0 \
    "no vendor row passes with a wrong output"

# A vendor call that fails (here: out of memory at its first call) is that point's row, not the run's end.
GPUMEM_BACKEND_FAULT=blas_gemm:1:oom run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads \
    --workload linear --precision fp32 --batch 1,2 --seq 16 --hidden 64 --reps 1 --warmup 0 --out "$TEST_TMP/oom" --quiet
is "$(csv_count "$TEST_TMP/oom/results.csv" '$_->{variant} eq "clblast" && $_->{metric} eq "time" && $_->{status} eq "ok"') $(csv_count "$TEST_TMP/oom/results.csv" '$_->{variant} eq "clblast" && $_->{status} eq "oom" && $_->{note} =~ /injected fault at blas_gemm call 1/')" \
    "1 1" "a failed vendor call is an oom row naming it; the next point runs"
done_testing
