# The summary of bench/tools/precisions.sh: every stream kernel's bandwidth in
# each precision against fp32's, taken pairwise within each round.
#
#   awk -f bench/tools/median.awk -f bench/tools/csv.awk -f bench/tools/precisions.awk \
#       -v kernels="read triad" -v precisions="fp32 fp16" -v require=1 \
#       -v goal=0.9 -v llc=BYTES RUN/results.csv RUN/samples.csv
#
# kernels, precisions: the rows and columns, in print order (space
# separated); fp32, the reference, must be among the precisions. With
# require=1 each of them must be in the run; with require=0 those the run
# lacks are left out. llc: the device's last-level cache in bytes (0:
# unknown), for a note when the arrays are under 4x it.
#
# A run folder (results.csv, then samples.csv: see results/README.md) of
# one device, one access pattern and one array size. Every round must
# hold samples of every point shown. For each kernel k, precision p and
# round r: ratio(k, p, r) = median of the round's repetitions of (k, p)
# over the median of the same round's repetitions of (k, fp32). The table
# shows the median of ratio(k, p, r) over the rounds (and their min-max
# below it), and fp32's GB/s: the median over the rounds of its round
# medians. A cell whose median is below goal is marked with *; fp32 is
# the reference (1.000 by construction) and is not judged. Ratios print
# to 3 decimals, so that a mark is never on a figure that reads as the goal.
#
# Exit status: 0 every cell meets the goal, 1 a cell misses it, 2 a
# point failed (any results.csv row of the stream suite whose status is
# not ok: each is printed with its note, and nothing is judged) or the run
# cannot be judged (no samples, several devices, sizes or access patterns,
# a point missing from a round). Messages go to stderr.

function problem(msg) {
    print "precisions: " msg > "/dev/stderr"
    problems++
}

# The field named `name` of the current record of file `file`.
function get(name) {
    return (file SUBSEP name) in col ? rec[col[file, name]] : ""
}

# One value per run: a second distinct one is a problem.
function one(what, v) {
    if (!(what in only))
        only[what] = v
    else if (only[what] != v && !((what, v) in told)) {
        told[what, v] = 1
        problem("the run holds several " what " (" only[what] ", " v "): one only, please")
    }
}

# The median of the repetitions of (k, p) in round r.
function round_median(k, p, r,    i, t) {
    split("", t)
    for (i = 1; i <= reps[k, p, r]; i++)
        t[i] = sample[k, p, r, i]
    return median(t, reps[k, p, r])
}

FNR == 1 {
    file++
    csv_pending = ""
}
{
    if (!csv_gather($0))
        next
    line = csv_record
    if (line == "")
        next
    split("", rec)
    n = csv_split(line, rec)
    if (!((file, "header") in col)) {
        col[file, "header"] = 1
        for (i = 1; i <= n; i++)
            col[file, rec[i]] = i
        split(file == 1 ? "suite workload precision status note" : "suite workload precision metric value round bytes variant device_id device", need, " ")
        for (i = 1; i in need; i++)
            if (!((file, need[i]) in col))
                problem(FILENAME ": no column " need[i])
        next
    }
    if (get("suite") != "stream")
        next
    k = get("workload")
    p = get("precision")
    if (file == 1) {
        # results.csv: a failed point (one row per point) is never counted.
        if (get("status") != "ok" && !((k, p) in failed)) {
            failed[k, p] = 1
            nfailed++
            print "precisions: " k " " p ": " get("status") ": " get("note") > "/dev/stderr"
        }
        next
    }
    if (get("metric") != "bandwidth")
        next
    r = get("round") == "" ? 1 : get("round") + 0
    one("devices", get("device_id"))
    one("array sizes", get("bytes"))
    one("access patterns", get("variant"))
    device = get("device")
    bytes = get("bytes")
    variant = get("variant")
    if (!(r in seen_round)) {
        seen_round[r] = 1
        rounds[++nrounds] = r
    }
    have[k] = have[p] = 1
    sample[k, p, r, ++reps[k, p, r]] = get("value") + 0
    nsamples++
}
END {
    if (pending != "")
        problem(FILENAME ": a quoted field is not closed")
    if (nfailed) {
        problem(nfailed " point(s) failed (above, with their notes): no ratio is taken from this run")
        exit 2
    }
    if (file != 2)
        problem("give results.csv and samples.csv")
    else if (!nsamples)
        problem("no verified stream bandwidth samples in " FILENAME)
    if (problems)
        exit 2

    nk = 0
    split(kernels, K, " ")
    for (i = 1; i in K; i++)
        if (require || K[i] in have)
            klist[++nk] = K[i]
    np = 0
    split(precisions, P, " ")
    for (i = 1; i in P; i++)
        if (require || P[i] in have || P[i] == "fp32")
            plist[++np] = P[i]
    if (!nk || np < 2)
        problem("no kernel, or no precision besides fp32, to compare")
    sort_numbers(rounds, nrounds)
    for (a = 1; a <= nk; a++)
        for (b = 1; b <= np; b++)
            for (i = 1; i <= nrounds; i++)
                if (!((klist[a], plist[b], rounds[i]) in reps))
                    problem("no samples of " klist[a] " " plist[b] " in round " rounds[i])
    if (problems)
        exit 2

    fewest = most = reps[klist[1], "fp32", rounds[1]]
    for (a = 1; a <= nk; a++)
        for (b = 1; b <= np; b++)
            for (i = 1; i <= nrounds; i++) {
                n = reps[klist[a], plist[b], rounds[i]]
                if (n < fewest)
                    fewest = n
                if (n > most)
                    most = n
            }
    fmt_size = bytes >= 1048576 ? bytes / 1048576 "MiB" : bytes / 1024 "KiB"
    printf "%s (%s, %s access), %s arrays, %d round(s) of %s repetition(s)\n", device, only["devices"], variant,
        fmt_size, nrounds, fewest == most ? fewest : fewest "-" most
    printf "each precision's bandwidth over fp32's in the same round, median over the rounds (* below %s)\n", goal
    if (llc > 0 && bytes < 4 * llc)
        printf "note: the arrays are under 4x the %dMiB last-level cache: these ratios are the cache's, not the memory's\n",
            llc / 1048576
    printf "%-7s %10s", "kernel", "fp32 GB/s"
    for (b = 1; b <= np; b++)
        printf " %8s ", plist[b]
    printf "\n"
    misses = 0
    for (a = 1; a <= nk; a++) {
        k = klist[a]
        # fp32's round medians: the reference of each round.
        split("", t)
        for (i = 1; i <= nrounds; i++)
            ref[i] = t[i] = round_median(k, "fp32", rounds[i])
        printf "%-7s %10.2f", k, median(t, nrounds)
        for (b = 1; b <= np; b++) {
            p = plist[b]
            split("", t)
            for (i = 1; i <= nrounds; i++)
                t[i] = round_median(k, p, rounds[i]) / ref[i]
            m = median(t, nrounds)
            lo[k, p] = t[1]
            hi[k, p] = t[nrounds]
            miss = p != "fp32" && m < goal
            if (miss)
                missed[++misses] = k " " p " " sprintf("%.3f", m)
            printf " %8.3f%s", m, miss ? "*" : " "
        }
        printf "\n"
    }
    printf "\nspread over the rounds (min-max of the round ratios)\n%-7s %10s", "kernel", ""
    for (b = 1; b <= np; b++)
        if (plist[b] != "fp32")
            printf " %9s", plist[b]
    printf "\n"
    for (a = 1; a <= nk; a++) {
        printf "%-7s %10s", klist[a], ""
        for (b = 1; b <= np; b++)
            if (plist[b] != "fp32")
                printf " %9s", sprintf("%.2f-%.2f", lo[klist[a], plist[b]], hi[klist[a], plist[b]])
        printf "\n"
    }
    printf "\n"
    if (!misses) {
        printf "every precision at least %s x fp32 in every kernel (median over %d round(s))\n", goal, nrounds
        exit 0
    }
    printf "%d of %d cells below %s x fp32 (*):", misses, nk * (np - 1), goal
    for (i = 1; i <= misses; i++)
        printf " %s%s", missed[i], i < misses ? "," : ""
    printf "\n"
    exit 1
}
