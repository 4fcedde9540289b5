# tests/unit/unit.mk: the unit tests. Included by the top Makefile (via
# tests/tests.mk), after deps/deps.mk and tests/tools/tools.mk; every path
# is relative to the repository top.
#
#   make unit-tests     builds everything tests/unit/run.sh needs
#   tests/unit/run.sh   runs it (see the header of run.sh)
#
# The C tests (tests/unit/test_*.c) are linked, with musl like the binary,
# against the very objects build/kdumpinit is made of ($(BUILD)/obj/...,
# built by the top Makefile's rule). The same sources are also built with
# the host compiler under AddressSanitizer and UBSan when the lz4 source
# tree is at hand (it is after a normal deps build; with DEPS_PREFIX it is
# not, and run.sh then says the sanitizer run was skipped).

BUILD ?= build
HOSTCC ?= cc

UNIT_DIR := $(BUILD)/tests/unit
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(UNIT_DIR)/%)
UNIT_ASAN_BINS := $(UNIT_SRCS:tests/unit/%.c=$(UNIT_DIR)/asan/%)
UNIT_HDRS := tests/unit/check.h $(wildcard */*.h)

# The library part of kdumpinit the tests exercise (no main, no PID 1).
UNIT_LIB := config/config.c config/target.c config/probe.c config/gpt.c \
	dump/format.c dump/dumpfile.c lib/io.c lib/log.c lib/util.c
UNIT_OBJS := $(UNIT_LIB:%.c=$(BUILD)/obj/%.o)

UNIT_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	-DKDI_VERSION='"unit"' $(DEPS_CFLAGS)

$(UNIT_BINS): $(UNIT_DIR)/%: tests/unit/%.c $(UNIT_HDRS) $(UNIT_OBJS) $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(MUSL_CC) $(UNIT_CFLAGS) -static -o $@ $< $(UNIT_OBJS) $(DEPS_LDLIBS) -lpthread

# Sanitizer build: glibc, so the musl-built liblz4.a cannot be linked; lz4.c
# and xxhash.c are compiled from the unpacked source instead (xxhash with
# the same LZ4_ namespace, which DEPS_CFLAGS defines).
UNIT_LZ4_SRC := $(BUILD)/src/lz4/lib
UNIT_ASAN_FLAGS := -std=gnu11 -O1 -g -fno-omit-frame-pointer \
	-fsanitize=address,undefined \
	-DKDI_VERSION='"unit"' $(DEPS_CFLAGS)

$(UNIT_ASAN_BINS): $(UNIT_DIR)/asan/%: tests/unit/%.c $(UNIT_HDRS) $(UNIT_LIB) $(DEPS_STAMP)
	@mkdir -p $(@D)
	@if [ -f $(UNIT_LZ4_SRC)/lz4.c ] && [ -f $(UNIT_LZ4_SRC)/xxhash.c ]; then \
	  echo "  ASAN    $@"; \
	  $(HOSTCC) $(UNIT_ASAN_FLAGS) -o $@ $< $(UNIT_LIB) \
	    $(UNIT_LZ4_SRC)/lz4.c $(UNIT_LZ4_SRC)/xxhash.c -lpthread; \
	else \
	  echo "  ASAN    skipped: no lz4 source in $(UNIT_LZ4_SRC)"; rm -f $@; \
	fi

unit-tests: $(BUILD)/kdumpinit $(TOOLS_MKVMCORE) $(UNIT_BINS) $(UNIT_ASAN_BINS)

.PHONY: unit-tests
