#!/bin/sh
# Side-by-side bandwidth against peers on one device, in one run:
#   our stream read  vs clpeak --global-bandwidth (its best vector width)
#   our stream triad vs a plain OpenMP triad on the host
# Prints the figures and the ratios; exits 1 if a ratio misses its goal
# (read >= 1.0 x clpeak, triad >= 0.9 x OpenMP). Run from the repo root
# (make peers). Options: PEERS_SIZE (bytes per array, default 256MiB),
# PEERS_REPS (default 10), PEERS_BACKEND/PEERS_DEVICE (default opencl/0).
set -eu
size=${PEERS_SIZE:-268435456}
reps=${PEERS_REPS:-10}
backend=${PEERS_BACKEND:-opencl}
device=${PEERS_DEVICE:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v clpeak >/dev/null || { echo "peers: clpeak not found (apt-get install clpeak)" >&2; exit 2; }
${CC:-cc} -O3 -march=native -fopenmp -o "$tmp/omp_triad" bench/peers/omp_triad.c

./gpumem bench --backend "$backend" --device "$device" --suite stream --precision fp32 \
    --kernels read,triad --sizes "$size" --reps "$reps" --out "$tmp/run" --quiet >/dev/null
# The median over repetitions of each kernel (results.csv's value).
ours() { awk -F, -v k="$1" '$6 == k && $13 == "bandwidth" && $20 == "ok" { print $15 + 0 }' "$tmp/run/results.csv"; }
read_gbs=$(ours read)
triad_gbs=$(ours triad)
clpeak_gbs=$(clpeak --global-bandwidth 2>/dev/null | awk '/float[0-9]* *:/ { if ($3 > m) m = $3 } END { print m + 0 }')
omp_gbs=$("$tmp/omp_triad" "$size" "$reps" | awk '{ print $2 }')

awk -v r="$read_gbs" -v c="$clpeak_gbs" -v t="$triad_gbs" -v o="$omp_gbs" 'BEGIN {
    printf "%-34s %10s %10s %8s %6s\n", "measure", "gpumem", "peer", "ratio", "goal"
    printf "%-34s %10.2f %10.2f %8.2f %6s\n", "read vs clpeak global bandwidth", r, c, r / c, ">=1.0"
    printf "%-34s %10.2f %10.2f %8.2f %6s\n", "triad vs OpenMP host triad", t, o, t / o, ">=0.9"
    exit !(r >= c && t >= 0.9 * o)
}'
