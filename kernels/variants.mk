# Kernel variants, shared by the CUDA build (one fatbin each) and the
# compile test. A variant key's '-'-separated tokens become -DGM_<TOKEN>=1
# (the same rule as gm_variant_defines in src/kernel_sources.c).
PRECISIONS := fp32 fp16 bf16 int8
ACCESSES   := grid chunked

# Every kernels/NAME.cl is a program. A program gets the standard
# precision x access variants unless it sets NAME_VARIANTS here.
KERNEL_PROGRAMS := $(sort $(basename $(notdir $(wildcard kernels/*.cl))))
STANDARD_VARIANTS := $(foreach p,$(PRECISIONS),$(foreach a,$(ACCESSES),$(p)-$(a)))
# touch works on 32-bit words: the precision does not matter.
touch_VARIANTS := fp32-grid fp32-chunked
memtest_VARIANTS := fp32-grid fp32-chunked
$(foreach p,$(KERNEL_PROGRAMS),$(if $($(p)_VARIANTS),,$(eval $(p)_VARIANTS := $(STANDARD_VARIANTS))))

# Architectures every variant is compiled for (machine code), plus PTX for
# the newest so that later GPUs can JIT it.
CUDA_ARCHS := 75 80 90
