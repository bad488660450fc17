# Draws the panels: for each word p of `panels`, `base.p.dat` holds one
# block per series (solid lines) and `base.p.dashed.dat`, when present, one
# block per series drawn dashed (the memory model's prediction, or p99
# beside p50). Each block's first line is its title. Kind scripts set the
# axes first, then `load plotdir."/panels.gp"`.
if (npanels > 1) { set multiplot layout 1, npanels }
do for [p = 1:npanels] {
    panel = word(panels, p)
    solid = sprintf("%s.%s.dat", base, panel)
    dashed = sprintf("%s.%s.dashed.dat", base, panel)
    if (npanels > 1) { set title panel } else { set title title_text }
    stats solid nooutput
    n = STATS_blocks
    m = 0
    if (system(sprintf("test -s '%s' && echo 1 || echo 0", dashed)) == 1) {
        stats dashed nooutput
        m = STATS_blocks
    }
    plot for [i = 0:n-1] solid index i using 1:2 title columnheader(1) lw 2 lc rgb colours[i % 8 + 1], \
         for [i = 0:m-1] dashed index i using 1:2 title columnheader(1) dt 2 lw 2 lc rgb colours[i % 8 + 1]
}
if (npanels > 1) { unset multiplot }
