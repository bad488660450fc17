# Memory in use over time: the device memory the run's processes held
# (main process and oom-suite workers together), one colour per suite or
# stress check, drawn as steps at every allocation and free. Where `cap`
# (bytes) is given, the run's memory cap is drawn across the plot in red;
# a cap more than four times the peak held is named in the key instead,
# so that the steps keep the height of the plot. `base.caps.dat`, when
# present, holds a suite's own cap over its time (one block each, red).
load plotdir."/style.gp"
set title "Device memory held by the run"
set xlabel "time since the run started (s)"
set ylabel "MiB"
set yrange [0:*]
set key outside right top box opaque font ",9"
solid = sprintf("%s.all.dat", base)
stats solid nooutput
n = STATS_blocks
peak = STATS_max_y
caps = sprintf("%s.caps.dat", base)
m = 0
if (nonempty(caps)) {
    stats caps nooutput
    m = STATS_blocks
    peak = STATS_max_y > peak ? STATS_max_y : peak
}
if (!exists("cap")) { cap = 0 }
cap_mib = cap / 1048576.0
capfar = cap > 0 && cap_mib > 4 * peak
if (cap > 0 && !capfar) { set yrange [0:cap_mib * 1.08] }
if (cap <= 0 || capfar) { set yrange [0:peak * 1.08] }
cap_title = capfar ? sprintf("run's cap %s (off the scale)", bytes_label(cap)) : sprintf("run's cap %s", bytes_label(cap))
# gnuplot opens a file even for an empty iteration: the caps only where there are some
if (m > 0) {
    plot for [i = 0:n-1] solid index i using 1:2 with steps title columnheader(1) lw 2 lc rgb colours[i % 8 + 1], \
         for [i = 0:m-1] caps index i using 1:2 with lines title columnheader(1) dt 2 lw 2.5 lc rgb "#c00000", \
         (cap > 0 && !capfar ? cap_mib : NaN) with lines title (cap > 0 ? cap_title : "") dt 2 lw 2 lc rgb "#c00000"
} else {
    plot for [i = 0:n-1] solid index i using 1:2 with steps title columnheader(1) lw 2 lc rgb colours[i % 8 + 1], \
         (cap > 0 && !capfar ? cap_mib : NaN) with lines title (cap > 0 ? cap_title : "") dt 2 lw 2 lc rgb "#c00000"
}
