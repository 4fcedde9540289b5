# Test targets. `make check` is the README's test command (about 15 min on
# 2 cores: unit tests, fuzz smoke runs, four QEMU/TCG kdump runs, the
# differential filter test against makedumpfile).
include tests/tools/tools.mk
-include tests/unit/unit.mk


check: $(BUILD)/kdumpinit $(TOOLS_MKVMCORE) unit-tests
	@BUILD=$(BUILD) tests/check.sh

# check plus the 88M floor with 1.5 GiB and 6 GiB guests.
check-full: $(BUILD)/kdumpinit $(TOOLS_MKVMCORE) unit-tests
	@BUILD=$(BUILD) FULL=1 tests/check.sh

check-unit: $(BUILD)/kdumpinit $(TOOLS_MKVMCORE) unit-tests
	@BUILD=$(BUILD) SKIP_E2E=1 tests/check.sh

check-e2e: $(BUILD)/kdumpinit $(TOOLS_MKVMCORE)
	@BUILD=$(BUILD) SKIP_UNIT=1 tests/check.sh

demo: $(BUILD)/kdumpinit
	@tests/e2e/demo.sh

.PHONY: check check-full check-unit check-e2e demo

bench: $(BUILD)/kdumpinit $(TOOLS_MKVMCORE)
	@BUILD=$(BUILD) tests/bench/run.sh

# Opt-in: crash and gdb on saved dumps (downloads the 858 MB -dbg package once).
check-crash: $(BUILD)/kdumpinit
	@BUILD=$(BUILD) tests/crash/run.sh

.PHONY: bench check-crash
