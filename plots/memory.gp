# Memory in use over time: the device memory the run's processes held
# (main process and oom-suite workers together), one colour per suite or
# stress check, drawn as steps at every allocation and free.
load plotdir."/style.gp"
set title "Device memory held by the run"
set xlabel "time since the run started (s)"
set ylabel "MiB"
set yrange [0:*]
set key outside right top box opaque font ",9"
solid = sprintf("%s.all.dat", base)
stats solid nooutput
n = STATS_blocks
plot for [i = 0:n-1] solid index i using 1:2 with steps title columnheader(1) lw 2 lc rgb colours[i % 8 + 1]
