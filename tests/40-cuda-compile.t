#!/bin/sh
# Every CUDA kernel variant compiles, warning-free (nvcc -Werror
# all-warnings, ptxas -Werror), to machine code for every architecture in
# kernels/variants.mk (sm_75, sm_80, sm_90); the cubins are checked to be
# CUDA ELF for that architecture; and the binary embeds every variant.
. tests/lib.sh
NVCC=${NVCC:-$(command -v nvcc || true)}
[ -n "$NVCC" ] || skip_all "nvcc not found: the CUDA backend is not built"
variants=$(make -s print-cuda-variants)
archs=$(make -s print-cuda-archs)
n_variants=$(echo "$variants" | wc -l)
n_archs=$(echo $archs | wc -w)
plan $((n_variants * n_archs * 2 + 2))

# compile PROGRAM.VARIANT ARCH: one cubin, its log beside it.
jobs=$TEST_TMP/jobs
for v in $variants; do for a in $archs; do echo "$v $a"; done; done >"$jobs"
export NVCC TEST_TMP
xargs -P 2 -L 1 sh -c '
    v=$0 a=$1 prog=${0%%.*} variant=${0#*.}
    defines=$(echo "$variant" | tr a-z A-Z | tr "-" "\n" | sed "s/^/-DGM_/; s/\$/=1/" | tr "\n" " ")
    "$NVCC" -x cu -std=c++14 -O3 -Werror all-warnings -Xptxas -Werror -include kernels/gm_portable.h \
        $defines -cubin -arch=sm_$a -o "$TEST_TMP/$v.sm_$a.cubin" "kernels/$prog.cl" \
        >"$TEST_TMP/$v.sm_$a.log" 2>&1
    echo $? >"$TEST_TMP/$v.sm_$a.rc"' <"$jobs"

# elf_sm FILE: prints "MACHINE SM" from the ELF header (EM_CUDA is 190;
# the SM version is bits 8-15 of e_flags).
elf_sm() {
    machine=$(od -A n -t u2 -j 18 -N 2 "$1" | tr -d ' ')
    flags=$(od -A n -t u4 -j 48 -N 4 "$1" | tr -d ' ')
    echo "$machine $(( (flags >> 8) & 255 ))"
}
for v in $variants; do
    for a in $archs; do
        base=$TEST_TMP/$v.sm_$a
        rc=$(cat "$base.rc" 2>/dev/null || echo 99)
        [ "$rc" = 0 ] && [ ! -s "$base.log" ]
        ok $? "$v compiles for sm_$a with no warning"
        [ -s "$base.log" ] && diag "$(head -20 "$base.log")"
        if [ "$rc" = 0 ]; then is "$(elf_sm "$base.cubin")" "190 $a" "$v: the cubin is CUDA machine code for sm_$a"; else ok 1 "$v: no cubin for sm_$a"; fi
    done
done
# The binary carries one image per variant (the names the backend looks up).
table=$GM_BUILD/gen/kernel_table.c
got=$(sed -n '/gm_cuda_images\[\]/,/^};/p' "$table" 2>/dev/null | grep -o '{"[^"]*"' | tr -d '{"' | sort | tr '\n' ' ')
is "$got" "$(echo "$variants" | sort | tr '\n' ' ')" "gpumem embeds exactly the variants built"
# No kernel's stack frame (as ptxas reports it) exceeds CUDA's default
# per-thread stack of 1 KiB, so no first launch grows the context's local
# memory after the leak check's snapshot (attention_tiled keeps one
# GM_ATTN_MAX_DIM array: 1024 bytes); the binary reserves the largest one
# at open all the same (gm_cuda_stack_bytes).
stack=$(sed -n 's/^const size_t gm_cuda_stack_bytes = \([0-9]*\);/\1/p' "$table" 2>/dev/null)
want=$(cat build/cuda/*.ptxas.log 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\) bytes stack frame.*/\1/p' | sort -n | tail -1)
[ -n "$stack" ] && [ "$stack" = "$want" ] && [ "$stack" -gt 0 ] && [ "$stack" -le 1024 ]
ok $? "the largest kernel stack frame is within CUDA's default 1 KiB and gpumem reserves it ($stack bytes; ptxas: $want)"
done_testing
