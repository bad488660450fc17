# serve: decode tokens/s against the running sequences, one line per model,
# precision and request length; dashed, the tokens/s the device memory
# allows (the stream suite's read bandwidth over the bytes a step reads).
load plotdir."/style.gp"
title_text = "Decode throughput by running sequences"
set xlabel "running sequences"
set ylabel "decode tokens/s"
set logscale x 2
load plotdir."/panels.gp"
