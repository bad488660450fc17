# TAP helpers for the shell tests (sourced by tests/*.t). prove runs a .t
# with perl, which hands a file whose #! names another interpreter to it.
# Every test runs from the repo root with ./gpumem built.
set -u
GM_BUILD=${GM_BUILD:-build}
GPUMEM=${GPUMEM:-./gpumem}
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpumem-test.XXXXXX")
trap 'rm -rf "$TEST_TMP"' EXIT
# Tests on the CPU device always run under an explicit memory cap.
TEST_MEM_LIMIT=${TEST_MEM_LIMIT:-512MiB}
_tap_n=0
_tap_failed=0

plan() { echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
# sanitizer_pass: true in the sanitizer pass (make test SAN=1). A file
# that repeats one code path (over seeds, sizes, calls or names) runs one
# repetition there (the sanitizers watch the code, which one runs) and
# skips the others by name.
sanitizer_pass() {
    case "$GM_BUILD" in build-san*) return 0 ;; esac
    return 1
}
# plain_pass_only WHY: skips the file in the sanitizer pass, for a test
# whose subject is not gpumem's own host code (a script, a compiler, a
# browser, a scheduler): the plain pass runs it, and the gpumem runs it
# makes are the suites' that other files test under SAN.
plain_pass_only() {
    if sanitizer_pass; then skip_all "$*: the plain pass runs it"; fi
}
# diag TEXT...: TAP diagnostics on stderr, which prove shows without -v
# (a failure's got/want and notes reach CI's log).
diag() { printf '%s\n' "$@" | sed 's/^/# /' >&2; }
# note TEXT...: TAP comments on stdout, for what is worth keeping in a
# verbose run (prove -v) but not in every log.
note() { printf '%s\n' "$@" | sed 's/^/# /'; }

# ok COND_EXIT_STATUS NAME
ok() {
    _tap_n=$((_tap_n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $_tap_n - $2"
    else
        echo "not ok $_tap_n - $2"
        _tap_failed=$((_tap_failed + 1))
    fi
}
# is GOT WANT NAME
is() {
    if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; diag "got:  '$1'" "want: '$2'"; fi
}
# like GOT REGEX NAME
# like TEXT REGEX NAME: the (Perl) regex matches the text, which may span
# lines (^ and $ match at every line).
like() {
    if printf '%s' "$1" | LIKE_RE="$2" perl -0777 -ne 'exit(/$ENV{LIKE_RE}/m ? 0 : 1)'; then ok 0 "$3"
    else ok 1 "$3"; diag "got:  '$1'" "want: /$2/"; fi
}
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $*"; }
done_testing() { exit $((_tap_failed > 0)); }

# run_gpumem ARGS... : sets RC, OUT, ERR (stdout, stderr as text)
run_gpumem() {
    "$GPUMEM" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
    RC=$?
    OUT=$(cat "$TEST_TMP/out")
    ERR=$(cat "$TEST_TMP/err")
}

# Perl that reads a results CSV: rows() returns each row as a hash ref
# keyed by column name, quoted fields unquoted.
CSV_PERL='
    sub parse { my $s = shift; my @o;
        while ($s =~ /\G(?:"((?:[^"]|"")*)"|([^,]*))(,|$)/g) {
            push @o, defined $1 ? $1 =~ s/""/"/gr : $2; last if $3 eq ""; }
        @o }
    sub rows { my $file = shift; open my $fh, "<", $file or die "$file: $!";
        my @h = parse(scalar(<$fh>) =~ s/\r?\n$//r); my @rows;
        while (my $line = <$fh>) { chomp $line; my %r; @r{@h} = parse($line); push @rows, \%r }
        @rows }
'

# csv_count FILE PERL_CONDITION : how many rows of a CSV satisfy the condition,
# which sees the row as a hash ref in $_ keyed by column name ($_->{status}).
csv_count() {
    perl -e "$CSV_PERL"'
        my ($file, $cond) = @ARGV;
        my $n = 0;
        for (rows($file)) { $n++ if eval $cond; die $@ if $@ }
        print "$n\n";
    ' "$1" "$2"
}

# json FILE PERL_EXPR : the expression's value with $m the parsed meta.json.
json() {
    perl -MJSON::PP -e 'local $/; open my $f, "<", $ARGV[0] or exit 1; my $m = decode_json(<$f>);
                        my $v = eval $ARGV[1]; print defined $v ? "$v\n" : "\n"' "$1" "$2"
}

# csv_value FILE PERL_CONDITION COLUMN : the COLUMN of the first row that
# satisfies the condition (empty if none).
csv_value() {
    perl -e "$CSV_PERL"'
        my ($file, $cond, $col) = @ARGV;
        for (rows($file)) { if (eval $cond) { print "$_->{$col}\n"; last } die $@ if $@ }
    ' "$1" "$2" "$3"
}

# dram_array_mib MIN_MIB: a stream array size in MiB, a power of two and
# at least MIN_MIB, that the stream suite counts as device memory on this
# machine's CPU device: at least 4x its last-level cache (src/run/summary.c),
# which PoCL reports as the CPU's L3 (8MiB on one machine, 32MiB on
# another). A test that needs a device-memory figure sizes its arrays, and
# the cap that holds them, with it.
dram_array_mib() {
    _llc=$("$GPUMEM" info 2>/dev/null | awk '/^ +last-level cache/ { gsub(/[(]/, "", $4); print $4; exit }')
    _mib=$1
    while [ "$((_mib * 1048576))" -lt "$((4 * ${_llc:-0}))" ]; do _mib=$((_mib * 2)); done
    echo "$_mib"
}
