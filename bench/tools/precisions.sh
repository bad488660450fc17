#!/bin/sh
# Every stream kernel (read, write, copy, scale, add, triad, dot) in every
# stream precision against fp32 on one device, side by side in one run:
# one `gpumem bench --suite stream --rounds K` at one array size (by
# default 4x the device's last-level cache that `gpumem info` reports, at
# least 256MiB), whose rounds interleave the points so that a noisy
# neighbour hits every precision alike. Ratios are taken pairwise: for
# each kernel, precision and round, the median of the round's repetitions
# over fp32's median in the same round; the table shows, per kernel, fp32's
# GB/s (the median of its round medians) and each precision's median
# ratio over the rounds, then their min-max (bench/tools/precisions.awk does
# the arithmetic). A cell below the goal (0.9 x fp32) is marked with *.
# The kernels and precisions are read from `gpumem bench --help` (the
# option table's lists), less those its note names as weights only.
# Exits 0 if every cell meets the goal, 1 if one misses it, 2 on a bad
# setting, a failed run or a failed point (every point's row must be ok:
# a mismatch or error row is printed with its note and nothing is judged).
# Run from the repo root (make precisions). Settings:
#   PREC_BACKEND/PREC_DEVICE  the device (default opencl/0)
#   PREC_SIZE        bytes per array, one size (1MiB, 268435456; default
#                    4x the last-level cache, at least 256MiB)
#   PREC_ROUNDS      rounds (default 6)
#   PREC_REPS        timed repetitions of each point over all the rounds,
#                    a share each round (gpumem's --reps; default 12:
#                    2 a round; every round takes at least 1)
#   PREC_KERNELS     kernels to run, comma separated (default all)
#   PREC_PRECISIONS  precisions to run, comma separated (default every
#                    stream precision; fp32, the reference, always runs)
#   PREC_GOAL        the least ratio to fp32 a cell must reach (default 0.9)
#   PREC_MEM_LIMIT   gpumem's --mem-limit (default gpumem's own)
#   PREC_OUT         keep the run folder there (default: a temporary one)
#   PREC_RUN         judge this existing run folder instead of measuring
#                    (those of the kernels and precisions it holds)
#   GPUMEM           the binary (default ./gpumem)
set -eu
gpumem=${GPUMEM:-./gpumem}
backend=${PREC_BACKEND:-opencl}
device=${PREC_DEVICE:-0}
size=${PREC_SIZE:-}
rounds=${PREC_ROUNDS:-6}
reps=${PREC_REPS:-12}
goal=${PREC_GOAL:-0.9}
mem_limit=${PREC_MEM_LIMIT:-}
out=${PREC_OUT:-}
run=${PREC_RUN:-}
here=$(dirname "$0")
. "$here/device_info.sh"

die() {
    echo "precisions: $*" >&2
    exit 2
}
whole() {
    case $2 in
    '' | *[!0-9]* | 0*) die "$1 must be a whole number from 1 (got '$2')" ;;
    esac
}
whole PREC_ROUNDS "$rounds"
whole PREC_REPS "$reps"
case $goal in
'' | . | *[!0-9.]* | *.*.*) die "PREC_GOAL must be a number above 0 (got '$goal')" ;;
esac
awk -v g="$goal" 'BEGIN { exit !(g + 0 > 0) }' || die "PREC_GOAL must be a number above 0 (got '$goal')"
case $size in
*[:,\ ]*) die "PREC_SIZE is one array size (got '$size')" ;;
esac
[ -x "$gpumem" ] || die "$gpumem not found: build it first (make gpumem)"

# The values gpumem bench --help lists for an option ("any of a, b, c"),
# less those its text says go only elsewhere ("int4 only as
# --weight-precision"), space separated.
help_values() {
    "$gpumem" bench --help | awk -v opt="$1" '
        /^  [^ ]/ { on = $1 == opt }
        on { text = text " " $0 }
        END {
            gsub(/  */, " ", text)
            if (!match(text, /any of [^()]*/))
                exit
            list = substr(text, RSTART + 7, RLENGTH - 7)
            sub(/ *$/, "", list)
            n = split(list, v, /, */)
            for (i = 1; i <= n; i++)
                if (index(text, v[i] " only as ") == 0)
                    out = out (out == "" ? "" : " ") v[i]
            print out
        }'
}
all_kernels=$(help_values --kernels)
all_precisions=$(help_values --precision)
if [ -z "$all_kernels" ] || [ -z "$all_precisions" ]; then
    die "could not read the stream kernels and precisions from $gpumem bench --help"
fi

# pick NAME LIST ALL: LIST (commas or spaces) checked against ALL, in ALL's order.
pick() {
    for v in $(echo "$2" | tr ',' ' '); do
        case " $3 " in
        *" $v "*) ;;
        *) die "$1: unknown '$v' (any of: $3)" ;;
        esac
    done
    for v in $3; do
        case " $(echo "$2" | tr ',' ' ') " in
        *" $v "*) printf '%s\n' "$v" ;;
        esac
    done | paste -sd ' '
}
# commas LIST: the words of LIST joined by commas.
commas() { echo "$1" | tr ' ' ','; }
kernels=$all_kernels
precisions=$all_precisions
require=1
if [ -n "$run" ]; then
    require=0
    if [ ! -f "$run/results.csv" ] || [ ! -f "$run/samples.csv" ]; then
        die "PREC_RUN=$run: no results.csv and samples.csv there"
    fi
fi
if [ -n "${PREC_KERNELS:-}" ]; then
    kernels=$(pick PREC_KERNELS "$PREC_KERNELS" "$all_kernels")
fi
if [ -n "${PREC_PRECISIONS:-}" ]; then
    precisions=$(pick PREC_PRECISIONS "fp32,$PREC_PRECISIONS" "$all_precisions")
fi

# summary REQUIRE: bench/tools/precisions.awk over the run folder (its exit status).
summary() {
    awk -f "$here/median.awk" -f "$here/csv.awk" -f "$here/precisions.awk" -v kernels="$kernels" -v precisions="$precisions" \
        -v require="$1" -v goal="$goal" -v llc="$llc" "$run/results.csv" "$run/samples.csv"
}

llc=0
if [ -z "$run" ]; then
    # The device's last-level cache, from its block of gpumem info.
    llc=$(device_info "$gpumem" "$backend:$device" |
        awk '$1 == "last-level" { gsub(/[()]/, "", $4); print $4 + 0 }')
    llc=${llc:-0}
    if [ -z "$size" ]; then
        size=$((4 * llc))
        [ "$size" -ge 268435456 ] || size=268435456
    fi
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
    run=${out:-$tmp/run}
    set -- --backend "$backend" --device "$device" --suite stream --sizes "$size" \
        --kernels "$(commas "$kernels")" --precision "$(commas "$precisions")" \
        --rounds "$rounds" --reps "$reps" --out "$run" --quiet
    [ -n "$mem_limit" ] && set -- "$@" --mem-limit "$mem_limit"
    echo "$gpumem bench $*"
    rc=0
    "$gpumem" bench "$@" >"$tmp/bench.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        cat "$tmp/bench.log" >&2
        # A run that measured something: its failed points, with their notes.
        if [ -f "$run/results.csv" ] && [ -f "$run/samples.csv" ]; then
            summary 1 >/dev/null || :
        fi
        die "$gpumem bench failed (exit $rc): nothing is judged"
    fi
fi
rc=0
summary "$require" || rc=$?
[ -n "$out" ] && [ -z "${PREC_RUN:-}" ] && echo "run folder: $out"
exit "$rc"
