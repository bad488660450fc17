# oom: external fragmentation (the share of free memory no single
# allocation can have) after filling a share of free memory with mixed-size
# blocks and freeing some of them, against that fill level.
load plotdir."/style.gp"
title_text = "Fragmentation by fill level"
set xlabel "fill level before freeing (% of free memory)"
set ylabel "free memory unusable as one block (%)"
set xrange [0:100]
set yrange [0:*]
load plotdir."/panels.gp"
