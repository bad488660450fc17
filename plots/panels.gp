# Draws the panels: for each word p of `panels`, `base.p.dat` holds one
# block per series (solid lines) and `base.p.dashed.dat`, when present, one
# block per series drawn dashed (the memory model's prediction, or p99
# beside p50), and `base.p.band.dat`, when present, one block per band
# ("x low high": the p50 to p99 spread, filled). Each block's first line is
# its title. Kind scripts set the
# axes first, then `load plotdir."/panels.gp"`.
if (npanels > 1) { set multiplot layout prows, pcols }
do for [p = 1:npanels] {
    panel = word(panels, p)
    solid = sprintf("%s.%s.dat", base, panel)
    dashed = sprintf("%s.%s.dashed.dat", base, panel)
    if (npanels > 1) { set title panel_title(panel) } else { set title title_text }
    stats solid nooutput
    n = STATS_blocks
    m = 0
    b = 0
    band = sprintf("%s.%s.band.dat", base, panel)
    if (system(sprintf("test -s '%s' && echo 1 || echo 0", band)) == 1) {
        stats band nooutput
        b = STATS_blocks
    }
    if (system(sprintf("test -s '%s' && echo 1 || echo 0", dashed)) == 1) {
        stats dashed nooutput
        m = STATS_blocks
    }
    # gnuplot opens a file even for an empty iteration: the bands only where there are some
    if (b > 0) {
        plot for [i = 0:b-1] band index i using 1:2:3 with filledcurves notitle fs transparent solid 0.15 noborder \
                 lc rgb colours[i % 8 + 1], \
             for [i = 0:n-1] solid index i using 1:2 title columnheader(1) lw 2 lc rgb colours[i % 8 + 1], \
             for [i = 0:m-1] dashed index i using 1:2 title columnheader(1) dt 2 lw 2 lc rgb colours[i % 8 + 1]
    } else {
        plot for [i = 0:n-1] solid index i using 1:2 title columnheader(1) lw 2 lc rgb colours[i % 8 + 1], \
             for [i = 0:m-1] dashed index i using 1:2 title columnheader(1) dt 2 lw 2 lc rgb colours[i % 8 + 1]
    }
}
if (npanels > 1) { unset multiplot }
