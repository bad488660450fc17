# gpumem — GPU memory-pressure benchmarks for ML workloads.
#   make          build ./gpumem (OpenCL always; CUDA where nvcc is found), and
#                 the man page and bash completion it writes of itself
#   make bench    install what is missing (as root), build, run the quick profile, plot it
#   make stress   the stress checks as TAP (STRESS_ARGS=...)
#   make plots RUN=DIR   render a run folder's plots
#   make peers    our fp32 bandwidth side by side with clpeak, an OpenMP triad
#                 and a BabelStream the user built (BABELSTREAM=path; PEERS_*)
#   make precisions  every stream kernel in every precision against fp32 on
#                 one device, in rounds (PREC_*: see bench/tools/precisions.sh)
#   make test     build and run the TAP tests with prove
#   make SAN=1    build with AddressSanitizer and UndefinedBehaviorSanitizer
#   make fuzz     build the fuzz targets (tests/fuzz/fuzz_*.c) and run each for
#                 FUZZ_SECONDS (default 60)
#   make install  the binary, its data files, the reference runs, the man page,
#                 the bash completion and the docs under PREFIX (default
#                 /usr/local; DESTDIR=... stages it); make uninstall
#   make check    the same as make test
#   make clean

CC      ?= cc
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/gpumem
MANDIR  ?= $(PREFIX)/share/man
DOCDIR  ?= $(PREFIX)/share/doc/gpumem
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
PROFILE ?= quick
BENCH_ARGS ?=
NPROC   := $(shell nproc 2>/dev/null || echo 2)
SAN     ?= 0

include kernels/variants.mk

# The Makefile's own flags; CFLAGS, CPPFLAGS and LDFLAGS from the user add
# to them (make CFLAGS=-O0 builds without optimisation, with every warning).
GM_CFLAGS = -std=c11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -D_GNU_SOURCE -Isrc -I. -MMD -MP
ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
GM_CFLAGS += $(SAN_FLAGS)
LDFLAGS_SAN := -fsanitize=address,undefined
endif
CFLAGS  ?=
# inih and jansson are linked statically: the binary starts where neither is installed.
LDLIBS  := -Wl,-Bstatic -linih -ljansson -Wl,-Bdynamic -ldl -lm -lpthread

# CUDA: found through nvcc (on the PATH, else $(CUDA_HOME)/bin/nvcc, else
# /usr/local/cuda/bin/nvcc); `make NVCC=` builds without CUDA. The driver
# is loaded at run time (libcuda.so.1).
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(if $(CUDA_HOME),$(CUDA_HOME)/bin/nvcc)),$(wildcard /usr/local/cuda/bin/nvcc))
# Objects differ with SAN and with CUDA, so each combination builds apart.
BUILD := build$(if $(filter 1,$(SAN)),-san)$(if $(NVCC),,-nocuda)
# The man page and the bash completion gpumem writes of itself (below).
MAN_PAGE := $(BUILD)/gpumem.1
BASH_COMPLETION := $(BUILD)/gpumem.bash-completion
HELP_PAGES := $(MAN_PAGE) $(BASH_COMPLETION)
ifneq ($(NVCC),)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(realpath $(NVCC)))
GM_CFLAGS += -DGM_HAVE_CUDA -isystem $(CUDA_HOME)/include
# nvcc_gencode_each(ARCHS): machine code for each from its own PTX, and
# the last's PTX too. nvcc_gencode_shared(ARCHS): machine code for each from
# the first's PTX, and that PTX (kernels/variants.mk, cuda_arch_specific).
nvcc_gencode_each = $(foreach a,$(filter-out $(lastword $(1)),$(1)),-gencode arch=compute_$(a),code=sm_$(a)) \
                    -gencode arch=compute_$(lastword $(1)),code=[sm_$(lastword $(1)),compute_$(lastword $(1))]
gm_comma := ,
gm_space := $(subst ,, )
nvcc_gencode_shared = -gencode arch=compute_$(firstword $(1)),code=[$(subst $(gm_space),$(gm_comma),$(strip \
                      $(addprefix sm_,$(1)) compute_$(firstword $(1))))]
# nvcc_gencode(PROGRAM,VARIANT): the image's -gencode options.
nvcc_gencode = $(if $(call cuda_arch_specific,$(1),$(2)),$(call nvcc_gencode_each,$(call cuda_archs,$(1),$(2))),$\
               $(call nvcc_gencode_shared,$(call cuda_archs,$(1),$(2))))
NVCC_FLAGS := -x cu -std=c++14 -O3 -Werror all-warnings -Xptxas -Werror -include kernels/gm_portable.h
variant_defines = $(foreach t,$(subst -, ,$(1)),-DGM_$(shell echo $(t) | tr a-z A-Z)=1)
# Images do not depend on SAN: every flavour shares build/cuda (CUDA_OUT).
CUDA_OUT ?= build/cuda
CUDA_IMAGES := $(foreach p,$(KERNEL_PROGRAMS),$(foreach v,$($(p)_VARIANTS),$(CUDA_OUT)/$(p).$(v).fatbin))
# ptxas's report beside each image: the stack frames the backend reserves at open.
CUDA_LOGS := $(CUDA_IMAGES:.fatbin=.ptxas.log)
else
CUDA_IMAGES :=
CUDA_LOGS :=
endif

# The layers, lowest first (see docs/development.md, "Layout").
LAYERS := src/lib src/backend src/backend/opencl src/backend/cuda src/device src/run \
          bench/model bench bench/pattern bench/stream bench/workloads bench/swap bench/oom bench/serve \
          stress src/analysis src/report src/cli
SRCS := $(foreach d,$(LAYERS),$(wildcard $(d)/*.c))
ifeq ($(NVCC),)
SRCS := $(filter-out src/backend/cuda/%.c,$(SRCS))
endif
ALL_CFLAGS = $(GM_CFLAGS) $(CPPFLAGS) $(CFLAGS)
OBJS := $(patsubst %.c,$(BUILD)/%.o,$(SRCS)) $(BUILD)/gen/kernel_table.o $(BUILD)/gen/kernel_blobs.o
KERNEL_FILES := kernels/gm_portable.h $(wildcard kernels/*.cl)

.PHONY: all bench plots stress test check install uninstall clean deps cuda-kernels peers precisions unit-tests fuzz fuzz-targets
all: gpumem $(HELP_PAGES)

# ./gpumem is relinked whenever the flavour (SAN, CUDA) changes.
FLAVOR_STAMP := build/.flavor-$(notdir $(BUILD))
$(FLAVOR_STAMP):
	@mkdir -p build && rm -f build/.flavor-* && touch $@

gpumem: $(OBJS) $(FLAVOR_STAMP)
ifeq ($(NVCC),)
	@echo "note: nvcc not found: building without the CUDA backend"
endif
	$(CC) -o $@ $(OBJS) $(LDFLAGS) $(LDFLAGS_SAN) $(LDLIBS)

# The suite version (git describe) goes into meta.json; meta.o is rebuilt
# when it changes.
GM_VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
VERSION_STAMP := $(BUILD)/version.txt
$(VERSION_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(GM_VERSION)' | cmp -s - $@ || echo '$(GM_VERSION)' >$@
$(BUILD)/src/run/meta.o: $(VERSION_STAMP)
$(BUILD)/src/run/meta.o: GM_CFLAGS += -DGM_VERSION='"$(GM_VERSION)"'
FORCE:

# The installed gpumem is linked apart, as $(BUILD)/install/gpumem: its
# datafile.o knows DATADIR, where it finds its data files (lib/datafile.h),
# and is rebuilt when DATADIR changes. The in-tree ./gpumem finds them in
# its source tree and is never relinked by make install.
INSTALL_BUILD := $(BUILD)/install
DATADIR_STAMP := $(INSTALL_BUILD)/datadir.txt
$(DATADIR_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(DATADIR)' | cmp -s - $@ || echo '$(DATADIR)' >$@
$(INSTALL_BUILD)/datafile.o: src/lib/datafile.c $(DATADIR_STAMP)
	$(CC) $(ALL_CFLAGS) -DGM_DATADIR='"$(DATADIR)"' -c -o $@ $<
$(INSTALL_BUILD)/gpumem: $(filter-out $(BUILD)/src/lib/datafile.o,$(OBJS)) $(INSTALL_BUILD)/datafile.o
	$(CC) -o $@ $^ $(LDFLAGS) $(LDFLAGS_SAN) $(LDLIBS)

# The man page and the bash completion, written by the binary from its
# command and option tables (src/cli/help_pages.h), so that neither can
# disagree with its parser; the completion also names the model presets,
# profiles and reference runs there are.
$(MAN_PAGE): gpumem
	./gpumem help --man >$@.tmp && mv $@.tmp $@
$(BASH_COMPLETION): gpumem $(wildcard share/models/*.json share/profiles/*.ini) $(wildcard results/reference/*/)
	./gpumem help --completion bash >$@.tmp && mv $@.tmp $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/gen/kernel_blobs.S $(BUILD)/gen/kernel_table.c &: $(KERNEL_FILES) $(CUDA_IMAGES) $(CUDA_LOGS) scripts/embed-kernels.sh
	scripts/embed-kernels.sh $(BUILD)/gen '$(KERNEL_FILES)' '$(CUDA_IMAGES)'

$(BUILD)/gen/kernel_table.o: $(BUILD)/gen/kernel_table.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/gen/kernel_blobs.o: $(BUILD)/gen/kernel_blobs.S
	$(CC) -c -o $@ $<

# One fatbin per kernel variant ($(CUDA_OUT)/PROGRAM.VARIANT.fatbin): machine code for each of its cuda_archs,
# and ptxas's resource report for it (PROGRAM.VARIANT.ptxas.log; shown when the build fails).
.SECONDEXPANSION:
$(CUDA_OUT)/%.fatbin $(CUDA_OUT)/%.ptxas.log: kernels/gm_portable.h kernels/variants.mk $$(wildcard kernels/$$(firstword $$(subst ., ,$$*)).cl)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) -Xptxas -v $(call nvcc_gencode,$(word 1,$(subst ., ,$*)),$(word 2,$(subst ., ,$*))) \
	    $(call variant_defines,$(word 2,$(subst ., ,$*))) \
	    -fatbin -o $(CUDA_OUT)/$*.fatbin kernels/$(firstword $(subst ., ,$*)).cl >$(CUDA_OUT)/$*.ptxas.log 2>&1 \
	    || { cat $(CUDA_OUT)/$*.ptxas.log; rm -f $(CUDA_OUT)/$*.fatbin; exit 1; }
cuda-kernels: $(CUDA_IMAGES)

# Unit tests: one cmocka program per tests/unit/test_*.c, linked with
# every object but main's; prove runs them through tests/*.t.
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
LIB_OBJS := $(filter-out $(BUILD)/src/cli/main.o,$(OBJS))

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(LIB_OBJS) $(LDFLAGS) $(LDFLAGS_SAN) -lcmocka $(LDLIBS)

# The CUDA stream kernels' word conversions checked on the host (C++
# against CUDA's headers, with precision.c): tests/10-unit-stream-cvt-cuda.t.
ifneq ($(NVCC),)
STREAM_CVT_AGREE := $(BUILD)/tests/stream_cvt_agree
$(STREAM_CVT_AGREE): tests/cuda/stream_cvt_agree.cpp kernels/gm_portable.h $(BUILD)/src/lib/precision.o
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -isystem $(CUDA_HOME)/include -Isrc -I. $(SAN_FLAGS) \
	    $(CPPFLAGS) $(CXXFLAGS) -o $@ $< $(BUILD)/src/lib/precision.o $(LDFLAGS) $(LDFLAGS_SAN) -lpthread
UNIT_TESTS += $(STREAM_CVT_AGREE)
endif

unit-tests: $(UNIT_TESTS)

deps:
	@scripts/deps.sh build run

# Fuzz targets: one libFuzzer program per tests/fuzz/fuzz_NAME.c, linked
# with every object but main's, all built by clang with ASan and UBSan
# into build-fuzz. Each runs on its seed corpus tests/fuzz/NAME/ (read
# only; what it finds goes to build-fuzz/corpus/NAME).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := build-fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS   = $(filter-out -O2,$(ALL_CFLAGS)) -O1 $(FUZZ_SAN)
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_OBJS    := $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(filter-out src/cli/main.c,$(SRCS))) \
                $(FUZZ_BUILD)/gen/kernel_table.o $(BUILD)/gen/kernel_blobs.o

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<
$(FUZZ_BUILD)/src/run/meta.o: GM_CFLAGS += -DGM_VERSION='"$(GM_VERSION)"'
$(FUZZ_BUILD)/gen/kernel_table.o: $(BUILD)/gen/kernel_table.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_input.h $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Itests/fuzz -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LDLIBS)

fuzz-targets: $(FUZZ_TARGETS)
# The objects are made by a pattern rule for a pattern rule's target, which
# makes them intermediate: without this, make would delete them once the
# targets are linked, and build every one again the next time.
.SECONDARY: $(FUZZ_OBJS)

fuzz:
	@scripts/deps.sh build run fuzz
	$(MAKE) -j$(NPROC) fuzz-targets
	@for t in $(FUZZ_TARGETS); do n=$${t##*/}; mkdir -p $(FUZZ_BUILD)/corpus/$$n; \
	    echo "== $$n ($(FUZZ_SECONDS)s)"; \
	    $$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/ $(FUZZ_BUILD)/corpus/$$n tests/fuzz/$$n \
	        2>$(FUZZ_BUILD)/$$n.log || { tail -40 $(FUZZ_BUILD)/$$n.log; exit 1; }; \
	    grep '^stat::number_of_executed_units' $(FUZZ_BUILD)/$$n.log; done

# The run folder of `make bench` (override with BENCH_OUT=DIR); its plots
# are rendered at the end.
ifeq ($(origin BENCH_OUT),undefined)
BENCH_OUT := results/bench-$(shell date -u +%Y%m%dT%H%M%SZ)
endif
# Short stress checks of `make bench`, their verdicts in its report.
BENCH_STRESS_ARGS ?= --duration 2 --mem-limit 256MiB
bench: deps
	@scripts/deps.sh bench
	$(MAKE) -j$(NPROC) gpumem
	./gpumem bench --profile $(PROFILE) --out $(BENCH_OUT) $(BENCH_ARGS)
	@st=0; ./gpumem stress $(BENCH_STRESS_ARGS) --out $(BENCH_OUT)/stress >/dev/null || st=$$?; \
	    ./gpumem plot $(BENCH_OUT) && echo "report: $(BENCH_OUT)/report.html" && \
	    { [ $$st = 0 ] || echo "stress checks failed (exit $$st): see $(BENCH_OUT)/stress/stress.tap"; exit $$st; }

# Renders a run folder's plots: make plots RUN=results/<run-id>
plots: gpumem
	@test -n "$(RUN)" || { echo "make plots RUN=<run folder>"; exit 2; }
	./gpumem plot $(RUN)

# A short stress run on the default device: TAP on stdout and in the run folder.
STRESS_ARGS ?= --duration 10 --mem-limit 512MiB
stress: deps
	$(MAKE) -j$(NPROC) gpumem
	./gpumem stress $(STRESS_ARGS)

# The test files run TEST_JOBS at a time (prove -j). Each works in its own
# temporary folder under its own memory cap, and none judges a timing
# within a margin another test's load could use up. Three on two cores: a
# file that waits (a hang's timeout, a kill's cycle, a probe's timeout)
# leaves its core to the third.
TEST_JOBS ?= 3
test: deps
	@scripts/deps.sh test fuzz
	@scripts/deps.sh slurm || echo "note: without slurm-wlm and munge the Slurm fleet test skips"
	$(MAKE) -j$(NPROC) all
	$(MAKE) -j$(NPROC) unit-tests
	@# A fuzz target that does not build is reported by tests/72-fuzz.t; the
	@# targets carry their own sanitizers and run in the plain pass only.
	@[ "$(SAN)" = 1 ] || $(MAKE) -j$(NPROC) fuzz-targets || true
	@# intercept_tls_get_addr=0: GCC 12's LeakSanitizer misreads the dynamic TLS of
	@# the dlopen'd OpenCL driver under glibc 2.36 and its tracer dies ("Tracer
	@# caught signal 11") as the heap's layout happens to fall; gpumem keeps
	@# nothing in thread-local storage.
	GM_BUILD=$(BUILD) LSAN_OPTIONS=intercept_tls_get_addr=0:suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	    prove -j$(TEST_JOBS) -f --timer tests/

check: test

# A reference run's files, those of its folders (stress/) too.
REFERENCE_SUBDIRS := $(patsubst %/,%,$(wildcard results/reference/*/*/))
REFERENCE_FILES := $(filter-out $(REFERENCE_SUBDIRS),$(wildcard results/reference/*/* results/reference/*/*/*))
# The data files an installed gpumem reads (lib/datafile.h), relative to
# DATADIR, and where each comes from in the source tree: profiles and
# model presets from share/, plot scripts from plots/, the reference runs
# of real cards (gpumem compare reference:NAME) from results/reference/.
DATA_FILES := $(patsubst share/%,%,$(wildcard share/profiles/*.ini share/*.ini share/models/*.json)) \
              $(wildcard plots/*.gp) $(patsubst results/%,%,$(REFERENCE_FILES))
DATA_DIRS := profiles models plots $(patsubst results/%,%,$(REFERENCE_SUBDIRS) $(wildcard results/reference/*)) reference
# The documentation, relative to DOCDIR as to the source tree (README.md's
# links into docs/ hold there too).
DOC_FILES := README.md $(wildcard docs/*.md)
install: $(INSTALL_BUILD)/gpumem $(HELP_PAGES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASH_COMPLETION_DIR) $(DESTDIR)$(DOCDIR)/docs
	install -m 755 $(INSTALL_BUILD)/gpumem $(DESTDIR)$(BINDIR)/gpumem
	install -m 644 $(MAN_PAGE) $(DESTDIR)$(MANDIR)/man1/gpumem.1
	install -m 644 $(BASH_COMPLETION) $(DESTDIR)$(BASH_COMPLETION_DIR)/gpumem
	@set -e; for f in $(DATA_FILES); do \
	    install -d $(DESTDIR)$(DATADIR)/$$(dirname $$f); \
	    case $$f in plots/*) s=$$f ;; reference/*) s=results/$$f ;; *) s=share/$$f ;; esac; \
	    install -m 644 $$s $(DESTDIR)$(DATADIR)/$$f; done
	@set -e; for f in $(DOC_FILES); do install -m 644 $$f $(DESTDIR)$(DOCDIR)/$$f; done
	@echo "installed $(DESTDIR)$(BINDIR)/gpumem, $(words $(DATA_FILES)) data files in $(DESTDIR)$(DATADIR)," \
	    "the man page, the bash completion and $(words $(DOC_FILES)) documents in $(DESTDIR)$(DOCDIR)"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gpumem $(DESTDIR)$(MANDIR)/man1/gpumem.1 $(DESTDIR)$(BASH_COMPLETION_DIR)/gpumem \
	    $(addprefix $(DESTDIR)$(DATADIR)/,$(DATA_FILES)) $(addprefix $(DESTDIR)$(DOCDIR)/,$(DOC_FILES))
	-rmdir $(addprefix $(DESTDIR)$(DATADIR)/,$(DATA_DIRS)) $(DESTDIR)$(DATADIR) \
	    $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR) 2>/dev/null

peers: deps gpumem
	@scripts/deps.sh peers
	bench/tools/peers.sh

precisions: deps gpumem
	bench/tools/precisions.sh

clean:
	rm -rf build build-san build-nocuda build-san-nocuda build-fuzz gpumem

-include $(OBJS:.o=.d) $(INSTALL_BUILD)/datafile.d
-include $(wildcard $(FUZZ_BUILD)/*.d $(FUZZ_OBJS:.o=.d))

# The CUDA kernel variants, one a line, for the tests: PROGRAM.VARIANT and
# the architectures its image carries machine code for (cuda_archs).
print-cuda-variants:
	@$(foreach p,$(KERNEL_PROGRAMS),$(foreach v,$($(p)_VARIANTS),echo $(p).$(v) $(strip $(call cuda_archs,$(p),$(v)));))
