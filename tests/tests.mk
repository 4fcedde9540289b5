# Test targets; see tests/README.md.
check: $(BUILD)/kdumpinit
	@echo "check: not yet wired"

.PHONY: check demo bench
