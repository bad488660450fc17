# swap: transfer bandwidth against block size per host memory path and direction.
load plotdir."/style.gp"
title_text = "Transfer bandwidth"
set xlabel "block size (bytes)"
set ylabel "GB/s"
set logscale x
set format x "%.0b%BB"
load plotdir."/panels.gp"
