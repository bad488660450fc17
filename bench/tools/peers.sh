#!/bin/sh
# Side-by-side bandwidth against peers on one device, in one run. On a
# CPU device:
#   our stream read        vs clpeak --global-bandwidth (its best vector width)
#   our stream triad       vs a plain OpenMP triad on the host
# on any other (a GPU), where neither says anything of the device:
#   our stream read        vs the theoretical peak (2 x memory clock x bus
#                          width, as `gpumem info` gives them; not judged
#                          where it gives none)
# and on both:
#   our stream copy, triad vs BabelStream's Copy and Triad, when
#                          BABELSTREAM=path/to/binary names a BabelStream
#                          the user built (any model: ocl-stream on an
#                          OpenCL device, cuda-stream on a CUDA one; we
#                          never ship or build it)
# All are measured in PEERS_ROUNDS interleaved rounds (the order rotates
# each round, so that a noisy neighbour hits all alike); each round's
# figures and ratios are printed side by side, then a summary: each
# measure's best round, the ratio of those best figures, and the median
# over the rounds of each round's ratio (taken between peers that ran side
# by side in the same round, so a slow spell of a shared machine between
# rounds does not skew it as it can a ratio of two best figures taken at
# different times). Like is compared with like: our read median over
# --reps against clpeak's reported figure (its mean over iterations); the
# best repetition of our triad and copy against the best repetition of
# the OpenMP triad and against BabelStream's figures (which it computes
# from its fastest repetition), all in fp32.
# Exits 1 if a median ratio misses its goal (CPU: read >= 1.0 x clpeak,
# triad >= 0.9 x OpenMP, triad and copy >= 1.0 x BabelStream; GPU: read >=
# 0.9 x the theoretical peak, triad and copy >= 0.95 x BabelStream); 2 on a bad
# setting, when our run (wrong output included) or BabelStream fails, or
# when a peer gives no figure.
# Run from the repo root (make peers). Settings: PEERS_SIZE (bytes per
# array, default 256MiB), PEERS_REPS (default 10, at least 2),
# PEERS_ROUNDS (default 5), PEERS_BACKEND/PEERS_DEVICE (default opencl/0),
# BABELSTREAM (the binary), BABELSTREAM_ARGS (e.g. "--device 1" to pick
# the same device in BabelStream's own numbering; default none),
# PEERS_MODE (cpu or gpu: which peers and goals; default the device's type
# as `gpumem info` lists it, cpu for a CPU, gpu for any other).
set -eu
size=${PEERS_SIZE:-268435456}
reps=${PEERS_REPS:-10}
rounds=${PEERS_ROUNDS:-5}
backend=${PEERS_BACKEND:-opencl}
device=${PEERS_DEVICE:-0}
babel=${BABELSTREAM:-}
babel_args=${BABELSTREAM_ARGS:-}
mode=${PEERS_MODE:-}
[ "$reps" -ge 2 ] || { echo "peers: PEERS_REPS must be at least 2" >&2; exit 2; }
# The device's block of `gpumem info`: its type ([cpu], [gpu], ...) and
# memory clock.
. "$(dirname "$0")/device_info.sh"
info=$(device_info ./gpumem "$backend:$device")
[ -n "$info" ] || { echo "peers: gpumem info lists no device $backend:$device" >&2; exit 2; }
if [ -z "$mode" ]; then
    case $(printf '%s\n' "$info" | head -1) in
    *'[cpu]') mode=cpu ;;
    *) mode=gpu ;;
    esac
fi
case $mode in cpu | gpu) ;; *) echo "peers: PEERS_MODE must be cpu or gpu (got '$mode')" >&2; exit 2 ;; esac
# GPU: the theoretical peak in GB/s (0: unknown), from "memory clock  MHz, bits".
peak=$(printf '%s\n' "$info" | awk '$1 == "memory" && $2 == "clock" { mhz = $3; bits = $5 + 0 }
    END { printf "%.17g\n", (mhz > 0 && bits > 0) ? 2 * mhz * 1e6 * bits / 8 / 1e9 : 0 }')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$mode" = cpu ]; then
    command -v clpeak >/dev/null || { echo "peers: clpeak not found (apt-get install clpeak)" >&2; exit 2; }
    ${CC:-cc} -O3 -march=native -fopenmp -o "$tmp/omp_triad" bench/tools/peers/omp_triad.c
fi
if [ -n "$babel" ] && [ ! -x "$babel" ]; then
    echo "peers: BABELSTREAM=$babel is not an executable file" >&2
    exit 2
fi

max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
# median() of bench/tools/median.awk, put before the summary's program.
median_awk=$(cat bench/tools/median.awk)
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
# BabelStream's GB/s for one function (Copy, Triad) of its --csv output,
# from its fastest repetition: bytes moved (2 arrays for Copy, 3 for
# Triad, as it counts them) over min_runtime. 0 if absent. Lines before
# the CSV header (device and driver notes) are skipped.
babel_gbs() {
    awk -F, -v f="$1" -v w="$2" '$1 == "function" { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
        h && $c["function"] == f && $c["min_runtime"] > 0 {
            v = w * $c["sizeof"] * $c["n_elements"] / $c["min_runtime"] / 1e9 }
        END { print v + 0 }' "$3"
}

# One measurement each; the figures land in $tmp/<name>.<round>.
run_ours() {
    st=0
    ./gpumem bench --backend "$backend" --device "$device" --suite stream --precision fp32 \
        --kernels read,copy,triad --sizes "$size" --reps "$reps" --out "$tmp/run$1" --quiet >/dev/null || st=$?
    if [ "$st" -ne 0 ]; then
        echo "peers: gpumem bench failed (exit $st, its message above): nothing is judged" >&2
        exit 2
    fi
    echo "$(ours read "$tmp/run$1") $(ours_best triad "$tmp/run$1") $(ours_best copy "$tmp/run$1")" >"$tmp/ours.$1"
}
# no_figure NAME FILE: a peer that printed no figure stops the comparison
# (exit 2): there is nothing to judge a goal against.
no_figure() {
    if ! awk 'NR == 1 { ok = NF > 0; for (i = 1; i <= NF; i++) if (!($i > 0)) ok = 0 } END { exit !ok }' "$2"; then
        echo "peers: $1 gave no figure: nothing is judged" >&2
        exit 2
    fi
}
# The read's peer (clpeak; on a GPU the theoretical peak, measured by no
# one) and the triad's host peer (the OpenMP triad; none on a GPU: 0).
run_clpeak() {
    if [ "$mode" = gpu ]; then
        echo "$peak" >"$tmp/clpeak.$1"
        return
    fi
    clpeak --global-bandwidth 2>/dev/null | awk '/float[0-9]* *:/ { if ($3 > m) m = $3 } END { print m + 0 }' >"$tmp/clpeak.$1"
    no_figure "clpeak --global-bandwidth" "$tmp/clpeak.$1"
}
run_omp() {
    if [ "$mode" = gpu ]; then
        echo 0 >"$tmp/omp.$1"
        return
    fi
    "$tmp/omp_triad" "$size" "$reps" | awk '{ print $1 + 0 }' >"$tmp/omp.$1"
    no_figure "the OpenMP triad" "$tmp/omp.$1"
}
run_babel() {
    if [ -z "$babel" ]; then
        echo "0 0" >"$tmp/babel.$1"
        return
    fi
    # shellcheck disable=SC2086 # BABELSTREAM_ARGS is a list of words
    if ! "$babel" --float --csv --arraysize $((size / 4)) --numtimes "$reps" $babel_args \
        >"$tmp/babel$1.csv" 2>"$tmp/babel$1.err"; then
        echo "peers: $babel failed:" >&2
        cat "$tmp/babel$1.err" >&2
        exit 2
    fi
    echo "$(babel_gbs Triad 3 "$tmp/babel$1.csv") $(babel_gbs Copy 2 "$tmp/babel$1.csv")" >"$tmp/babel.$1"
    no_figure "$babel (its Triad and Copy)" "$tmp/babel.$1"
}

read_peer=clpeak
[ "$mode" = gpu ] && read_peer=peak
printf '%-5s %8s %8s %6s | %8s %8s %6s' round read "$read_peer" ratio triad omp ratio
[ -n "$babel" ] && printf ' | %8s %8s %6s | %8s %8s %6s' triad babel ratio copy babel ratio
printf '   (GB/s)\n'
read_gbs=0 triad_gbs=0 copy_gbs=0 clpeak_gbs=0 omp_gbs=0 bt_gbs=0 bc_gbs=0
r=1
while [ "$r" -le "$rounds" ]; do
    # Rotate the order: each peer runs first, second, ... in turn.
    case $((r % 4)) in
    1) order="run_ours run_clpeak run_omp run_babel" ;;
    2) order="run_clpeak run_omp run_babel run_ours" ;;
    3) order="run_omp run_babel run_ours run_clpeak" ;;
    *) order="run_babel run_ours run_clpeak run_omp" ;;
    esac
    for m in $order; do "$m" "$r"; done
    read -r o_read o_triad o_copy <"$tmp/ours.$r"
    c=$(cat "$tmp/clpeak.$r")
    o=$(cat "$tmp/omp.$r")
    read -r b_triad b_copy <"$tmp/babel.$r"
    # The round's row, and its ratios (a peer without a figure: 0) into $tmp/ratios.
    awk -v r="$r" -v rd="$o_read" -v c="$c" -v t="$o_triad" -v o="$o" -v bt="$b_triad" \
        -v cp="$o_copy" -v bc="$b_copy" -v babel="$babel" -v ratios="$tmp/ratios" \
        'function q(a, b) { return b > 0 ? a / b : 0 }
        BEGIN {
            if (o > 0)
                printf "%-5s %8.2f %8.2f %6.2f | %8.2f %8.2f %6.2f", r, rd, c, q(rd, c), t, o, q(t, o)
            else    # a GPU: no host triad to compare with
                printf "%-5s %8.2f %8.2f %6.2f | %8.2f %8s %6s", r, rd, c, q(rd, c), t, "-", "-"
            if (babel != "")
                printf " | %8.2f %8.2f %6.2f | %8.2f %8.2f %6.2f", t, bt, q(t, bt), cp, bc, q(cp, bc)
            printf "\n"
            printf "%.17g %.17g %.17g %.17g\n", q(rd, c), q(t, o), q(t, bt), q(cp, bc) >>ratios
        }'
    read_gbs=$(max "$read_gbs" "$o_read")
    triad_gbs=$(max "$triad_gbs" "$o_triad")
    copy_gbs=$(max "$copy_gbs" "$o_copy")
    clpeak_gbs=$(max "$clpeak_gbs" "$c")
    omp_gbs=$(max "$omp_gbs" "$o")
    bt_gbs=$(max "$bt_gbs" "$b_triad")
    bc_gbs=$(max "$bc_gbs" "$b_copy")
    r=$((r + 1))
done

echo
awk -v r="$read_gbs" -v c="$clpeak_gbs" -v t="$triad_gbs" -v o="$omp_gbs" -v cp="$copy_gbs" \
    -v bt="$bt_gbs" -v bc="$bc_gbs" -v babel="$babel" -v mode="$mode" "$median_awk"'
    function q(a, b) { return b > 0 ? a / b : 0 }
    # One summary line; the goal is judged on the median of the round ratios.
    function line(what, ours, peer, j, goal,    i, v, m) {
        split("", v)
        for (i = 1; i <= n; i++)
            v[i] = ratio[i, j]
        m = median(v, n)
        printf "%-38s %10.2f %10.2f %8.2f %8.2f %6s\n", what, ours, peer, q(ours, peer), m, ">=" goal
        if (!(peer > 0 && m >= goal + 0))
            fail = 1
    }
    { n++; for (j = 1; j <= 4; j++) ratio[n, j] = $j }
    END {
        printf "%-38s %21s %12s\n", "", "best round (GB/s)", "ratio"
        printf "%-38s %10s %10s %8s %8s %6s\n", "", "gpumem", "peer", "best", "median", "goal"
        if (mode == "cpu") {
            line("read (median) vs clpeak", r, c, 1, "1.0")
            line("triad (best rep) vs OpenMP (best)", t, o, 2, "0.9")
        } else if (c > 0) {
            line("read (median) vs theoretical peak", r, c, 1, "0.9")
        } else {
            printf "%-38s %10.2f %s\n", "read (median)", r, "(no theoretical peak: gpumem info gives no memory clock)"
        }
        if (babel != "") {
            g = mode == "cpu" ? "1.0" : "0.95"
            line("triad (best rep) vs BabelStream Triad", t, bt, 3, g)
            line("copy (best rep) vs BabelStream Copy", cp, bc, 4, g)
        }
        printf "best: the ratio of the best rounds; median: of the round ratios, which the goals judge\n"
        exit fail
    }' "$tmp/ratios"
