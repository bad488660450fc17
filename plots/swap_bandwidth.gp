# swap: transfer bandwidth against block size per host memory path and direction.
load plotdir."/style.gp"
title_text = "Transfer bandwidth"
set xlabel "block size"
set ylabel "GB/s"
set logscale x
@bytes_x
load plotdir."/panels.gp"
