# workloads: throughput against batch size, one line per workload,
# implementation, precision and sequence length.
load plotdir."/style.gp"
title_text = "Throughput by batch size"
set xlabel "batch"
set ylabel "GFLOP/s"
set logscale x 2
load plotdir."/panels.gp"
