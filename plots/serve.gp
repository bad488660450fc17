# serve: decode tokens/s against the running sequences, one line per model,
# precision and request length; dashed, the tokens/s the device memory
# allows (the bytes a step reads at the rate of the KV pool's read timed
# beside the steps, or the stream suite's read: the rows' note).
load plotdir."/style.gp"
title_text = "Decode throughput by running sequences"
set xlabel "running sequences"
set ylabel "decode tokens/s"
set logscale x 2
load plotdir."/panels.gp"
