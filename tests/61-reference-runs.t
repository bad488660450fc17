#!/bin/sh
# The reference runs kept in results/reference/<device>/ (runs of real
# cards, docs/results.md) work from a fresh clone: each has its README,
# gpumem compare reads it against itself (no regression, --gate passes on
# its exact values) and, named reference:NAME, against a run made here
# (the card sheet names both devices), and gpumem plot renders it. A reference that is not
# there is one line naming those that are, exit 2.
. tests/lib.sh
command -v gnuplot >/dev/null || skip_all "gnuplot not installed (Debian: gnuplot-nox)"
refs=$(ls -d results/reference/*/ 2>/dev/null)
[ -n "$refs" ] || skip_all "no reference run in results/reference"
plan $(( $(echo "$refs" | wc -l) * 5 + 1 ))

run_gpumem bench --backend opencl --mem-limit 64MiB --suite stream --kernels copy --precision fp32 --sizes 4MiB \
    --reps 3 --out "$TEST_TMP/here" --quiet
for ref in $refs; do
    ref=${ref%/}
    name=$(basename "$ref")
    [ -s "$ref/README.md" ] && [ -s "$ref/results.csv" ] && [ -s "$ref/samples.csv" ] && [ -s "$ref/meta.json" ]
    ok $? "$name: README.md, results.csv, samples.csv and meta.json"
    run_gpumem compare "$ref" "$ref" --gate
    like "$RC $OUT" "^0 (?s:.*)^no regression" "$name: compared with itself, no regression and --gate passes"
    device=$(perl -MJSON::PP -e 'local $/; open my $f, "<", $ARGV[0] or die; print decode_json(<$f>)->{device}{name}' \
        "$ref/meta.json")
    device_re=$(printf '%s' "$device" | perl -pe 's/([^\w ])/\\$1/g')
    run_gpumem compare "reference:$name" "$TEST_TMP/here" --cards
    like "$RC $OUT" "^0 gpumem compare: 2 runs, a column each, against BASE $name\n(?s:.*)^  device +$device_re \\([a-z]+\\) +[^\\n]+\\(opencl\\)\$" \
        "reference:$name compared with a run here, exit 0, the card sheet naming both devices"
    cp -R "$ref" "$TEST_TMP/$name"
    run_gpumem plot "$TEST_TMP/$name"
    is "$RC" 0 "$name: gpumem plot renders it"
    [ -n "$device" ] && [ -s "$TEST_TMP/$name/plots/bandwidth.svg" ] && grep -qF "Device: $device" "$TEST_TMP/$name/report.md"
    ok $? "$name: its report names the device ($device) and its bandwidth plot is drawn"
done
run_gpumem compare reference:no-such-card "$TEST_TMP/here"
like "$RC:$ERR" "^2:gpumem compare: reference:no-such-card: no such reference run \(there are: $(echo "$refs" | head -1 | xargs basename)" \
    "compare reference:NAME of no reference run: exit 2, one line naming those there are"
done_testing
