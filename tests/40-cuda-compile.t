#!/bin/sh
# Every CUDA kernel variant compiles, warning-free (the build's nvcc runs
# with -Werror all-warnings and ptxas -Werror, its output kept beside each
# image), to machine code for every architecture kernels/variants.mk gives
# it (cuda_archs: sm_75, sm_80 and sm_90 for all, sm_89 too for the stream
# kernels' fp8 variants): each image built into build/cuda carries a CUDA
# ELF for every one of them; and the binary embeds every variant. The
# images are the build's own (they do not depend on SAN), read here, not
# compiled a second time.
. tests/lib.sh
case $GM_BUILD in *nocuda*) skip_all "a build without CUDA" ;; esac
NVCC=${NVCC:-$(command -v nvcc || true)}
[ -n "$NVCC" ] || skip_all "nvcc not found: the CUDA backend is not built"
# One line a variant: PROGRAM.VARIANT and its architectures.
listing=$(make -s print-cuda-variants)
variants=$(echo "$listing" | cut -d' ' -f1)
n_images=$(echo "$listing" | awk '{ n += NF - 1 } END { print n }')
plan $((n_images * 2 + 4))
images=build/cuda

# elf_sms FILE: "MACHINE SM" of every ELF image inside a fatbin, one a
# line (EM_CUDA is 190; the SM version is bits 8-15 of e_flags).
elf_sms() {
    perl -0777 -ne 'while (/\x7fELF/g) { my $o = pos() - 4;
        my ($m) = unpack("v", substr($_, $o + 18, 2)); my ($f) = unpack("V", substr($_, $o + 48, 4));
        printf "%d %d\n", $m, ($f >> 8) & 255 }' "$1"
}
while read -r v archs; do
    sms=$(elf_sms "$images/$v.fatbin" 2>/dev/null)
    for a in $archs; do
        log=$images/$v.ptxas.log
        [ -s "$images/$v.fatbin" ] && [ -f "$log" ] && ! grep -qi 'warning' "$log"
        ok $? "$v compiles for sm_$a with no warning"
        [ -f "$log" ] && grep -qi 'warning' "$log" && diag "$(grep -i warning "$log" | head -5)"
        printf '%s\n' "$sms" | grep -qx "190 $a"
        ok $? "$v: the image carries CUDA machine code for sm_$a"
    done
done <<EOF
$listing
EOF
# The stream kernels' fp8 variants carry sm_89 code (their hardware
# conversions), the others none (an sm_89 card runs their sm_80 code).
extra=$(echo "$listing" | awk '/ 89( |$)/ { print $1 }' | tr '\n' ' ')
is "$extra" "stream.fp8e4m3-grid stream.fp8e4m3-chunked stream.fp8e5m2-grid stream.fp8e5m2-chunked " \
    "sm_89 code for the stream kernels' fp8 variants only"
# The binary carries one image per variant (the names the backend looks up):
# every program's grid variants, and the chunked ones of the stream kernels
# alone (the one suite whose --access asks a GPU for them).
chunked=$(echo "$variants" | grep -- '-chunked$' | grep -v '^stream\.' | tr '\n' ' ')
is "$chunked" "" "no chunked image but the stream kernels'"
table=$GM_BUILD/gen/kernel_table.c
got=$(sed -n '/gm_cuda_images\[\]/,/^};/p' "$table" 2>/dev/null | grep -o '{"[^"]*"' | tr -d '{"' | sort | tr '\n' ' ')
is "$got" "$(echo "$variants" | sort | tr '\n' ' ')" "gpumem embeds exactly the variants built"
# No kernel's stack frame (as ptxas reports it) exceeds CUDA's default
# per-thread stack of 1 KiB, so no first launch grows the context's local
# memory after the leak check's snapshot (attention_tiled keeps one
# GM_ATTN_MAX_DIM array: 1024 bytes); the binary reserves the largest one
# at open all the same (gm_cuda_stack_bytes).
stack=$(sed -n 's/^const size_t gm_cuda_stack_bytes = \([0-9]*\);/\1/p' "$table" 2>/dev/null)
want=$(for v in $variants; do cat "$images/$v.ptxas.log"; done 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\) bytes stack frame.*/\1/p' | sort -n | tail -1)
[ -n "$stack" ] && [ "$stack" = "$want" ] && [ "$stack" -gt 0 ] && [ "$stack" -le 1024 ]
ok $? "the largest kernel stack frame is within CUDA's default 1 KiB and gpumem reserves it ($stack bytes; ptxas: $want)"
done_testing
