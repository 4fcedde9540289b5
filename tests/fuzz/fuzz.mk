# tests/fuzz/fuzz.mk: libFuzzer targets for everything kdumpinit reads from
# a device or a crashed kernel. Included by the top Makefile; every path is
# relative to the repository top.
#
#   make fuzz         builds every target, then fuzzes each in turn for
#                     FUZZ_SECONDS (default 60), one at a time
#   make fuzz-smoke   each target runs its committed corpus, then fuzzes
#                     for FUZZ_SMOKE_SECONDS (15); prints "ok"/"FAIL" lines
#                     and the closing line "N passed, N failed"
#   make fuzz-build   only builds them
#
# The targets are built with the host clang (FUZZ_CC, default clang-14) under
# -fsanitize=fuzzer,address,undefined, compiling the project's sources
# directly. lz4.c and xxhash.c come from the unpacked lz4 tree the deps
# build leaves in $(BUILD)/src/lz4/lib (FUZZ_LZ4_SRC); they get ASan/UBSan
# but no coverage instrumentation, so coverage counts kdumpinit's code only.
# The targets that need dump/vmcore.c link the system's (glibc) libelf
# (libelf-dev). Crash artifacts, logs and the grown working corpus go to
# $(BUILD)/fuzz; the committed seeds in tests/fuzz/corpus/ are only read.
# tests/fuzz/mkcorpus.py regenerates those seeds (see its header).

BUILD ?= build
FUZZ_CC ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 15
FUZZ_LZ4_SRC ?= $(BUILD)/src/lz4/lib
FUZZ_LIBELF ?= -lelf
FUZZ_LIBZ ?= -lz

FUZZ_DIR := $(BUILD)/fuzz
FUZZ_TARGETS := fuzz_vmcoreinfo fuzz_memmap fuzz_dmesg fuzz_dumpfile fuzz_config fuzz_vmcore
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/%)

FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
FUZZ_CFLAGS := -std=gnu11 -g -O1 $(FUZZ_SAN) -I$(FUZZ_LZ4_SRC) \
	-DXXH_NAMESPACE=LZ4_ -DKDI_VERSION='"fuzz"' -Wall -Wno-unused-parameter

# Project sources per target (besides the target's own file), then what
# else each links: lz4/xxhash objects, libelf (dump/vmcore.c), zlib.
fuzz_kmem := dump/kmem.c dump/physmem.c dump/vmcoreinfo.c dump/vmcore.c \
	arch/arch.c arch/x86_64.c lib/io.c lib/util.c
fuzz_src_vmcoreinfo := dump/vmcoreinfo.c dump/vmcore.c lib/io.c lib/util.c
fuzz_src_memmap := dump/memmap.c $(fuzz_kmem)
fuzz_src_dmesg := dump/dmesg.c $(fuzz_kmem)
fuzz_src_dumpfile := dump/dumpfile.c dump/format.c dump/save_elf.c dump/save_kdump.c \
	dump/vmcore.c dump/vmcoreinfo.c arch/arch.c arch/x86_64.c dump/physmem.c \
	config/target.c config/probe.c config/gpt.c lib/io.c lib/util.c
fuzz_src_config := config/config.c config/target.c config/probe.c config/gpt.c \
	dump/format.c lib/io.c lib/util.c
fuzz_src_vmcore := dump/vmcore.c lib/io.c lib/util.c
fuzz_lib_vmcoreinfo := $(FUZZ_LIBELF)
fuzz_lib_memmap := $(FUZZ_LIBELF)
fuzz_lib_dmesg := $(FUZZ_LIBELF)
fuzz_lib_dumpfile := $(FUZZ_DIR)/obj/lz4.o $(FUZZ_DIR)/obj/xxhash.o $(FUZZ_LIBELF) \
	$(FUZZ_LIBZ) -lpthread
fuzz_lib_config := $(FUZZ_DIR)/obj/xxhash.o
fuzz_lib_vmcore := $(FUZZ_LIBELF)

FUZZ_HDRS := $(wildcard tests/fuzz/*.h */*.h)

# The lz4 tree is unpacked by the deps build; with DEPS_PREFIX there is none.
$(FUZZ_LZ4_SRC)/lz4.c $(FUZZ_LZ4_SRC)/xxhash.c: | $(DEPS_STAMP)
	@test -f $@ || { echo "fuzz: no $@: run 'make' first, or set FUZZ_LZ4_SRC" \
	  "to an unpacked lz4 lib/ directory" >&2; exit 1; }

$(FUZZ_DIR)/obj/%.o: $(FUZZ_LZ4_SRC)/%.c tests/fuzz/fuzz.mk
	@mkdir -p $(@D)
	@echo "  FUZZCC  $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

# One link rule per target (no .SECONDEXPANSION: it would leak into the
# includer's rules).
define fuzz_rule
$$(FUZZ_DIR)/fuzz_$(1): tests/fuzz/fuzz_$(1).c $$(fuzz_src_$(1)) \
		$$(filter %.o,$$(fuzz_lib_$(1))) $$(FUZZ_HDRS) tests/fuzz/fuzz.mk
	@mkdir -p $$(@D)
	@echo "  FUZZ    $$@"
	@$$(FUZZ_CC) $$(FUZZ_CFLAGS) -fsanitize=fuzzer -o $$@ tests/fuzz/fuzz_$(1).c \
	  $$(fuzz_src_$(1)) $$(fuzz_lib_$(1))
endef
$(foreach t,$(FUZZ_TARGETS:fuzz_%=%),$(eval $(call fuzz_rule,$(t))))

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	@FUZZ_DIR=$(FUZZ_DIR) tests/fuzz/run.sh long $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: $(FUZZ_BINS)
	@FUZZ_DIR=$(FUZZ_DIR) tests/fuzz/run.sh smoke $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

.PHONY: fuzz fuzz-build fuzz-smoke
