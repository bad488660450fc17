#!/bin/sh
# The oom suite's fragmentation rows fill the fill level they name: a fill
# of many small fragments is not cut at a fixed count (one of 8192 once
# left 50% and 75% the same 23GiB on an 80GB card), a fill that stops
# short of its level (the device refused an allocation) says so in its
# note, and --frag-fill 100% measures at 50%, 75% and 100%.
. tests/lib.sh
plan 7

# note RUN VARIANT: the fragmentation row's note at that fill level.
note() {
    perl -e "$CSV_PERL"'print map { "$_->{note}\n" } grep { $_->{metric} eq "fragmentation" && $_->{variant} eq $ARGV[1] } rows($ARGV[0])' \
        "$1/results.csv" "$2"
}

# 1GiB in 64KiB fragments: 75% is 12288 allocations, half of them freed.
many=$TEST_TMP/many
run_gpumem bench --backend opencl --mem-limit 1GiB --suite oom --oom-parts fragmentation --frag-sizes 64KiB:64KiB \
    --out "$many" --quiet
is "$RC" 0 "64KiB fragments in 1GiB: exit status 0"
like "$(note "$many" fill-50%)" '^largest block \S+ of \S+ free, with 4096 fragments holding 256MiB$' \
    "fill-50%: 8192 fragments made, 4096 left holding 256MiB"
like "$(note "$many" fill-75%)" '^largest block \S+ of \S+ free, with 6144 fragments holding 384MiB$' \
    "fill-75%: 12288 made, 6144 left holding 384MiB, no note of a short fill"

# The fifth allocation of the worker refused: the first fill stops at 4.
short=$TEST_TMP/short
GPUMEM_BACKEND_FAULT=alloc:5:oom run_gpumem bench --backend opencl --mem-limit 256MiB --suite oom \
    --oom-parts fragmentation --frag-fill 100% --out "$short" --quiet
is "$RC" 0 "--frag-fill 100%, an allocation refused: exit status 0"
is "$(csv_count "$short/results.csv" '$_->{metric} eq "fragmentation" && $_->{status} eq "ok"')" 3 \
    "three ok fragmentation rows"
is "$(perl -e "$CSV_PERL"'print join " ", map { $_->{variant} } grep { $_->{metric} eq "fragmentation" } rows($ARGV[0])' \
    "$short/results.csv")" "fill-50% fill-75% fill-100%" "at --frag-fill 100%: fill-50%, fill-75% and fill-100%"
like "$(note "$short" fill-50%)" '; the fill stopped at \S+ of the 128MiB it aimed at$' \
    "the fill the device cut short says where it stopped and what it aimed at"
done_testing
