#!/bin/sh
# kill -9 at random moments of small real bench runs (PoCL), every other
# one just after the run journals a point of its own: after every
# kill results.csv and samples.csv are whole (header intact, every row
# with the header's field count, quotes balanced, a final newline) up to
# the journal's last point, and past it hold whole lines but for a last
# one cut where Linux cuts a killed process's write, at a page boundary
# (docs/results.md); the
# killed run is resumed (its stale lock taken over) and killed again, and
# once resumed to its end holds exactly the points of an uninterrupted run
# of the same options: none lost, none twice.
. tests/lib.sh
. tests/lib_files.sh
plan 8

# Under the sanitizers (a killed process checks nothing; its resumes do)
# 20 kills, else 32 (GM_TEST_KILLS=N for a longer hunt).
if sanitizer_pass; then KILLS=${GM_TEST_KILLS:-20}; else KILLS=${GM_TEST_KILLS:-32}; fi
A="bench --backend opencl --mem-limit 32MiB --suite stream --sizes 64KiB:4MiB:x2 --precision fp32,fp16
   --kernels copy,triad,dot --reps 3 --warmup 0 --quiet"
run_gpumem $A --out "$TEST_TMP/ref"
is "$RC" 0 "an uninterrupted run of the same options"
point_keys "$TEST_TMP/ref/results.csv" >"$TEST_TMP/ref.keys"

run=$TEST_TMP/killed
# journal_points: the points the killed run's journal holds (0 without one).
journal_points() {
    n=$(grep -c '^point ' "$run/points.journal" 2>/dev/null)
    echo "${n:-0}"
}
# journal_len N: the length of results.csv (N=1) or samples.csv (N=2)
# at the killed run's last whole journal line (0 without a journal).
journal_len() {
    [ -f "$run/points.journal" ] || { echo 0; return; }
    N=$1 perl -ne 'next unless /\n\z/;
        $l = $1 if /^gpumem-journal \S+ \S+ (\d+ \d+)/ || /^point \S+ (\d+ \d+)/;
        END { print +(split / /, $l // "0 0")[$ENV{N} - 1], "\n" }' "$run/points.journal"
}
# after_kill FILE LEN: "ok" when FILE is whole up to its journalled length
# LEN and past it holds whole lines, its last one perhaps cut at a multiple
# of 4096 bytes ("cut" then); else the first problem found.
after_kill() {
    size=$(wc -c <"$1")
    if [ "$size" -lt "$2" ]; then
        echo "$size bytes, shorter than its journalled length $2"
        return
    elif [ "$2" -gt 0 ]; then
        head -c "$2" "$1" >"$TEST_TMP/journalled.csv"
        v=$(csv_whole "$TEST_TMP/journalled.csv")
        [ "$v" = ok ] || { echo "up to its journalled length $2: $v"; return; }
    elif [ "$size" -eq 0 ]; then
        echo ok      # nothing journalled, nothing written yet: the run starts over
        return
    fi
    if [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ]; then
        csv_whole "$1"
    elif [ $((size % 4096)) -ne 0 ]; then
        echo "cut mid-line at byte $size, not at a page boundary"
    else
        perl -0777 -pe 's/[^\n]*\z//' "$1" >"$TEST_TMP/whole-lines.csv"
        v=$(csv_whole "$TEST_TMP/whole-lines.csv")
        [ "$v" = ok ] && echo cut || echo "before its cut line: $v"
    fi
}
kills=0 mid=0 cycles=0 broken=0 refused=0 finished=0 mismatched=0 cut=0
while [ "$kills" -lt "$KILLS" ] && [ "$cycles" -lt $((KILLS * 4)) ]; do
    cycles=$((cycles + 1))
    if grep -q '^end ' "$run/points.journal" 2>/dev/null; then
        # Killed after its last point: nothing to resume; compare, start over.
        finished=$((finished + 1))
        point_keys "$run/results.csv" | cmp -s - "$TEST_TMP/ref.keys" || mismatched=$((mismatched + 1))
        rm -rf "$run"
    fi
    if [ -f "$run/points.journal" ]; then
        "$GPUMEM" bench --resume "$run" --quiet >"$TEST_TMP/cycle.out" 2>"$TEST_TMP/cycle.err" &
    else
        # Killed before its journal existed: nothing finished; start over.
        rm -rf "$run"
        "$GPUMEM" $A --out "$run" >"$TEST_TMP/cycle.out" 2>"$TEST_TMP/cycle.err" &
    fi
    pid=$!
    before=$(journal_points)
    if [ $((cycles % 2)) = 0 ]; then
        # Every other cycle waits for the run's next point (a load that
        # slows the start of every run would otherwise leave no kill in
        # the middle of its points), then strikes up to 0.2 s later.
        waited=0
        while [ "$waited" -lt 400 ] && kill -0 "$pid" 2>/dev/null \
            && [ "$(journal_points)" -le "$before" ]; do
            sleep 0.05
            waited=$((waited + 1))
        done
        sleep "$(awk -v n="$cycles" 'BEGIN { srand(); srand(srand() * 1000 + n); printf "%.3f", rand() * 0.2 }')"
    else
        sleep "$(awk -v n="$cycles" 'BEGIN { srand(); srand(srand() * 1000 + n); printf "%.3f", 0.05 + rand() * 0.95 }')"
    fi
    kill -9 "$pid" 2>/dev/null && kills=$((kills + 1)) \
        && [ "$(journal_points)" -gt "$before" ] && mid=$((mid + 1))
    { wait "$pid"; } 2>/dev/null
    rc=$?
    n=0
    for f in results.csv samples.csv; do
        n=$((n + 1))
        [ -f "$run/$f" ] || continue
        verdict=$(after_kill "$run/$f" "$(journal_len $n)")
        case "$verdict" in
        ok) ;;
        cut) cut=$((cut + 1)); note "after kill $kills: $f cut mid-line at a page boundary, past its journalled length" ;;
        *) broken=$((broken + 1)); diag "after kill $kills: $f: $verdict" ;;
        esac
    done
    if [ "$rc" -ne 137 ]; then
        if [ "$rc" -eq 0 ]; then
            # The run got to its end between two kills: compare, start over.
            finished=$((finished + 1))
            point_keys "$run/results.csv" | cmp -s - "$TEST_TMP/ref.keys" || mismatched=$((mismatched + 1))
            rm -rf "$run"
        else
            refused=$((refused + 1))
            diag "cycle $cycles: exit $rc: $(cat "$TEST_TMP/cycle.err")"
            rm -rf "$run"
        fi
    fi
done
note "$kills kills with kill -9 in $cycles runs, $mid of them after the run had finished points of its own;" \
     "$finished run(s) reached their end between kills"
ok "$([ "$kills" -ge "$KILLS" ]; echo $?)" "at least $KILLS kill -9 at random moments ($kills)"
ok "$([ "$mid" -ge 5 ]; echo $?)" "at least 5 of them in the middle of a run's points ($mid)"
is "$broken" 0 "every results.csv and samples.csv whole up to its journal after every kill ($cut cut at a page past it)"
is "$refused" 0 "every killed run resumed (none refused, none failed)"

# The last killed run, resumed to its end: the same points as the
# uninterrupted run, none twice. One killed after its journal's end line
# but before it exited has already reached its end: resuming it is
# refused as such (exit 2), and its points are compared as they are.
if grep -q '^end ' "$run/points.journal" 2>/dev/null; then
    run_gpumem bench --resume "$run" --quiet
    [ "$RC" -eq 2 ] && printf '%s' "$ERR" | grep -q 'attempted every point' && RC=0
elif [ -f "$run/points.journal" ]; then
    run_gpumem bench --resume "$run" --quiet
else
    rm -rf "$run"
    run_gpumem $A --out "$run"
fi
is "$RC" 0 "the last killed run resumed to its end"
[ "$RC" -eq 0 ] || diag "its stderr: $ERR" "its journal:" "$(cat "$run/points.journal" 2>&1)"
point_keys "$run/results.csv" | cmp -s - "$TEST_TMP/ref.keys"
ok $? "its points equal the uninterrupted run's: same set, no duplicates ($(wc -l <"$TEST_TMP/ref.keys") rows)"
is "$mismatched" 0 "so do those of every run that reached its end between kills"
