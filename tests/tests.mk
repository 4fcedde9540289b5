# Test targets. `make check` is the README's test command (about 25 min on
# 2 cores: unit tests, fuzz smoke runs, QEMU/TCG kdump runs, the
# differential filter test against makedumpfile, the documentation and the
# Debian package).
#
# Each target a user types first installs the host packages it needs
# (deps/setup-host.sh with its group from deps/packages; silent and well
# under a second when nothing is missing), then makes the real work in a
# sub-make: under -j, prerequisites would otherwise start compiling before
# musl-gcc is there. The run-* targets are that real work, without set-up.
include tests/tools/tools.mk
-include tests/unit/unit.mk
include tests/corrupt/corrupt.mk

SETUP := deps/setup-host.sh

# $(call with-setup,GROUP,TARGET): set up GROUP's packages, then make TARGET.
define with-setup
	@$(SETUP) $(1)
	@$(MAKE) --no-print-directory $(2)
endef

check:
	$(call with-setup,check,run-check)
check-full:
	$(call with-setup,check,run-check-full)
check-unit:
	$(call with-setup,check,run-check-unit)
check-e2e:
	$(call with-setup,check,run-check-e2e)
check-docs:
	$(call with-setup,build,run-check-docs)
# The boot cycle: real reboots in QEMU, settings from firmware only.
check-cycle:
	$(call with-setup,check,run-check-cycle)
check-deb:
	$(call with-setup,check,run-check-deb)
# The README's first commands in a fresh debootstrap minbase chroot (root).
check-fresh:
	$(call with-setup,check,run-check-fresh)
demo:
	$(call with-setup,demo,run-demo)
bench:
	$(call with-setup,bench,run-bench)
fuzz:
	$(call with-setup,check,run-fuzz)
fuzz-smoke:
	$(call with-setup,check,run-fuzz-smoke)
fuzz-build:
	$(call with-setup,check,run-fuzz-build)
setup:
	@$(SETUP) build demo check deb bench

CHECK_PREREQS := $(BUILD)/kdumpinit $(TOOLS_MKVMCORE) unit-tests $(TOOLS_DMTOOL)
# The corrupt suite's ASan binary, where the lz4 sources are there to build it.
CHECK_PREREQS += $(if $(wildcard $(ASAN_KDI_LZ4)/lz4.c),$(ASAN_KDI))

run-check: $(CHECK_PREREQS)
	@BUILD=$(BUILD) ONLY="$(ONLY)" T="$(T)" tests/check.sh

# check plus the 88M floor with 1.5 GiB and 6 GiB guests.
run-check-full: $(CHECK_PREREQS)
	@BUILD=$(BUILD) ONLY="$(ONLY)" T="$(T)" FULL=1 tests/check.sh

run-check-unit: $(CHECK_PREREQS)
	@BUILD=$(BUILD) ONLY="$(ONLY)" T="$(T)" SKIP_E2E=1 tests/check.sh

run-check-e2e: $(BUILD)/kdumpinit $(TOOLS_MKVMCORE)
	@BUILD=$(BUILD) ONLY="$(ONLY)" T="$(T)" SKIP_UNIT=1 tests/check.sh

run-check-docs: $(BUILD)/kdumpinit
	@BUILD=$(BUILD) ONLY=docs tests/check.sh

run-check-deb: $(BUILD)/kdumpinit
	@BUILD=$(BUILD) ONLY=deb tests/check.sh

run-check-cycle: $(BUILD)/kdumpinit
	@bash tests/cycle/run.sh --workdir $(BUILD)/cycle

run-check-fresh:
	@BUILD=$(BUILD) ONLY=fresh FULL=1 tests/check.sh

run-demo: $(BUILD)/kdumpinit
	@tests/e2e/demo.sh

# BENCH="cpu disk scale memory" picks sections (tests/bench/README.md); the
# struct-page pass is timed alone when tests/tools/mmbench has a rule.
run-bench: $(BUILD)/kdumpinit $(TOOLS_MKVMCORE)
	$(if $(MMBENCH),@$(MAKE) --no-print-directory $(MMBENCH))
	@BUILD=$(BUILD) tests/bench/run.sh

run-fuzz: $(BUILD)/kdumpinit
	@$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk BUILD=$(BUILD) fuzz

run-fuzz-smoke: $(BUILD)/kdumpinit
	@$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk BUILD=$(BUILD) fuzz-smoke

run-fuzz-build: $(BUILD)/kdumpinit
	@$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk BUILD=$(BUILD) fuzz-build

# Opt-in: crash and gdb on saved dumps (downloads the 858 MB -dbg package once).
check-crash: $(BUILD)/kdumpinit
	@BUILD=$(BUILD) tests/crash/run.sh

.PHONY: check check-full check-unit check-e2e check-docs check-cycle check-deb check-fresh demo bench fuzz fuzz-smoke fuzz-build \
	setup check-crash run-check run-check-full run-check-unit run-check-e2e run-check-docs run-check-cycle \
	run-check-deb run-check-fresh run-demo run-bench run-fuzz run-fuzz-smoke run-fuzz-build
