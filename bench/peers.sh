#!/bin/sh
# Side-by-side bandwidth against peers on one device, in one run:
#   our stream read  vs clpeak --global-bandwidth (its best vector width)
#   our stream triad vs a plain OpenMP triad on the host
# The three are measured in PEERS_ROUNDS interleaved rounds (so that a
# noisy neighbour hits all alike) and each keeps its best round. Like is
# compared with like: our read median over --reps against clpeak's
# reported figure (its mean over iterations), and the best repetition of
# our triad against the best repetition of the OpenMP triad.
# Prints the figures and the ratios; exits 1 if a ratio misses its goal
# (read >= 1.0 x clpeak, triad >= 0.9 x OpenMP). Run from the repo root
# (make peers). Settings: PEERS_SIZE (bytes per array, default 256MiB),
# PEERS_REPS (default 10), PEERS_ROUNDS (default 5),
# PEERS_BACKEND/PEERS_DEVICE (default opencl/0).
set -eu
size=${PEERS_SIZE:-268435456}
reps=${PEERS_REPS:-10}
rounds=${PEERS_ROUNDS:-5}
backend=${PEERS_BACKEND:-opencl}
device=${PEERS_DEVICE:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v clpeak >/dev/null || { echo "peers: clpeak not found (apt-get install clpeak)" >&2; exit 2; }
${CC:-cc} -O3 -march=native -fopenmp -o "$tmp/omp_triad" bench/peers/omp_triad.c

max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
# cols: an awk prelude that maps column names to numbers (c["status"]).
cols='NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }'
# Median bandwidth of one of our kernels in a run folder (0 unless ok).
ours() {
    awk -F, -v k="$1" "$cols"' $c["workload"] == k && $c["metric"] == "bandwidth" && $c["status"] == "ok" { v = $c["value"] }
        END { print v + 0 }' "$2/results.csv"
}
# Best repetition of a kernel: samples.csv holds only verified repetitions
# of points that were ok.
ours_best() {
    ok=$(ours "$1" "$2")
    awk -F, -v k="$1" -v ok="$ok" "$cols"' $c["workload"] == k && $c["metric"] == "bandwidth" && $c["value"] > m { m = $c["value"] }
        END { print (ok > 0 ? m + 0 : 0) }' "$2/samples.csv"
}
read_gbs=0 triad_gbs=0 clpeak_gbs=0 omp_gbs=0
r=1
while [ "$r" -le "$rounds" ]; do
    ./gpumem bench --backend "$backend" --device "$device" --suite stream --precision fp32 \
        --kernels read,triad --sizes "$size" --reps "$reps" --out "$tmp/run$r" --quiet >/dev/null
    read_gbs=$(max "$read_gbs" "$(ours read "$tmp/run$r")")
    triad_gbs=$(max "$triad_gbs" "$(ours_best triad "$tmp/run$r")")
    c=$(clpeak --global-bandwidth 2>/dev/null | awk '/float[0-9]* *:/ { if ($3 > m) m = $3 } END { print m + 0 }')
    clpeak_gbs=$(max "$clpeak_gbs" "$c")
    omp_gbs=$(max "$omp_gbs" "$("$tmp/omp_triad" "$size" "$reps" | awk '{ print $1 }')")
    r=$((r + 1))
done

awk -v r="$read_gbs" -v c="$clpeak_gbs" -v t="$triad_gbs" -v o="$omp_gbs" 'BEGIN {
    printf "%-34s %10s %10s %8s %6s\n", "measure (GB/s)", "gpumem", "peer", "ratio", "goal"
    printf "%-34s %10.2f %10.2f %8.2f %6s\n", "read (median) vs clpeak", r, c, r / c, ">=1.0"
    printf "%-34s %10.2f %10.2f %8.2f %6s\n", "triad (best rep) vs OpenMP (best)", t, o, t / o, ">=0.9"
    exit !(r >= c && t >= 0.9 * o)
}'
