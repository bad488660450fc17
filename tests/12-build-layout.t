#!/bin/sh
# The source tree and the build: includes point down the layers (bench/'s
# folders too), no circle runs between source files (their objects' calls), the
# user's CFLAGS add to the Makefile's own, and an installed gpumem
# (make install DESTDIR=... PREFIX=/usr) finds its data files from any
# folder: bench, plot, plan and compare reference:NAME run from /. make
# install does not relink the in-tree ./gpumem, installs the man page, the
# bash completion, the README, docs/ and the reference runs, and make
# uninstall takes all of it away again.
. tests/lib.sh
plain_pass_only "the layout, the install and the compiler flavours are the build's"
plan 24

out=$(scripts/check-layers.sh 2>&1)
is "$?:$out" "0:" "every include names its folder and points down the layers"
# The check itself catches an include that points up.
mkdir -p "$TEST_TMP/tree/src/lib" "$TEST_TMP/tree/scripts" "$TEST_TMP/tree/bench" "$TEST_TMP/tree/stress"
cp scripts/check-layers.sh "$TEST_TMP/tree/scripts/"
printf '#include "cli/commands.h"\n' >"$TEST_TMP/tree/src/lib/up.c"
out=$("$TEST_TMP/tree/scripts/check-layers.sh" 2>&1)
like "$?:$out" '^1:src/lib/up.c \(lib\): "cli/commands.h" \(cli\)' "an include of a higher layer is reported"
rm "$TEST_TMP/tree/src/lib/up.c"
mkdir -p "$TEST_TMP/tree/bench/model" "$TEST_TMP/tree/bench/stray"
printf '#include "bench/workloads/registry.h"\n' >"$TEST_TMP/tree/bench/model/up.c"
printf '\n' >"$TEST_TMP/tree/bench/stray/x.c"
out=$("$TEST_TMP/tree/scripts/check-layers.sh" 2>&1)
like "$?:$out" '^1:bench/model/up.c \(bench-model\): "bench/workloads/registry.h" \(bench-workloads\)' \
    "inside bench/, the model including a workload is reported"
like "$out" 'bench/stray/x.c: a folder of bench/ that has no layer here' "and a folder of bench/ without a layer"

# No circle between source files, read from the build's objects.
out=$(scripts/check-cycles.pl "$GM_BUILD" 2>&1)
is "$?:$out" "0:" "no source file uses one that uses it back, directly or around a circle"
# The check itself finds a planted circle of three files, and passes over
# the object of a source since deleted.
planted=$TEST_TMP/planted
mkdir -p "$planted/src/lib" "$planted/build/src/lib"
printf 'int b(void); int a(void) { return b(); }\n' >"$planted/src/lib/a.c"
printf 'int c(void); int b(void) { return c(); }\n' >"$planted/src/lib/b.c"
printf 'int a(void); int c(void) { return a(); }\n' >"$planted/src/lib/c.c"
for f in a b c; do cc -c -o "$planted/build/src/lib/$f.o" "$planted/src/lib/$f.c"; done
checker=$(pwd)/scripts/check-cycles.pl
out=$(cd "$planted" && "$checker" build 2>&1)
is "$?:$out" "1:src/lib/a.c <-> src/lib/b.c <-> src/lib/c.c" "a planted circle of three files is reported"
rm "$planted/src/lib/c.c"
out=$(cd "$planted" && "$checker" build 2>&1)
is "$?:$out" "0:" "and none once a file of it is deleted (its object left behind)"
out=$(scripts/check-cycles.pl "$TEST_TMP/none" 2>&1)
like "$?:$out" "^2:check-cycles: no folder" "a missing build folder: exit 2"

# make CFLAGS=-O0: the user's flags come after the Makefile's own, which stay.
# (Run apart from the make that runs the tests: its SAN=1 would reach this one.)
line=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN -u NVCC make -n -B NVCC= CFLAGS=-O0 build-nocuda/src/lib/units.o 2>/dev/null | grep -- '-c -o')
like "$line" '-Wall -Wextra -Werror .*-Isrc -I\. .* -O0 -c' "make CFLAGS=-O0 keeps the Makefile's flags and adds the user's last"

# Every object compiles, warnings as errors, at -O0 and at -O3 -march=native
# too: each optimiser level runs its own analyses (-O0 and -O1 once saw
# format truncations that -O2 did not). Objects only, without CUDA and
# debug information, into a folder of the test's own, two at a time.
for flags in "-O0" "-O3 -march=native"; do
    dir=$TEST_TMP/objects$(echo "$flags" | tr -dc 'a-zA-Z0-9')
    objs=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN -u NVCC make -pq NVCC= BUILD="$dir" 2>/dev/null \
           | sed -n 's/^OBJS := //p' | head -1 | tr ' ' '\n' | grep -v '/gen/')
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN -u NVCC make -k -j2 NVCC= BUILD="$dir" CFLAGS="$flags -g0" \
        $objs >"$dir.log" 2>&1
    rc=$?
    built=$(find "$dir" -name '*.o' 2>/dev/null | wc -l)
    is "$rc:$built:$(grep -E 'error|warning:' "$dir.log" | grep -v -- ' -Werror ' | head -3)" \
        "0:$(echo "$objs" | wc -l):" "make CFLAGS='$flags': all $built objects compile without a warning"
done

case $GM_BUILD in
*san*) for i in $(seq 12 24); do skip "install: checked in the plain build"; done
       done_testing ;;
esac
# Install from a copy of the tree (its objects too, so that only the
# installed binary's data folder path is compiled). The copy's ./gpumem is
# made first (its version differs: the copy is no git tree); make install
# must leave it as it is.
src="$TEST_TMP/src"
mkdir -p "$src"
cp -a Makefile README.md src bench stress kernels plots share scripts "$src/"
[ -d docs ] && cp -a docs "$src/"
mkdir -p "$src/results" && cp -a results/reference "$src/results/"
[ -d "$GM_BUILD" ] && cp -a "$GM_BUILD" "$src/"
[ -d build/cuda ] && mkdir -p "$src/build" && cp -a build/cuda "$src/build/"
cp -a build/.flavor-* "$src/build/" 2>/dev/null
stage="$TEST_TMP/stage"
nvcc_arg=; case $GM_BUILD in *nocuda*) nvcc_arg=NVCC= ;; esac
in_copy() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN -u NVCC make -C "$src" -j2 $nvcc_arg "$@"; }
in_copy gpumem >"$TEST_TMP/build.log" 2>&1
touch "$TEST_TMP/before-install"
sleep 1
in_copy install DESTDIR="$stage" PREFIX=/usr >"$TEST_TMP/install.log" 2>&1
rc=$?
is "$rc" 0 "make install DESTDIR=... PREFIX=/usr"
[ $rc = 0 ] || diag "$(tail -20 "$TEST_TMP/install.log")"
ok $([ -x "$src/gpumem" ] && [ ! "$src/gpumem" -nt "$TEST_TMP/before-install" ]; echo $?) \
    "make install leaves the in-tree ./gpumem as it was (no relink)"
bin="$stage/usr/bin/gpumem"
n=$(find "$stage/usr/share/gpumem" -type f | wc -l)
ok $([ -x "$bin" ] && [ "$n" -ge 10 ] && [ -f "$stage/usr/share/gpumem/profiles/quick.ini" ] \
     && [ -f "$stage/usr/share/gpumem/plots/style.gp" ]; echo $?) "the binary and $n data files installed"
docs_n=$(ls docs/*.md 2>/dev/null | wc -l)
ok $([ -s "$stage/usr/share/doc/gpumem/README.md" ] \
     && [ "$(ls "$stage/usr/share/doc/gpumem/docs/"*.md 2>/dev/null | wc -l)" = "$docs_n" ]; echo $?) \
    "the README and the $docs_n pages of docs/ installed in share/doc/gpumem"
page="$stage/usr/share/man/man1/gpumem.1"
like "$(LC_ALL=C MANWIDTH=120 man -l "$page" 2>&1)" '^   gpumem bench\n(.*\n)*       --precision LIST\n' \
    "man -l of the installed share/man/man1/gpumem.1 describes bench --precision"
cmp -s "$stage/usr/share/bash-completion/completions/gpumem" "$src/$GM_BUILD/gpumem.bash-completion"
ok $? "the bash completion installed in share/bash-completion/completions/gpumem"
rm -rf "$src"

# Run from / (no source tree in sight).
run=$TEST_TMP/run
(cd / && "$bin" bench --backend opencl --suite stream --sizes 1MiB --reps 2 --precision fp32 \
    --mem-limit "$TEST_MEM_LIMIT" --quiet --out "$run") >"$TEST_TMP/bench.log" 2>&1
is "$?" 0 "installed gpumem bench --suite stream runs from /"
(cd / && "$bin" plot "$run") >"$TEST_TMP/plot.log" 2>&1
is "$?" 0 "installed gpumem plot finds its scripts from /"
ok $([ -s "$run/plots/bandwidth.svg" ]; echo $?) "the installed plot drew bandwidth.svg"
plan_out=$(cd / && "$bin" plan --workload block --model gpt2 --batch 1 --seq 128 2>&1)
like "$plan_out" '^total [0-9]+' "installed gpumem plan finds the model presets from /"
ref=$(ls -d results/reference/*/ | head -1 | xargs basename)
(cd / && "$bin" compare "reference:$ref" "$run") >"$TEST_TMP/compare.log" 2>&1
like "$?:$(cat "$TEST_TMP/compare.log")" "^0:gpumem compare: 2 runs, a column each, against BASE $ref\\n(.|\\n)*^  largest total +[0-9.]+GiB, " \
    "installed gpumem compare reference:$ref (from share/gpumem/reference) runs from /: the card sheet, the card's memory in its column"
make uninstall DESTDIR="$stage" PREFIX=/usr >/dev/null 2>&1
left=$(find "$stage" -type f | wc -l)
is "$left" 0 "make uninstall removes every installed file"
ok $([ ! -e "$stage/usr/share/gpumem" ] && [ ! -e "$stage/usr/share/doc/gpumem" ]; echo $?) \
    "... and the folders share/gpumem and share/doc/gpumem"
done_testing
