# oom: the OOM frontier. Largest batch against sequence length, one line
# per workload and precision, one panel per allocation pattern; dashed,
# the largest batch the memory model predicts for the same memory.
load plotdir."/style.gp"
title_text = "Largest batch that fits"
off_axis_text = "not even batch 1 fits"
set xlabel "sequence length"
set ylabel "largest batch (solid: measured, dashed: modelled)"
set offsets graph 0.04, graph 0.04, 0, 0
set logscale xy 2
load plotdir."/panels.gp"
