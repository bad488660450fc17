# Draws the panels: for each word p of `panels`, `base.p.dat` holds one
# block per series (solid lines) and `base.p.dashed.dat`, when present, one
# block per series drawn dashed (the memory model's prediction, or p99
# beside p50), and `base.p.band.dat`, when present, one block per band
# ("x low high": the p50 to p99 spread, filled). Each block's first line is
# its title. `base.p.off`, when not empty, names (each in double quotes)
# the series with no point on the axes: a y of 0 where y is logarithmic.
# They are listed in the legend, followed by `off_axis_text` (a kind script
# may set it); a panel with nothing else to draw says so in its middle.
# `base.p.colours` holds the colour number of every block of the three
# files, a line each (solid, dashed, band): a series, its dashed
# counterpart and its band share one.
# Kind scripts set the axes first, then `load plotdir."/panels.gp"`.
if (!exists("off_axis_text")) { off_axis_text = "0, not drawn on the logarithmic axis" }
# The colour of block i (from 0) of a line of colour numbers.
colour_of(numbers, i) = colours[int(word(numbers, i + 1)) % 8 + 1]
if (npanels > 1) { set multiplot layout prows, pcols }
do for [p = 1:npanels] {
    panel = word(panels, p)
    solid = sprintf("%s.%s.dat", base, panel)
    dashed = sprintf("%s.%s.dashed.dat", base, panel)
    if (npanels > 1) { set title panel_title(panel) } else { set title title_text }
    off = system(sprintf("cat '%s.%s.off' 2>/dev/null", base, panel))
    numbers = sprintf("%s.%s.colours", base, panel)
    c_solid = system(sprintf("sed -n 1p '%s'", numbers))
    c_dashed = system(sprintf("sed -n 2p '%s'", numbers))
    c_band = system(sprintf("sed -n 3p '%s'", numbers))
    # Each file's blocks, where it has some (nonempty: style.gp).
    n = 0
    m = 0
    b = 0
    if (nonempty(solid)) {
        stats solid nooutput
        n = STATS_blocks
    }
    if (nonempty(dashed)) {
        stats dashed nooutput
        m = STATS_blocks
    }
    band = sprintf("%s.%s.band.dat", base, panel)
    if (nonempty(band)) {
        stats band nooutput
        b = STATS_blocks
    }
    if (n + m == 0) {
        # nothing on the axes: an empty frame naming what is missing
        missing = ""
        do for [i = 1:words(off)] { missing = missing.(i > 1 ? "\n" : "").word(off, i) }
        set label 99 missing."\n".off_axis_text at graph 0.5, graph 0.5 center font ",10"
        set key off
        plot [1:2] [1:2] NaN notitle
        set key on
        unset label 99
        continue
    }
    layers = ""
    if (b > 0) {
        layers = layers.", for [i = 0:b-1] band index i using 1:2:3 with filledcurves notitle fs transparent solid 0.15 noborder lc rgb colour_of(c_band, i)"
    }
    if (n > 0) {
        layers = layers.", for [i = 0:n-1] solid index i using 1:2 title columnheader(1) lw 2 lc rgb colour_of(c_solid, i)"
    }
    if (m > 0) {
        layers = layers.", for [i = 0:m-1] dashed index i using 1:2 title columnheader(1) dt 2 lw 2 lc rgb colour_of(c_dashed, i)"
    }
    if (words(off) > 0) {
        layers = layers.", for [i = 1:words(off)] keyentry title word(off, i).': '.off_axis_text"
    }
    eval "plot ".layers[3:]
}
if (npanels > 1) { unset multiplot }
