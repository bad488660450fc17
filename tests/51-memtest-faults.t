#!/bin/sh
# memtest checks every word of its chunks on the device (nothing is
# sampled): a word struck anywhere in a chunk, drawn from a seed
# (GPUMEM_FAULT=corrupt-output overwrites it, flip-output-bit flips one of
# its bits), is the one error it reports, at the struck word's address,
# with the flipped bit.
. tests/lib.sh
plan 15

for kind in corrupt-output flip-output-bit; do
    for seed in 1 2; do
        GPUMEM_FAULT=$kind GPUMEM_FAULT_SEED=$seed run_gpumem stress --backend opencl --mem-limit 32MiB \
            --fill 50% --checks memtest --out "$TEST_TMP/$kind-$seed"
        word=$(printf '%s\n' "$ERR" | sed -n "s/^gpumem: fault: $kind struck element \([0-9]*\) of .*/\1/p")
        bit=$(printf '%s\n' "$ERR" | sed -n "s/^gpumem: fault: $kind struck .* (bit \([0-9]*\))$/\1/p")
        is "$RC" 1 "$kind, seed $seed: exit status 1"
        address=$(printf '0x%x' $((${word:-0} * 4)))
        like "$OUT" "not ok 1 - memtest
  ---
(  [A-Za-z0-9_]+: .*
)*  errors: 1
  bit_positions: \\[${bit:-[0-9, ]+}\\]
  first_failures: \\[\"chunk 0 \\+ $address\"\\]" \
            "$kind, seed $seed: one error, at the struck word ${word:-?} ($address)${bit:+, bit $bit}"
        eval "word_${seed}_$(echo $kind | tr - _)=\$word"
    done
done
[ -n "$word_1_corrupt_output" ] && [ "$word_1_corrupt_output" != "$word_2_corrupt_output" ]
ok $? "seeds 1 and 2 strike different words ($word_1_corrupt_output, $word_2_corrupt_output)"

GPUMEM_FAULT=flip-output-bit GPUMEM_FAULT_SEED=seven run_gpumem stress --backend opencl --mem-limit 32MiB \
    --checks memtest --out "$TEST_TMP/bad-seed"
is "$RC" 2 "a seed that is not a whole number: exit status 2"
like "$ERR" "GPUMEM_FAULT_SEED 'seven': not a whole number" "naming it"
GPUMEM_FAULT=flip-output run_gpumem stress --backend opencl --mem-limit 32MiB --checks memtest \
    --out "$TEST_TMP/bad-fault"
is "$RC" 2 "an unknown fault: exit status 2"
like "$ERR" "not a stress fault \\(.*flip-output-bit\\)" "listing the faults, output faults included"

# Without a fault the same memory tests clean.
run_gpumem stress --backend opencl --mem-limit 32MiB --fill 50% --checks memtest --out "$TEST_TMP/clean"
is "$RC" 0 "without a fault memtest passes"
like "$OUT" "ok 1 - memtest
  ---
(  [A-Za-z0-9_]+: .*
)*  errors: 0" "with no error"
done_testing
