# Functions only, for the side-by-side scripts (bench/tools/peers.sh,
# bench/tools/precisions.sh): give it to awk before the program that calls them
# (awk -f bench/tools/median.awk -f PROGRAM, or its text before the program's).

# sort_numbers(v, n): sorts v[1..n] in place, smallest first (insertion
# sort: the lists are a few rounds or repetitions long).
function sort_numbers(v, n,    i, j, x) {
    for (i = 2; i <= n; i++) {
        x = v[i]
        for (j = i - 1; j >= 1 && v[j] > x; j--)
            v[j + 1] = v[j]
        v[j + 1] = x
    }
}

# median(v, n): the median of v[1..n] (n >= 1), the mean of the middle two
# when n is even. Sorts v in place, so that v[1] and v[n] are then its
# minimum and maximum.
function median(v, n) {
    sort_numbers(v, n)
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
