# The style every gpumem plot shares. The caller (gpumem plot) sets:
#   term   "png" or "svg";  out  the output file;  npanels  how many panels.
if (term eq "svg") {
    set terminal svg size 900*npanels, 560 dynamic enhanced font "sans,12" background "white"
} else {
    set terminal pngcairo size 900*npanels, 560 enhanced font "sans,11"
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
