#!/bin/sh
# The documentation: the README fits in about 250 lines and says the two
# commands; every section the README once held (and the results schema
# that results/README.md held) has a home in README.md or docs/; every
# relative link of README.md and docs/*.md reaches a file or folder, and
# the heading it names; every source file they name is there; the
# README's three answers are what gpumem plot and gpumem plan really say
# for the reference run it quotes.
. tests/lib.sh
plan 10

lines=$(grep -c '' README.md)
ok $([ "$lines" -le 250 ]; echo $?) "README.md is $lines lines (at most 250)"
grep -q '^make bench ' README.md && grep -q '^make test ' README.md
ok $? "README.md gives the two commands, make bench and make test"

# The headings of the README of 1,018 lines that docs/ replaced, and of
# the results schema (results/README.md then): each must be a heading of
# README.md or of a page of docs/, word for word.
cat >"$TEST_TMP/headings" <<'EOF'
Set-up (Debian 12)
Using it
Side by side: `make peers` and `make precisions`
Interruption, resume and the run folder's lock
What gets measured
Plots (`gpumem plot RUN`, `make plots RUN=...`)
Compare runs (`gpumem compare BASE NEW [MORE...]`)
Rounds: the noise a gate must see
The test
Fleets (`--device all`, Slurm, `gpumem fleet`)
Stress (`gpumem stress`, `make stress`)
Planning a model's memory
Running a whole model on the device
Layout
Installing
Development
points.journal
results.csv — schema version 4
Metrics
samples.csv — schema version 4
compare.csv — written by `gpumem compare --out DIR` (or `--format csv`)
Reading it
meta.json: device_leak_check
EOF
# every heading of the docs, outside fenced code
perl -ne '$f = !$f if /^```/; print "$1\n" if !$f && /^#{1,6} (.*?)\s*$/' README.md docs/*.md >"$TEST_TMP/have"
homeless=$(while IFS= read -r h; do grep -qxF -- "$h" "$TEST_TMP/have" || echo "$h"; done <"$TEST_TMP/headings")
is "$homeless" "" "every section of the old README and of the results schema is a heading in README.md or docs/"
ok $([ "$(wc -l <"$TEST_TMP/headings")" -eq 23 ]; echo $?) "... 23 headings checked"
n_pages=$(ls docs/*.md | wc -l)
ok $([ "$n_pages" -ge 10 ]; echo $?) "docs/ has a page per topic ($n_pages)"

# Links: [text](target) outside code, relative targets only; a target's
# #anchor must be the GitHub anchor of one of its headings.
bad=$(perl -CSD -Mutf8 -e '
    use File::Basename qw(dirname);
    sub slug { my $s = lc shift; $s =~ s/[^\w\- ]//g; $s =~ s/ /-/g; $s }
    sub anchors { my $file = shift; open my $fh, "<:encoding(UTF-8)", $file or return (); my ($f, %a);
        while (<$fh>) { $f = !$f if /^```/; $a{slug($1)} = 1 if !$f && /^#{1,6} (.*?)\s*$/ } %a }
    my $n = 0;
    for my $file (@ARGV) {
        open my $fh, "<:encoding(UTF-8)", $file or die "$file: $!"; my $f;
        while (my $line = <$fh>) {
            $f = !$f if $line =~ /^```/; next if $f;
            $line =~ s/`[^`]*`//g;
            while ($line =~ /\]\(([^)\s]+)\)/g) {
                my $t = $1; next if $t =~ /^[a-z]+:/; $n++;
                my ($path, $anchor) = split /#/, $t, 2;
                my $target = $path eq "" ? $file : dirname($file) . "/" . $path;
                if (!-e $target) { print "$file: $t: no such file\n"; next }
                next unless defined $anchor;
                my %a = anchors($target);
                print "$file: $t: no heading #$anchor in $target\n" unless $a{$anchor};
            }
        }
    }
    print STDERR "$n\n";
' README.md docs/*.md 2>"$TEST_TMP/n_links")
is "$bad" "" "every relative link of README.md and docs/*.md reaches its file and heading"
ok $([ "$(cat "$TEST_TMP/n_links")" -ge 30 ]; echo $?) "... $(cat "$TEST_TMP/n_links") links checked"

# The source files the docs name (bench/oom/oom.c, scripts/deps.sh, ...):
# each is there, but for the placeholders of "where things go" (NAME).
missing=$(perl -ne 'print "$1\n" while m{(?<![\w/.-])((?:bench|src|stress|scripts|tests|kernels|share|plots)/[\w./-]*\.(?:c|h|cpp|sh|awk|pl|py|gp|ini|json|cl|t|mk|md))(?![\w])}g' \
    README.md docs/*.md | sort -u | grep -v NAME | while read -r f; do [ -e "$f" ] || echo "$f"; done)
is "$missing" "" "every source file README.md and docs/ name is there"

# The three answers the README quotes: each piece (between '; ' and
# '...') is in the report gpumem plot writes for that reference run, and
# the plan it shows is gpumem plan's.
answers=$(perl -ne '$in = 1 if /^## Three answers/; $in = 0 if /^## The commands/;
    if (/^```/) { print ";\n" if $in && $f; $f = !$f; next } print if $in && $f && !/^\.\// && !/^#/' README.md \
    | tr -s ' \n' '  ')
ref=results/reference/nvidia-h100-80gb-hbm3
if command -v gnuplot >/dev/null && [ -d "$ref" ]; then
    cp -R "$ref" "$TEST_TMP/ref"
    "$GPUMEM" plot "$TEST_TMP/ref" >/dev/null 2>&1
    report=$(tr -s ' \n' '  ' <"$TEST_TMP/ref/report.md")
    missing=$(printf '%s' "$answers" | sed 's/\.\.\.//g' | tr ';' '\n' | sed 's/^ *//; s/ *$//' | grep . \
        | while IFS= read -r piece; do case "$report" in *"$piece"*) ;; *) echo "$piece" ;; esac; done)
    ok $([ -n "$answers" ] && [ -z "$missing" ]; echo $?) "the README's three answers are the reference run's report, word for word"
    [ -z "$missing" ] || diag "not in the report: $missing"
else
    skip "gnuplot or $ref missing"
fi
plan_out=$("$GPUMEM" plan --model llama-3-8b --precision bf16 --seq 8192 --fit 80GiB 2>&1)
quoted=$(perl -ne '$in = 1 if /^## Three answers/; $in = 0 if /^## The commands/; print "$1\n" if $in && /^# (.*)/' README.md \
    | sed 's/^\.\.\. //')
missing=$(printf '%s\n' "$quoted" | while IFS= read -r l; do printf '%s\n' "$plan_out" | grep -qF -- "$l" || echo "$l"; done)
ok $([ -n "$quoted" ] && [ -z "$missing" ]; echo $?) "the plan the README quotes is gpumem plan's output"
done_testing
