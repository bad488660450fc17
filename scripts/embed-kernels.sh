#!/bin/sh
# Usage: embed-kernels.sh OUT_DIR 'KERNEL_FILES' 'CUDA_IMAGES'
# Writes OUT_DIR/kernel_blobs.S (the files, byte for byte, via .incbin) and
# OUT_DIR/kernel_table.c (gm_kernel_files[] and gm_cuda_images[], and
# gm_cuda_stack_bytes: the largest per-thread stack frame ptxas reports in
# any image's log, build/cuda/PROG.VARIANT.ptxas.log beside the fatbin).
# Kernel files are named by their base name without .cl ("stream",
# "gm_portable.h"); CUDA images build/cuda/PROG.VARIANT.fatbin by PROG.VARIANT.
set -eu
out=$1 files=$2 images=$3
mkdir -p "$out"
S=$out/kernel_blobs.S.tmp C=$out/kernel_table.c.tmp
: >"$S"
printf '#include "backend/kernel_sources.h"\n\n' >"$C"
n=0
emit() { # emit SYMBOL PATH
    printf '\t.section .rodata\n\t.balign 16\n\t.global %s\n%s:\n\t.incbin "%s"\n\t.global %s_end\n%s_end:\n\t.byte 0\n' \
        "$1" "$1" "$2" "$1" "$1" >>"$S"
    printf 'extern const unsigned char %s[], %s_end[];\n' "$1" "$1" >>"$C"
}
table() { # table NAME 'KEY=SYMBOL ...'
    printf '\nconst gm_embedded_file %s[] = {\n' "$1" >>"$C"
    for pair in $2; do
        printf '    {"%s", %s, %s_end},\n' "${pair%%=*}" "${pair#*=}" "${pair#*=}" >>"$C"
    done
    printf '    {0, 0, 0},\n};\n' >>"$C"
}
kf="" ci=""
for f in $files; do
    n=$((n + 1)); sym=gm_blob_$n
    emit $sym "$(realpath "$f")"
    key=$(basename "$f"); key=${key%.cl}
    kf="$kf $key=$sym"
done
for f in $images; do
    n=$((n + 1)); sym=gm_blob_$n
    emit $sym "$(realpath "$f")"
    key=$(basename "$f" .fatbin)
    ci="$ci $key=$sym"
done
stack=0
for f in $images; do
    log=${f%.fatbin}.ptxas.log
    [ -r "$log" ] || { echo "embed-kernels.sh: $log missing: rebuild $f" >&2; exit 1; }
    for v in $(sed -n 's/.* \([0-9][0-9]*\) bytes stack frame.*/\1/p; s/.* \([0-9][0-9]*\) bytes cumulative stack size.*/\1/p' "$log"); do
        if [ "$v" -gt "$stack" ]; then stack=$v; fi
    done
done
printf '\t.section .note.GNU-stack,"",@progbits\n' >>"$S"
table gm_kernel_files "$kf"
table gm_cuda_images "$ci"
printf '\nconst size_t gm_cuda_stack_bytes = %s;\n' "$stack" >>"$C"
mv "$S" "$out/kernel_blobs.S"
mv "$C" "$out/kernel_table.c"
