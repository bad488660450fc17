# Kernel variants, shared by the CUDA build (one fatbin each) and the
# compile test. A variant key's '-'-separated tokens become -DGM_<TOKEN>=1
# (the same rule as gm_variant_defines in src/kernel_sources.c).
PRECISIONS := fp32 fp16 bf16 int8
ACCESSES   := grid chunked

KERNEL_PROGRAMS := stream linear attention kvcache block touch memtest
stream_VARIANTS := $(foreach p,$(PRECISIONS),$(foreach a,$(ACCESSES),$(p)-$(a)))
linear_VARIANTS := $(stream_VARIANTS)
attention_VARIANTS := $(stream_VARIANTS)
kvcache_VARIANTS := $(stream_VARIANTS)
block_VARIANTS := $(stream_VARIANTS)
# touch works on 32-bit words: the precision does not matter.
touch_VARIANTS := fp32-grid fp32-chunked
memtest_VARIANTS := fp32-grid fp32-chunked

# Architectures every variant is compiled for (machine code), plus PTX for
# the newest so that later GPUs can JIT it.
CUDA_ARCHS := 75 80 90
