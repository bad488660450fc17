#!/bin/sh
# Checks that includes point down the layers (docs/development.md, "Layout"):
# a file may include headers of its own layer and of the layers it may
# use, never of a layer above. Prints each violation as FILE: "HEADER"
# and exits 1 if there is one.
cd "$(dirname "$0")/.." || exit 2
# layer: the layers it may use besides itself
allowed() {
    case $1 in
    lib)      echo "" ;;
    backend)  echo "lib" ;;
    device)   echo "lib backend" ;;
    run)      echo "lib backend device" ;;
    # bench/: the model at the bottom, the harness at its root, the
    # allocation patterns, then the suites (oom and swap run workloads).
    bench-model)     echo "lib backend device run" ;;
    bench)           echo "lib backend device run bench-model" ;;
    bench-pattern)   echo "lib backend device run bench-model bench" ;;
    bench-stream)    echo "lib backend device run bench-model bench" ;;
    bench-workloads) echo "lib backend device run bench-model bench bench-pattern" ;;
    bench-swap)      echo "lib backend device run bench-model bench bench-pattern bench-workloads" ;;
    bench-oom)       echo "lib backend device run bench-model bench bench-pattern bench-workloads" ;;
    bench-serve)     echo "lib backend device run bench-model bench bench-pattern bench-workloads" ;;
    stress)   echo "lib backend device run $all_bench" ;;
    analysis) echo "lib run" ;;
    report)   echo "lib run analysis" ;;
    cli)      echo "lib backend device run $all_bench stress analysis report" ;;
    esac
}
all_bench="bench-model bench bench-pattern bench-stream bench-workloads bench-swap bench-oom bench-serve"
layer_of() {
    case $1 in
    src/lib/*) echo lib ;; src/backend/*) echo backend ;; src/device/*) echo device ;;
    src/run/*) echo run ;;
    bench/model/*) echo bench-model ;; bench/pattern/*) echo bench-pattern ;;
    bench/stream/*) echo bench-stream ;; bench/workloads/*) echo bench-workloads ;;
    bench/swap/*) echo bench-swap ;; bench/oom/*) echo bench-oom ;; bench/serve/*) echo bench-serve ;;
    bench/*/*) echo unknown ;; bench/*) echo bench ;;
    stress/*) echo stress ;;
    src/analysis/*) echo analysis ;; src/report/*) echo report ;; src/cli/*) echo cli ;;
    *) echo none ;;
    esac
}
bad=0
for f in $(find src bench stress -path bench/tools -prune -o -name '*.[ch]' -print | sort); do
    me=$(layer_of "$f")
    if [ "$me" = unknown ]; then
        echo "$f: a folder of bench/ that has no layer here"
        bad=1
        continue
    fi
    ok="$me $(allowed "$me")"
    for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
        case $h in
        */*) ;;
        *) echo "$f: \"$h\" (an include names its folder)"; bad=1; continue ;;
        esac
        hl=$(layer_of "$(case $h in bench/*|stress/*) echo "$h" ;; *) echo "src/$h" ;; esac)")
        case " $ok " in
        *" $hl "*) ;;
        *) echo "$f ($me): \"$h\" ($hl)"; bad=1 ;;
        esac
    done
done
exit $bad
