#!/bin/sh
# The regression gate's experiment (docs/compare.md): PAIRS times,
# three stream runs back to back on PoCL: BASE, NEW (the same
# configuration) and SLOW (the same, while a busy loop keeps every core
# busy through the whole run). The A/A pair (BASE, NEW) should pass
# `gpumem compare --gate`; the A/B pair (NEW, SLOW) should fail it.
# Prints one line per pair (with the median MDE of its A/A tests: the
# smallest change those rounds could detect) and the totals; not part of
# `make test`.
#
# usage: scripts/gate-experiment.sh [PAIRS] [OUT]   (20, /tmp/gate-experiment)
# GPUMEM (./gpumem) and GATE_ARGS (the bench options below) can be set.
set -u
PAIRS=${1:-20}
OUT=${2:-/tmp/gate-experiment}
GPUMEM=${GPUMEM:-./gpumem}
# The quick profile's stream suite reduced to its largest size and fp32
# (a pair of its full list takes too long for 20 pairs on two cores),
# 20 repetitions in 5 rounds.
GATE_ARGS=${GATE_ARGS:---backend opencl --suite stream --sizes 256MiB --precision fp32 --reps 20 --warmup 1
    --rounds 5 --mem-limit 1GiB}
CPUS=$(getconf _NPROCESSORS_ONLN)
mkdir -p "$OUT"
aa=0 ab=0 done_pairs=0
# mde FILE...: the MDE column of compare's CSV rows that were tested, one a line, in %.
mde() { awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["mde"] != "" { print 100 * $col["mde"] }' "$@"; }
# median: of the numbers on stdin, "-" for none.
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else printf "%.1f%%", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
bench() {
    rm -rf "$1"
    # shellcheck disable=SC2086
    "$GPUMEM" bench $GATE_ARGS --quiet --out "$1" >/dev/null 2>"$1.err" || { echo "bench $1 failed: $(cat "$1.err")"; exit 2; }
}
for i in $(seq 1 "$PAIRS"); do
    start=$(date +%s)
    bench "$OUT/base$i"
    bench "$OUT/new$i"
    pids=
    for _ in $(seq 1 "$CPUS"); do
        sh -c 'while :; do :; done' &
        pids="$pids $!"
    done
    bench "$OUT/slow$i"
    # shellcheck disable=SC2086
    kill $pids
    wait 2>/dev/null
    "$GPUMEM" compare "$OUT/base$i" "$OUT/new$i" --gate --format csv >"$OUT/aa$i.csv" 2>/dev/null
    rc_aa=$?
    "$GPUMEM" compare "$OUT/new$i" "$OUT/slow$i" --gate --format csv >"$OUT/ab$i.csv" 2>/dev/null
    rc_ab=$?
    [ $rc_aa -eq 1 ] && aa=$((aa + 1))
    [ $rc_ab -eq 1 ] && ab=$((ab + 1))
    done_pairs=$i
    load=$(cut -d' ' -f1 /proc/loadavg)
    printf 'pair %2d: A/A %s, A/B %s (%d s, load %s, A/A median MDE %s)\n' "$i" \
        "$([ $rc_aa -eq 1 ] && echo GATED || echo pass)" "$([ $rc_ab -eq 1 ] && echo GATED || echo pass)" \
        $(($(date +%s) - start)) "$load" "$(mde "$OUT/aa$i.csv" | median)"
done
echo "A/A pairs gated: $aa of $done_pairs; A/B pairs gated: $ab of $done_pairs"
# shellcheck disable=SC2046
all=$(mde $(seq 1 "$done_pairs" | sed "s|.*|$OUT/aa&.csv|"))
printf 'MDE of the A/A tests: median %s, from %.1f%% to %.1f%% (%d tests)\n' "$(printf '%s\n' "$all" | median)" \
    "$(printf '%s\n' "$all" | sort -g | head -1)" "$(printf '%s\n' "$all" | sort -g | tail -1)" "$(printf '%s\n' "$all" | grep -c .)"
