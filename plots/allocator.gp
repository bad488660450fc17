# oom: allocation latency (p50) against how full the device is, one line
# per allocator and block size.
load plotdir."/style.gp"
title_text = "Allocation latency by fill level"
set xlabel "device filled first (%)"
set ylabel "allocation latency p50 (us)"
set logscale y
load plotdir."/panels.gp"
