# tests/tools/tools.mk: test tools, built for the build machine.
# Include from the top-level Makefile; paths are relative to the repo top.
# HOSTCC, not CC: the main build may cross-compile or link statically.

BUILD ?= build
HOSTCC ?= cc
TOOLS_CFLAGS ?= -Wall -Wextra -Werror -O2

TOOLS_MKVMCORE := $(BUILD)/tools/mkvmcore
TOOLS_VMCMP := /usr/bin/python3 tests/tools/vmcmp.py

$(TOOLS_MKVMCORE): tests/tools/mkvmcore.c tests/tools/tools.mk
	@mkdir -p $(@D)
	$(HOSTCC) $(TOOLS_CFLAGS) -o $@ tests/tools/mkvmcore.c

.PHONY: tools check-tools
tools: $(TOOLS_MKVMCORE)

# vmcmp must be able to fail before its passes count for anything.
check-tools: $(TOOLS_MKVMCORE)
	MKVMCORE=$(TOOLS_MKVMCORE) sh tests/tools/vmcmp_selftest.sh
