#!/bin/sh
# bench/tools/peers.sh (make peers): its settings are checked before anything
# runs, and on a device taken as a GPU (PEERS_MODE=gpu) it compares our
# read with the theoretical peak instead of clpeak and runs no host triad:
# here, through PoCL, gpumem info gives no memory clock, so the read is
# shown and not judged. (The CPU mode needs clpeak, and BabelStream is
# never installed by us: both are compared by hand, docs/side-by-side.md.)
. tests/lib.sh
plain_pass_only "peers.sh is a script"
plan 6
out=$(PEERS_MODE=xpu sh bench/tools/peers.sh 2>&1)
is "$?" 2 "an unknown PEERS_MODE: exit 2"
like "$out" "PEERS_MODE must be cpu or gpu" "and the message names the setting"
out=$(PEERS_DEVICE=63 sh bench/tools/peers.sh 2>&1)
is "$?-$(printf '%s' "$out" | grep -c 'lists no device opencl:63')" "2-1" "a device gpumem info does not list: exit 2, named"
out=$(PEERS_MODE=gpu PEERS_SIZE=1048576 PEERS_ROUNDS=2 PEERS_REPS=2 sh bench/tools/peers.sh 2>&1)
is "$?" 0 "GPU mode without BabelStream: nothing to judge but the read, which has no peak here"
like "$out" "round +read +peak +ratio \| +triad +omp" "its table names the peak as the read's peer"
like "$out" "read \(median\) +[0-9.]+ \(no theoretical peak: gpumem info gives no memory clock\)" \
    "and the summary shows our read, not judged"
done_testing
