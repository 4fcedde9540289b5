# tests/fuzz/fuzz.mk: libFuzzer targets for everything kdumpinit reads from
# a device or a crashed kernel. Included by the top Makefile; every path is
# relative to the repository top.
#
#   make fuzz         builds every target, then fuzzes each in turn for
#                     FUZZ_SECONDS (default 60), one at a time
#   make fuzz-smoke   each target runs its committed corpus, then fuzzes
#                     for FUZZ_SMOKE_SECONDS (5); prints "ok"/"FAIL" lines
#                     and the closing line "N passed, N failed"
#   make fuzz-build   only builds them
#
# The targets are built with the host clang (FUZZ_CC, default clang-14) under
# -fsanitize=fuzzer,address,undefined, from the project's sources compiled
# directly (into one archive, so each target links what it uses). lz4.c and
# xxhash.c come from the unpacked lz4 tree the deps build leaves in
# $(BUILD)/src/lz4/lib (FUZZ_LZ4_SRC), with ASan but no coverage, so
# coverage counts kdumpinit's code only. libsodium (dump/seal.c) is built
# the same way from the patched tree the deps build leaves in
# $(BUILD)/src/libsodium (FUZZ_SODIUM_SRC): deps/libsodium.mk's list of
# sources and its defines, into an archive every target links (a target
# that never reaches seal.c pulls nothing from it). libelf (kernel/vmcore.c)
# and zlib (save_kdump.c) are the system's glibc builds (libelf-dev,
# zlib1g-dev). Crash artifacts, logs and the grown working corpus go to
# $(BUILD)/fuzz; the committed seeds in tests/fuzz/corpus/ are only read.
# tests/fuzz/mkcorpus.py regenerates those seeds (see its header).
#
# Adding a target fuzz_NAME:
#   - tests/fuzz/fuzz_NAME.c (LLVMFuzzerTestOneInput), its name in
#     FUZZ_TARGETS below, its seeds in tests/fuzz/corpus/fuzz_NAME/ (smoke
#     fails without), its dictionary and -max_len in run.sh's opts_for, a
#     row in README.md, and the fuzz count in tests/manifest raised;
#   - capture/ dump/ kernel/ arch/ config/ lib/ (dump/seal.c, dump/dumpfile.c
#     too) are in FUZZ_LIB, and libsodium in FUZZ_SODIUM_LIB, both linked to
#     every target: code from there needs no list;
#   - a source outside them that the harness #includes (arm/: fuzz_fdt,
#     fuzz_kimage) is a prerequisite line at the end,
#     for rebuilds;
#   - anything else to link, objects or archives, is a prerequisite line
#     too: `$(FUZZ_DIR)/fuzz_NAME: $(FUZZ_DIR)/obj/some/file.o` compiles
#     some/file.c with the rule below and links it (FUZZ_EXTRA).

BUILD ?= build
FUZZ_CC ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_LZ4_SRC ?= $(BUILD)/src/lz4/lib
FUZZ_SODIUM_SRC ?= $(BUILD)/src/libsodium
FUZZ_LIBELF ?= -lelf
FUZZ_LIBZ ?= -lz

FUZZ_DIR := $(BUILD)/fuzz
FUZZ_TARGETS := fuzz_vmcoreinfo fuzz_memmap fuzz_dmesg fuzz_dumpfile fuzz_config fuzz_vmcore \
	fuzz_firmware fuzz_fdt fuzz_kimage fuzz_sealed fuzz_dbgpages fuzz_initrd fuzz_dmtable fuzz_nbd
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/%)

FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
FUZZ_SODIUM_L := $(FUZZ_SODIUM_SRC)/src/libsodium
FUZZ_CFLAGS := -std=gnu11 -g -O1 $(FUZZ_SAN) -I$(FUZZ_LZ4_SRC) -I$(FUZZ_SODIUM_L)/include \
	-DXXH_NAMESPACE=LZ4_ -DKDI_VERSION='"fuzz"' -Wall -Wno-unused-parameter

# Every library source of kdumpinit (all but the programs: main/, host/,
# arm/, init/), instrumented for coverage, in one archive: each target's link
# pulls in exactly the objects it needs, so new files need no list here.
# FUZZ_LIB_EXCLUDE drops a source the host cannot build.
FUZZ_LIB_EXCLUDE ?=
FUZZ_LIB_SRCS := $(filter-out $(FUZZ_LIB_EXCLUDE),$(wildcard net/*.c capture/*.c dump/*.c kernel/*.c arch/*.c config/*.c lib/*.c))
FUZZ_LIB_OBJS := $(FUZZ_LIB_SRCS:%.c=$(FUZZ_DIR)/obj/%.o)
FUZZ_LIB := $(FUZZ_DIR)/libkdumpinit-fuzz.a
# lz4.c and xxhash.c: AddressSanitizer only, no coverage, no UBSan: the
# findings wanted are kdumpinit's (xxhash 0.6's pointer arithmetic on a
# NULL, 0-length input is UBSan-noisy but harmless).
FUZZ_CFLAGS_3P := -std=gnu11 -g -O1 -fsanitize=address -fno-omit-frame-pointer \
	-DXXH_NAMESPACE=LZ4_
FUZZ_LZ4_OBJS := $(FUZZ_DIR)/obj/lz4/lz4.o $(FUZZ_DIR)/obj/lz4/xxhash.o
# libsodium: deps/libsodium.mk's SODIUM_FILES and SODIUM_DEFS (included for
# those only), the same third-party flags as lz4.
include deps/libsodium.mk
FUZZ_SODIUM_SRCS := $(addprefix $(FUZZ_SODIUM_L)/,$(SODIUM_FILES))
FUZZ_SODIUM_OBJS := $(SODIUM_FILES:%.c=$(FUZZ_DIR)/obj/sodium/%.o)
FUZZ_SODIUM_LIB := $(FUZZ_DIR)/libsodium-fuzz.a
FUZZ_SODIUM_VERSION_H := $(FUZZ_SODIUM_L)/include/sodium/version.h
FUZZ_LDLIBS := $(FUZZ_LIB) $(FUZZ_LZ4_OBJS) $(FUZZ_SODIUM_LIB) $(FUZZ_LIBELF) $(FUZZ_LIBZ) -lpthread
# A target's own extra objects and archives: its prerequisites that are
# none of the above (see "Adding a target" at the top).
FUZZ_EXTRA = $(filter-out $(FUZZ_LIB) $(FUZZ_LZ4_OBJS) $(FUZZ_SODIUM_LIB),$(filter %.o %.a,$^))

FUZZ_HDRS := $(wildcard tests/fuzz/*.h */*.h)

# The byte movers under the struct-page and log walkers run tens of
# thousands of times per input; comparison tracing in them costs most of
# the time and guides nothing, so they get edge coverage only.
FUZZ_NOCMP_SRCS := arch/x86_64.c kernel/physmem.c kernel/kmem.c lib/io.c

$(FUZZ_DIR)/obj/%.o: %.c $(FUZZ_HDRS) tests/fuzz/fuzz.mk
	@mkdir -p $(@D)
	@echo "  FUZZCC  $<"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link \
	  $(if $(filter $<,$(FUZZ_NOCMP_SRCS)),-fno-sanitize-coverage=trace-cmp) -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	@rm -f $@
	@ar rcs $@ $^

# dump/seal.c includes <sodium.h>, whose version.h the deps build makes.
$(FUZZ_LIB_OBJS): | $(FUZZ_SODIUM_VERSION_H)

# The lz4 tree is unpacked by the deps build; with DEPS_PREFIX there is none.
$(FUZZ_LZ4_SRC)/lz4.c $(FUZZ_LZ4_SRC)/xxhash.c: | $(DEPS_STAMP)
	@test -f $@ || { echo "fuzz: no $@: run 'make' first, or set FUZZ_LZ4_SRC" \
	  "to an unpacked lz4 lib/ directory" >&2; exit 1; }

$(FUZZ_DIR)/obj/lz4/%.o: $(FUZZ_LZ4_SRC)/%.c tests/fuzz/fuzz.mk
	@mkdir -p $(@D)
	@echo "  FUZZCC  $<"
	@$(FUZZ_CC) $(FUZZ_CFLAGS_3P) -c $< -o $@

# The libsodium tree (patched, version.h made) is the deps build's too.
$(FUZZ_SODIUM_VERSION_H) $(FUZZ_SODIUM_SRCS): | $(DEPS_STAMP)
	@test -f $@ || { echo "fuzz: no $@: run 'make' first, or set FUZZ_SODIUM_SRC" \
	  "to a libsodium tree the deps build has unpacked" >&2; exit 1; }

$(FUZZ_DIR)/obj/sodium/%.o: $(FUZZ_SODIUM_L)/%.c $(FUZZ_SODIUM_VERSION_H) tests/fuzz/fuzz.mk deps/libsodium.mk
	@mkdir -p $(@D)
	@echo "  FUZZCC  $<"
	@$(FUZZ_CC) $(FUZZ_CFLAGS_3P) $(SODIUM_DEFS) -I$(FUZZ_SODIUM_L)/include \
	  -I$(FUZZ_SODIUM_L)/include/sodium -c $< -o $@

$(FUZZ_SODIUM_LIB): $(FUZZ_SODIUM_OBJS)
	@rm -f $@
	@ar rcs $@ $^

$(FUZZ_BINS): $(FUZZ_DIR)/%: tests/fuzz/%.c $(FUZZ_LIB) $(FUZZ_LZ4_OBJS) $(FUZZ_SODIUM_LIB) $(FUZZ_HDRS) tests/fuzz/fuzz.mk
	@echo "  FUZZ    $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_EXTRA) $(FUZZ_LDLIBS)

# fuzz_fdt includes arm/kexec_arm64.c, arm/machine.c and arm/root.c itself (arm/ is not in the archive).
$(FUZZ_DIR)/fuzz_fdt: arm/kexec_arm64.c arm/machine.c arm/root.c
$(FUZZ_DIR)/fuzz_kimage: arm/kimage.c arm/reserve.c arm/root.c
$(FUZZ_DIR)/fuzz_initrd: lib/initrd.c

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	@FUZZ_DIR=$(FUZZ_DIR) tests/fuzz/run.sh long $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: $(FUZZ_BINS)
	@FUZZ_DIR=$(FUZZ_DIR) tests/fuzz/run.sh smoke $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

.PHONY: fuzz fuzz-build fuzz-smoke
