# The style every gpumem plot shares. The caller (gpumem plot) sets:
#   term   "png" or "svg";  out  the output file;  npanels  how many panels.
# Up to three panels stand side by side; more go on two rows.
prows = npanels > 3 ? 2 : 1
pcols = int((npanels + prows - 1) / prows)
if (term eq "svg") {
    set terminal svg size 900*pcols, 560*prows dynamic enhanced font "sans,12" background "white"
} else {
    set terminal pngcairo size 900*pcols, 560*prows enhanced font "sans,11"
}
set output out
set grid lc rgb "#dddddd"
set key outside right top box opaque font ",9"
set border lw 1.2
set datafile separator whitespace
set style data linespoints
set pointsize 0.7
# Eight distinguishable colours, then again.
array colours[8] = ["#1b6ca8", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#444444"]
# A panel's title from its name (the word in `panels`); a kind script may
# redefine it after loading this file.
panel_title(p) = p
# Sizes in binary units: `@bytes_x` after `set logscale x` puts a tic
# labelled 1KiB, 4KiB, 16KiB, ... 64MiB, 1GiB ... at every power of four.
bytes_label(b) = b >= 2.0**40 ? sprintf("%.3gTiB", b / 2.0**40) : b >= 2.0**30 ? sprintf("%.3gGiB", b / 2.0**30) : \
                 b >= 2.0**20 ? sprintf("%.3gMiB", b / 2.0**20) : b >= 2.0**10 ? sprintf("%.3gKiB", b / 2.0**10) : \
                 sprintf("%gB", b)
bytes_x = 'set xtics (bytes_label(1) 1); do for [e = 2:48:2] { set xtics add (bytes_label(2.0**e) 2.0**e) }; set mxtics 4; set offsets graph 0.04, graph 0.04, 0, 0'
# Whether a file holds data: gnuplot opens a file even for an empty
# iteration, and fails on one without data.
nonempty(file) = int(system(sprintf("test -s '%s' && echo 1 || echo 0", file)))
