#!/bin/sh
# The man page and the bash completion gpumem writes of itself (gpumem help
# --man, --completion bash) agree with its parser: man(1) renders the page
# without a warning, and each command's section holds every option entry of
# that command's --help word for word and no other; bash, driving the
# completion function as it would on <TAB>, completes each command's
# options, the allowed values of its enumerations and lists, the model
# presets and profiles of the data folders and compare's reference runs.
# The pages make built are the ones the binary writes now.
. tests/lib.sh
command -v man >/dev/null && command -v groff >/dev/null || skip_all "man and groff not installed (Debian: man-db)"
command -v bash >/dev/null || skip_all "bash not installed"
commands="bench stress plan plot compare fleet"
plan 42

page=$TEST_TMP/gpumem.1
"$GPUMEM" help --man >"$page"
is "$?" 0 "gpumem help --man: exit status 0"
is "$(groff -man -ww -z "$page" 2>&1)" "" "groff reads the page without a warning"
LC_ALL=C MANWIDTH=120 man -l "$page" >"$TEST_TMP/man.txt" 2>"$TEST_TMP/man.err"
is "$?:$(cat "$TEST_TMP/man.err")" "0:" "man -l renders it"

# help_entries: a --help on stdin as one option entry a line (its name,
# argument and text), whitespace collapsed.
help_entries() {
    perl -ne 'if (/^  (--\S.*)/) { print "$e\n" if defined $e; $e = $1 } elsif (defined $e && /^ {8,}(\S.*)/) { $e .= " $1" }
              else { print "$e\n" if defined $e; undef $e } END { print "$e\n" if defined $e }' | tr -s ' '
}
# man_section CMD: the rendered section "gpumem CMD", whitespace collapsed.
man_section() {
    perl -e '$c = shift; while (<STDIN>) { if (/^   gpumem (\S+)$/) { $in = $1 eq $c; next } $in = 0 if /^\S/;
             print if $in }' "$1" <"$TEST_TMP/man.txt" | tr -s ' \n' '  '
}
# man_options CMD: the names of the option entries of the section, sorted.
man_options() {
    perl -e '$c = shift; while (<STDIN>) { if (/^   gpumem (\S+)$/) { $in = $1 eq $c; next } $in = 0 if /^\S/;
             print "$1\n" if $in && /^       (--[a-z0-9-]+)/ }' "$1" <"$TEST_TMP/man.txt" | sort
}
for cmd in $commands; do
    "$GPUMEM" $cmd --help >"$TEST_TMP/help.txt"
    section=$(man_section $cmd)
    missing=$(help_entries <"$TEST_TMP/help.txt" | while IFS= read -r entry; do
        case "$section" in *"$entry"*) ;; *) echo "$entry" ;; esac; done)
    n=$(help_entries <"$TEST_TMP/help.txt" | wc -l)
    ok $([ "$n" -gt 0 ] && [ -z "$missing" ]; echo $?) "man page, gpumem $cmd: each of the $n option entries of --help, word for word"
    [ -z "$missing" ] || diag "missing: $(echo "$missing" | head -3)"
    is "$(man_options $cmd | tr '\n' ' ')" "$(help_entries <"$TEST_TMP/help.txt" | sed 's/ .*//' | sort | tr '\n' ' ')" \
        "man page, gpumem $cmd: the options --help lists and no other"
done
if [ -f "$GM_BUILD/gpumem.1" ] && [ ! "$GM_BUILD/gpumem.1" -ot "$GPUMEM" ]; then
    cmp -s "$GM_BUILD/gpumem.1" "$page"
    ok $? "the man page make built ($GM_BUILD/gpumem.1) is the binary's"
else
    skip "$GM_BUILD/gpumem.1 not built since ./gpumem was (make builds it)"
fi

# The completion, sourced into bash; complete WORD... sets COMP_WORDS to
# the words (the last the one under the cursor), calls _gpumem and prints
# COMPREPLY sorted, a space after each. It runs in a folder that holds one
# folder, runs/, and nothing else.
comp=$TEST_TMP/gpumem.bash
"$GPUMEM" help --completion bash >"$comp"
is "$?:$(bash -n "$comp" 2>&1)" "0:" "gpumem help --completion bash: exit status 0, a script bash reads"
mkdir -p "$TEST_TMP/empty" "$TEST_TMP/empty/runs"
complete_words() {
    (cd "$TEST_TMP/empty" && bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpumem
        printf "%s\n" "${COMPREPLY[@]}"' complete "$comp" "$@") | grep -v '^$' | sort | tr '\n' ' '
}
# the help's option names of a command, and --help
help_options() { "$GPUMEM" $1 --help | help_entries | sed 's/ .*//' | sort -u | tr '\n' ' '; }

is "$(complete_words gpumem bench --pre)" "$(help_options bench | tr ' ' '\n' | grep '^--pre' | tr '\n' ' ')" \
    "gpumem bench --pre<TAB>: the options of bench --help that start so (--prealloc, --precision, --preempt, --prefill-requests)"
like "$(complete_words gpumem bench --pre)" "^--prealloc --precision --preempt --prefill-requests $" \
    "... which are --prealloc, --precision, --preempt and --prefill-requests"
for cmd in $commands; do
    is "$(complete_words gpumem $cmd --)" "$(printf '%s\n' $(help_options $cmd) --help | sort | tr '\n' ' ')" \
        "gpumem $cmd --<TAB>: every option of its --help, and --help"
done
# Every enumeration and list: the values its --help allows ("one of a | b",
# "any of a, b"), in every command.
wrong=""
for cmd in $commands; do
    "$GPUMEM" $cmd --help | help_entries | perl -ne 'print "$1 $3\n" if /^(--\S+) \S+ .*?: (one|any) of (.*?)(?: \(default: .*)?$/' \
    | while read -r opt values; do
        want=$(echo "$values" | tr -d ',|' | tr -s ' ' '\n' | sort | tr '\n' ' ')
        got=$(complete_words gpumem $cmd "$opt" '')
        [ "$got" = "$want" ] || echo "$cmd $opt: got '$got' want '$want'"
    done >>"$TEST_TMP/wrong"
done
is "$(cat "$TEST_TMP/wrong")" "" "every enumeration's and list's values, as its command's --help allows them"
n_values=$(for cmd in $commands; do "$GPUMEM" $cmd --help | help_entries | grep -c -E ': (one|any) of '; done | paste -sd+ | bc)
ok $([ "$n_values" -ge 20 ]; echo $?) "... $n_values options with allowed values checked"
is "$(complete_words gpumem plan --precision fp32,b)" "fp32,bf16 " "a list completes its last item: --precision fp32,b<TAB>"
is "$(complete_words gpumem bench --precision = fp8e)" "fp8e4m3 fp8e5m2 " "--precision=fp8e<TAB> (bash splits at '=')"
is "$(complete_words gpumem bench --backend = '')" "auto cuda opencl " "--backend=<TAB>"

presets=$(ls share/models/*.json | sed 's|.*/||; s|\.json$||' | sort | tr '\n' ' ')
with_runs() { printf '%s\n' runs $1 | sort | tr '\n' ' '; }
is "$(complete_words gpumem bench --model '')" "$(with_runs "$presets")" \
    "gpumem bench --model <TAB>: every preset of share/models/, and the paths there"
is "$(complete_words gpumem plan --model '')" "$(with_runs "$presets")" "gpumem plan --model <TAB>: the same"
is "$(complete_words gpumem plan --model llama-3)" "$(echo "$presets" | tr ' ' '\n' | grep '^llama-3' | tr '\n' ' ')" \
    "gpumem plan --model llama-3<TAB>: the presets that start so"
is "$(complete_words gpumem bench --profile '')" "$(with_runs "$(ls share/profiles/*.ini | sed 's|.*/||; s|\.ini$||')")" \
    "gpumem bench --profile <TAB>: every profile of share/profiles/, and the paths there"
is "$(complete_words gpumem bench --out '')" "runs " "gpumem bench --out <TAB>: folders"
is "$(complete_words gpumem st)" "stress " "gpumem st<TAB>: the command"
is "$(complete_words gpumem help co)" "compare " "gpumem help co<TAB>: a command"
refs=$(ls -d results/reference/*/ | xargs -n1 basename | sort | tr '\n' ' ')
is "$(complete_words gpumem compare reference : '')" "$refs" "gpumem compare reference:<TAB>: every reference run"
is "$(complete_words gpumem compare ref)" "$(printf 'reference:%s\n' $refs | tr '\n' ' ')" \
    "gpumem compare ref<TAB>: reference:NAME for each"
is "$(complete_words gpumem compare '')" "$(printf '%s\n' runs $(printf 'reference:%s\n' $refs) | sort | tr '\n' ' ')" \
    "gpumem compare <TAB>: folders and the reference runs"
if [ -f "$GM_BUILD/gpumem.bash-completion" ] && [ ! "$GM_BUILD/gpumem.bash-completion" -ot "$GPUMEM" ]; then
    cmp -s "$GM_BUILD/gpumem.bash-completion" "$comp"
    ok $? "the completion make built ($GM_BUILD/gpumem.bash-completion) is the binary's"
else
    skip "$GM_BUILD/gpumem.bash-completion not built since ./gpumem was (make builds it)"
fi

run_gpumem help --completion zsh
is "$RC:$ERR" "2:gpumem help: --completion 'zsh': unknown shell (allowed: bash)" "--completion of another shell: one line, exit 2"
done_testing
