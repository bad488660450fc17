#!/bin/sh
# Every command's --help comes from the option table: each `--name` it
# shows is an option the command's parser accepts (given before -h, the
# parser must know it), and bench's help shows the options and values
# issue 16 found missing.
. tests/lib.sh
plan 18

for cmd in bench stress plan plot compare fleet; do
    run_gpumem $cmd --help
    names=$(printf '%s\n' "$OUT" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | grep -v -- '^--resume$')
    refused=""
    for n in $names; do
        # --NAME x -h: x is the value (or a positional word after a flag);
        # -h stops before anything runs. An unknown option exits 2.
        "$GPUMEM" $cmd "$n" x -h >/dev/null 2>"$TEST_TMP/err" || refused="$refused $n"
    done
    is "$refused" "" "$cmd --help: every option it shows is accepted by the parser"
    like "$names" "--" "$cmd --help shows options"
done
run_gpumem bench --help
for want in '--resume RUN' '--frag-sizes' '--on-oom' '--micro-batch' '--variant'; do
    case "$OUT" in *"$want"*) ok 0 "bench --help shows $want" ;; *) ok 1 "bench --help shows $want" ;; esac
done
like "$OUT" 'linear,\s+attention,\s+block,\s+kvcache' "bench --help lists every workload, block included"
done_testing
