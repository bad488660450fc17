# stream: bandwidth against array size (bytes per array), a panel per
# kernel family (the two kernels of a panel move bytes alike: the first
# solid, the second dashed), a colour per precision.
load plotdir."/style.gp"
title_text = "Bandwidth by array size"
panel_title(p) = p eq "read-write" ? "read (solid), write (dashed)" : \
                 p eq "copy-scale" ? "copy (solid), scale (dashed)" : \
                 p eq "add-triad" ? "add (solid), triad (dashed)" : p
set xlabel "array size"
set ylabel "GB/s"
set logscale x 2
@bytes_x
# `logy` (gpumem compare of cards, whose bandwidths differ by orders of
# magnitude): y on a logarithmic axis.
if (exists("logy")) { set logscale y } else { set yrange [0:*] }
# Where `llc` (bytes) is given: the last-level cache and 4x it marked; the
# headline's device-memory bandwidth comes from arrays right of the second.
if (exists("llc")) {
    set arrow 1 from llc, graph 0 to llc, graph 1 nohead dt 3 lw 1.5 lc rgb "#888888" front
    set arrow 2 from 4*llc, graph 0 to 4*llc, graph 1 nohead dt 3 lw 1.5 lc rgb "#444444" front
    set label 1 sprintf("cache %s ", bytes_label(llc)) at llc, graph 0.97 right font ",9" tc rgb "#666666" front
    set label 2 "4x cache " at 4*llc, graph 0.92 right font ",9" tc rgb "#444444" front
}
load plotdir."/panels.gp"
