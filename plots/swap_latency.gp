# swap: transfer latency against block size per host memory path and
# direction: p50 solid, p99 dashed (the band between them is the tail).
load plotdir."/style.gp"
title_text = "Transfer latency"
set xlabel "block size"
set ylabel "latency (us)"
set logscale xy
@bytes_x
load plotdir."/panels.gp"
