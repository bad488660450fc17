# Functions only, for the scripts that read a run folder's CSV files
# (bench/tools/precisions.sh, bench/tools/card_check.sh): give it to awk before the
# program that calls them (awk -f bench/tools/csv.awk -f PROGRAM).

# Splits one CSV record (quoted fields may hold commas, doubled quotes and
# newlines) into f[1..n]; returns n.
function csv_split(s, f,    n, i, c, field, quoted) {
    if (index(s, "\"") == 0)
        return split(s, f, ",")
    n = 0
    field = ""
    quoted = 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (quoted) {
            if (c != "\"")
                field = field c
            else if (substr(s, i + 1, 1) == "\"") {
                field = field c
                i++
            } else
                quoted = 0
        } else if (c == "\"")
            quoted = 1
        else if (c == ",") {
            f[++n] = field
            field = ""
        } else
            field = field c
    }
    f[++n] = field
    return n
}

# csv_gather(line): adds an input line to the record being gathered (a
# quoted field may run over several lines) and returns 1 when the record
# is whole, its quotes paired, leaving it in csv_record; 0 while it is
# not. Set csv_pending = "" at the start of each file.
function csv_gather(line,    q) {
    csv_pending = csv_pending == "" ? line : csv_pending "\n" line
    q = csv_pending
    if (gsub(/"/, "", q) % 2)
        return 0
    csv_record = csv_pending
    csv_pending = ""
    return 1
}
