# Kernel variants, shared by the CUDA build (one fatbin each) and the
# compile test. A variant key's '-'-separated tokens become -DGM_<TOKEN>=1
# (the same rule as gm_variant_defines in src/backend/kernel_sources.c).
# The OpenCL backend builds any variant from the embedded source at run
# time; these lists are the images the CUDA backend can load, and a
# variant not listed fails its lookup there ("no CUDA image for ...").
PRECISIONS := fp32 fp16 bf16 int8
# fp8 (OCP e4m3, e5m2): every stream kernel and workload.
FP8 := fp8e4m3 fp8e5m2
# The access patterns of the CUDA images. Grid alone, but for the stream
# kernels: every workload, the swap suite's touch and the stress checks
# take their access from gm_device_prefers_chunked (src/device/policy.c),
# false on a GPU, so they ask for grid on CUDA; the stream suite's
# --access chunked|both runs the chunked kernels on any device, so the
# stream images carry both.
ACCESS := grid
STREAM_ACCESSES := grid chunked

# Every kernels/NAME.cl is a program. A program gets the standard
# precision variants unless it sets NAME_VARIANTS here.
KERNEL_PROGRAMS := $(sort $(basename $(notdir $(wildcard kernels/*.cl))))
STANDARD_VARIANTS := $(foreach p,$(PRECISIONS),$(p)-$(ACCESS))
# touch works on 32-bit words: the precision does not matter.
touch_VARIANTS := fp32-$(ACCESS)
memtest_VARIANTS := fp32-$(ACCESS)
# convert: the device conversions checked against the host's.
convert_VARIANTS := fp32-$(ACCESS)
FP8_VARIANTS := $(foreach p,$(FP8),$(p)-$(ACCESS))
# int4 weights (packed, group scales) with 16-bit activations: linear only.
INT4_VARIANTS := $(foreach p,fp16 bf16,$(p)-wint4-$(ACCESS))
# An fp8 KV cache beside 16-bit activations (--kv-precision).
KV_FP8_VARIANTS := $(foreach p,fp16 bf16,$(foreach k,$(FP8),$(p)-kv$(k)-$(ACCESS)))
linear_VARIANTS := $(STANDARD_VARIANTS) $(FP8_VARIANTS) $(INT4_VARIANTS)
# abft: the whole model's product checksums (bench/workloads/product_device_check.h):
# fp32, fp16, bf16, int8 and fp8 products, int4 weights beside 16-bit activations.
abft_VARIANTS := $(STANDARD_VARIANTS) $(FP8_VARIANTS) $(INT4_VARIANTS)
kvcache_VARIANTS := $(STANDARD_VARIANTS) $(FP8_VARIANTS) $(KV_FP8_VARIANTS)
# block and the whole model build each program with the role tokens it
# reads: linear.cl the weights' (above), attention.cl and block.cl the KV
# cache's, model.cl none.
attention_VARIANTS := $(STANDARD_VARIANTS) $(FP8_VARIANTS) $(KV_FP8_VARIANTS)
block_VARIANTS := $(STANDARD_VARIANTS) $(FP8_VARIANTS) $(KV_FP8_VARIANTS)
model_VARIANTS := $(STANDARD_VARIANTS) $(FP8_VARIANTS)
stream_VARIANTS := $(foreach p,$(PRECISIONS) $(FP8),$(foreach a,$(STREAM_ACCESSES),$(p)-$(a)))
# The training step's kernels (train.cl) store activations and gradients in
# a floating-point precision that trains.
train_VARIANTS := $(foreach p,fp32 fp16 bf16,$(p)-$(ACCESS))
# serve: the serving engine runs fp32, fp16 and bf16 (bench/workloads/serve_engine.c);
# its chunked kernel (CPU devices) takes the head size as defines at run
# time, and its per-item arrays would set the stack every CUDA context
# reserves (scripts/embed-kernels.sh).
serve_VARIANTS := $(foreach p,fp32 fp16 bf16,$(p)-$(ACCESS))
$(foreach p,$(KERNEL_PROGRAMS),$(if $($(p)_VARIANTS),,$(eval $(p)_VARIANTS := $(STANDARD_VARIANTS))))

# Architectures every variant is compiled for (machine code), plus PTX so
# that later GPUs can compile it at load.
CUDA_ARCHS := 75 80 90
# Machine code for more architectures where a variant's code differs there.
# The stream kernels' fp8 variants convert in hardware from sm_89 on
# (GM_FP8_CVT in gm_portable.h); without sm_89 code of their own an sm_89
# card (L4, L40S, RTX 4090) would run sm_80's software conversions. Every
# other variant's sm_89 code would be sm_80's, which such a card runs.
CUDA_FP8_CVT_ARCHS := 89
# cuda_arch_specific(PROGRAM,VARIANT): non-empty for a variant whose code
# reads __CUDA_ARCH__ (GM_FP8_CVT, the one place the kernels do): the
# stream kernels' fp8 variants. Each architecture's machine code of such a
# variant comes from its own PTX; every other variant's from one PTX, that
# of the oldest architecture, which gives the same machine code byte for
# byte (sm_80's and sm_90's of the model, abft, block, kvcache, linear,
# serve, train and stream programs compared: only the .note.nv.cuinfo
# section, which names the PTX, differs) at one front-end pass, not three.
cuda_arch_specific = $(and $(filter stream,$(1)),$(filter $(addsuffix -%,$(FP8)),$(2)))
# cuda_archs(PROGRAM,VARIANT): the architectures of one variant's image, in
# ascending order.
cuda_archs = $(filter-out $(lastword $(CUDA_ARCHS)),$(CUDA_ARCHS)) \
             $(if $(call cuda_arch_specific,$(1),$(2)),$(filter-out $(CUDA_ARCHS),$(CUDA_FP8_CVT_ARCHS))) \
             $(lastword $(CUDA_ARCHS))
