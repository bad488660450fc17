# stream: bandwidth against array size, one line per kernel and precision.
load plotdir."/style.gp"
title_text = "Bandwidth by array size"
set xlabel "array size (bytes)"
set ylabel "GB/s"
set logscale x 2
set format x "%.0b%BB"
load plotdir."/panels.gp"
