# tests/unit/unit.mk: the unit tests. Included by the top Makefile (via
# tests/tests.mk), after deps/deps.mk and tests/tools/tools.mk; every path
# is relative to the repository top.
#
#   make unit-tests     builds everything tests/unit/run.sh needs
#   tests/unit/run.sh   runs it (see the header of run.sh)
#
# The C tests (tests/unit/test_*.c) are linked, with musl like the binary,
# against the very objects build/kdumpinit is made of ($(BUILD)/obj/...,
# built by the top Makefile's rule), put in an archive so that each test
# pulls in only what it uses. Everything but the programs (main/, host/,
# arm/, init/: the entry, the commands, arming, PID 1) is in it.
#
# The same sources are also built with the host compiler under
# AddressSanitizer and UBSan (build/tests/unit/asan/). That build cannot
# link the musl liblz4.a and libsodium.a, so it compiles lz4.c and xxhash.c
# from the lz4 source tree the deps build unpacks, and libsodium's sources
# (deps/libsodium.mk's SODIUM_FILES, with its SODIUM_DEFS) from the patched
# libsodium tree; where there are none (DEPS_PREFIX builds) it is skipped,
# and run.sh says so.

BUILD ?= build
HOSTCC ?= cc
AR ?= ar

UNIT_DIR := $(BUILD)/tests/unit
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(UNIT_DIR)/%)
UNIT_ASAN_BINS := $(UNIT_SRCS:tests/unit/%.c=$(UNIT_DIR)/asan/%)
UNIT_HDRS := tests/unit/check.h tests/unit/fakesys.h $(wildcard */*.h)

UNIT_LIB_SRCS := $(filter-out main/% host/% arm/% init/%,$(or $(SRCS),$(wildcard config/*.c capture/*.c dump/*.c kernel/*.c arch/*.c lib/*.c)))
UNIT_OBJS := $(UNIT_LIB_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_AR := $(UNIT_DIR)/libkdi.a

UNIT_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	-DKDI_VERSION='"unit"' $(DEPS_CFLAGS)

$(UNIT_AR): $(UNIT_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	@$(AR) rcs $@ $(UNIT_OBJS)

$(UNIT_BINS): $(UNIT_DIR)/%: tests/unit/%.c tests/unit/check.h $(UNIT_HDRS) $(UNIT_AR) $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(MUSL_CC) $(UNIT_CFLAGS) -static -o $@ $< $(UNIT_AR) $(DEPS_LDLIBS) -lpthread

UNIT_LZ4_SRC := $(BUILD)/src/lz4/lib
# libsodium: the same sources and defines as deps/libsodium.mk's musl build.
include deps/libsodium.mk
UNIT_SODIUM_SRC := $(BUILD)/src/libsodium/src/libsodium
UNIT_SODIUM_SRCS := $(addprefix $(UNIT_SODIUM_SRC)/,$(SODIUM_FILES))
UNIT_SODIUM_FLAGS := $(SODIUM_DEFS) -I$(UNIT_SODIUM_SRC)/include -I$(UNIT_SODIUM_SRC)/include/sodium
UNIT_ASAN_DIR := $(UNIT_DIR)/asan
UNIT_ASAN_AR := $(UNIT_ASAN_DIR)/libkdi.a
UNIT_ASAN_FLAGS := -std=gnu11 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-DKDI_VERSION='"unit"' $(DEPS_CFLAGS)

$(UNIT_ASAN_AR): $(UNIT_LIB_SRCS) $(UNIT_HDRS) $(DEPS_STAMP) tests/unit/unit.mk deps/libsodium.mk
	@mkdir -p $(UNIT_ASAN_DIR)/obj
	@rm -f $@ $(UNIT_ASAN_DIR)/obj/*.o
	@if [ -f $(UNIT_LZ4_SRC)/lz4.c ] && [ -f $(UNIT_LZ4_SRC)/xxhash.c ] && \
	    [ -f $(UNIT_SODIUM_SRC)/include/sodium/version.h ]; then \
	  echo "  ASAN    $@"; \
	  for f in $(UNIT_LIB_SRCS) $(UNIT_LZ4_SRC)/lz4.c $(UNIT_LZ4_SRC)/xxhash.c; do \
	    $(HOSTCC) $(UNIT_ASAN_FLAGS) -w -c $$f \
	      -o $(UNIT_ASAN_DIR)/obj/$$(echo $$f | tr / _).o || exit 1; \
	  done; \
	  for f in $(UNIT_SODIUM_SRCS); do \
	    $(HOSTCC) $(UNIT_SODIUM_FLAGS) $(UNIT_ASAN_FLAGS) -w -c $$f \
	      -o $(UNIT_ASAN_DIR)/obj/$$(echo $$f | tr / _).o || exit 1; \
	  done; \
	  $(AR) rcs $@ $(UNIT_ASAN_DIR)/obj/*.o; \
	else \
	  echo "  ASAN    skipped: no lz4 or libsodium source tree under $(BUILD)/src"; \
	fi

# The host's libelf and zlib (as the fuzzers use): a test that saves a
# kdump file pulls in vmcore.c (notes) and zlib.
UNIT_ASAN_LDLIBS ?= -lelf -lz

$(UNIT_ASAN_BINS): $(UNIT_ASAN_DIR)/%: tests/unit/%.c tests/unit/check.h $(UNIT_ASAN_AR)
	@if [ -f $(UNIT_ASAN_AR) ]; then \
	  echo "  ASAN    $@"; \
	  $(HOSTCC) $(UNIT_ASAN_FLAGS) -o $@ $< $(UNIT_ASAN_AR) $(UNIT_ASAN_LDLIBS) -lpthread; \
	else \
	  rm -f $@; \
	fi

# These include the arm/ and init/ sources they test (neither is in the
# archive).
$(UNIT_DIR)/test_dtb $(UNIT_ASAN_DIR)/test_dtb: arm/kexec_arm64.c arm/machine.c arm/root.c
$(UNIT_DIR)/test_arm64hdr $(UNIT_ASAN_DIR)/test_arm64hdr: arm/kexec_arm64.c arm/machine.c arm/armed.c arm/root.c
$(UNIT_DIR)/test_unload $(UNIT_ASAN_DIR)/test_unload: arm/unload.c
$(UNIT_DIR)/test_cmdline $(UNIT_ASAN_DIR)/test_cmdline: arm/cmdline.c arm/root.c
$(UNIT_DIR)/test_devwait $(UNIT_ASAN_DIR)/test_devwait: init/devwait.c init/devwait.h
$(UNIT_DIR)/test_reach $(UNIT_ASAN_DIR)/test_reach: arm/reach.c arm/reach.h

# The struct-page pass alone, timed (tests/tools/mmbench.c says how), on
# the objects the binary is made of.
MMBENCH := $(BUILD)/tools/mmbench
$(MMBENCH): tests/tools/mmbench.c $(UNIT_HDRS) $(UNIT_AR) $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(MUSL_CC) $(UNIT_CFLAGS) -static -o $@ $< $(UNIT_AR) $(DEPS_LDLIBS) -lpthread

# The debugger's pages of a vmcore, by tier (tests/debugger/coverage.sh).
DBGSET := $(BUILD)/tools/dbgset
$(DBGSET): tests/tools/dbgset.c $(UNIT_HDRS) $(UNIT_AR) $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(MUSL_CC) $(UNIT_CFLAGS) -static -o $@ $< $(UNIT_AR) $(DEPS_LDLIBS) -lpthread

unit-tests: $(BUILD)/kdumpinit $(TOOLS_MKVMCORE) $(UNIT_BINS) $(UNIT_ASAN_BINS) $(DBGSET)

.PHONY: unit-tests

# tests/e2e/dm.sh's guest tool: config/stack.c and dmctl.c on a real
# kernel's device-mapper (static, musl, from the same archive).
TOOLS_DMTOOL := $(BUILD)/tools/dmtool
$(TOOLS_DMTOOL): tests/tools/dmtool.c $(UNIT_HDRS) $(UNIT_AR) $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(MUSL_CC) $(UNIT_CFLAGS) -static -o $@ $< $(UNIT_AR) $(DEPS_LDLIBS) -lpthread
