# Checks on the files a run leaves, for the hardening tests.

# csv_whole FILE : prints "ok" when FILE is a whole CSV (a header, every
# record with the header's field count, quotes balanced, a final newline),
# else the first problem found.
csv_whole() {
    [ -f "$1" ] || { echo "missing"; return; }
    [ -s "$1" ] || { echo "empty"; return; }
    [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || { echo "does not end in a newline"; return; }
    awk '
        function fields(s,    i, c, n, inq) {
            n = 1; inq = 0
            for (i = 1; i <= length(s); i++) {
                c = substr(s, i, 1)
                if (c == "\"") inq = !inq
                else if (c == "," && !inq) n++
            }
            return n
        }
        { rec = pending ? rec "\n" $0 : $0
          q = rec; nq = gsub(/"/, "", q)
          if (nq % 2) { pending = 1; next }
          pending = 0; nr++
          n = fields(rec)
          if (nr == 1) { want = n; if (rec !~ /^schema_version,/) { print "header damaged: " rec; bad = 1; exit } }
          else if (n != want) { print "record " nr " has " n " fields, not " want; bad = 1; exit } }
        END { if (bad) exit; if (pending) print "unbalanced quotes at the end"; else print "ok" }
    ' "$1"
}

# point_keys FILE : the sorted point-and-metric key of every row of a
# results.csv (suite..bytes and metric), one a line.
point_keys() {
    perl -e "$CSV_PERL"'
        for (rows($ARGV[0])) { print join("|", @{$_}{qw(suite workload variant pattern precision batch seq_len bytes metric)}), "\n" }
    ' "$1" | sort
}
