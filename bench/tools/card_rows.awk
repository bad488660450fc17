# The rows of a run's results.csv worth quoting, a line each, for
# bench/tools/card_check.sh's summary:
#
#   awk -f bench/tools/csv.awk -f bench/tools/card_rows.awk -v metrics="max_batch probes" [-v failures=1] RUN/results.csv
#
# metrics: the metrics shown (space separated); with failures=1 a row
# whose status is not ok is shown too, whatever its metric. A line holds
# the point (workload, variant, pattern, precision, mode, batch, seq_len:
# those the row fills), then metric = value unit (4 significant digits
# for a fraction), the status where it is not ok, and the note's first
# line.
BEGIN {
    split(metrics, m, " ")
    for (i = 1; i in m; i++)
        wanted[m[i]] = 1
    split("workload variant pattern precision mode batch seq_len", point, " ")
}
FNR == 1 { csv_pending = "" }
{
    if (!csv_gather($0))
        next
    split("", f)
    n = csv_split(csv_record, f)
    if (!header) {
        header = 1
        for (i = 1; i <= n; i++)
            col[f[i]] = i
        next
    }
    status = f[col["status"]]
    metric = f[col["metric"]]
    if (!(metric in wanted) && !(failures && status != "ok"))
        next
    line = ""
    for (i = 1; i in point; i++) {
        v = f[col[point[i]]]
        if (v != "")
            line = line (point[i] == "batch" ? "batch " : point[i] == "seq_len" ? "seq " : "") v " "
    }
    value = f[col["value"]]
    if (value ~ /\./)
        value = sprintf("%.4g", value)
    line = line metric " = " value " " f[col["unit"]]
    if (status != "ok")
        line = line " [" status "]"
    note = f[col["note"]]
    sub(/\n.*/, "", note)
    if (note != "")
        line = line "; " note
    print "  " line
}
