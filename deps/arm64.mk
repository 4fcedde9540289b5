# deps/arm64.mk -- `make ARCH=arm64`: the same static musl build, for aarch64.
#
# Included by the top Makefile before deps/deps.mk when ARCH=arm64. It sets
# what deps.mk and the top Makefile take as given:
#   MUSL_CC      a musl-gcc for aarch64: Debian's cross gcc
#                (gcc-aarch64-linux-gnu) with the specs of musl-dev:arm64
#   UAPI_INCLUDE/UAPI_ASM  the aarch64 kernel uapi headers
#                (linux-libc-dev-arm64-cross)
#   AR, RANLIB   the cross binutils, exported so that lz4's and zlib's own
#                builds, deps/libelf.mk and deps/libsodium.mk archive with them
# lz4, zlib, libelf and libsodium are then built by deps.mk from the same
# pinned sources as for x86_64, into
# $(BUILD)/deps (build/arm64/deps); deps/libsodium.mk's defines hold for
# aarch64 too (little-endian, getrandom, __int128).
#
# musl-dev:arm64 is Multi-Arch: same, but installing it would mean
# `dpkg --add-architecture arm64`, a change to the machine's package setup.
# Instead deps/fetch.sh downloads the pinned .deb through a private apt
# configuration (build/arm64/apt-arm64/, arm64 its only architecture) and
# it is unpacked under $(BUILD)/musl; the specs file is rewritten to point
# there. Nothing outside $(BUILD) changes.

# Its rules must not become the includer's default goal.
arm64_saved_goal := $(.DEFAULT_GOAL)

ARM64_CROSS ?= aarch64-linux-gnu-
ARM64_MUSL_DEB := musl-dev_1.2.3-1_arm64.deb
ARM64_MUSL_PKG := musl-dev:arm64=1.2.3-1
ARM64_MUSL := $(abspath $(BUILD)/musl)
# Absolute: lz4 and zlib are built with make -C / cd into their trees.
MUSL_CC := $(ARM64_MUSL)/bin/aarch64-linux-musl-gcc
UAPI_INCLUDE ?= /usr/$(ARM64_CROSS:-=)/include
UAPI_ASM ?= $(UAPI_INCLUDE)/asm
# The aarch64 linker aligns segments to 64 KiB (so the binary loads on
# 64 KiB-page kernels too); with RELRO that pads the file by up to 64 KiB
# before the data. A static binary has no dynamic relocations for RELRO
# to protect: without it the file is 335 KB instead of 395 KB.
ARCH_LDFLAGS := -Wl,-z,norelro
export AR := $(ARM64_CROSS)ar
export RANLIB := $(ARM64_CROSS)ranlib

$(MUSL_CC): deps/arm64.mk deps/fetch.sh deps/SHA256SUMS
	@command -v $(ARM64_CROSS)gcc >/dev/null || { echo "deps: $(ARM64_CROSS)gcc not found:" \
	  "install gcc-aarch64-linux-gnu and linux-libc-dev-arm64-cross (deps/packages, group arm64)" >&2; exit 1; }
	@deps/fetch.sh debs $(BUILD) arm64 $(ARM64_MUSL_PKG) $(ARM64_MUSL_DEB)
	@rm -rf $(ARM64_MUSL) && mkdir -p $(ARM64_MUSL)/bin
	@dpkg-deb -x $(BUILD)/dl/$(ARM64_MUSL_DEB) $(ARM64_MUSL)/root
	@sed -e 's|/usr/include/aarch64-linux-musl|$(ARM64_MUSL)/root/usr/include/aarch64-linux-musl|g' \
	  -e 's|/usr/lib/aarch64-linux-musl|$(ARM64_MUSL)/root/usr/lib/aarch64-linux-musl|g' \
	  $(ARM64_MUSL)/root/usr/lib/aarch64-linux-musl/musl-gcc.specs > $(ARM64_MUSL)/musl-gcc.specs
	@printf '#!/bin/sh\nexec %s "$$@" -specs %s\n' "$(ARM64_CROSS)gcc" \
	  "$(ARM64_MUSL)/musl-gcc.specs" > $@.tmp && chmod 0755 $@.tmp && mv $@.tmp $@
	@echo "  MUSL    $@"

# deps.mk's compiler check (DEPS_DIR is $(BUILD)/deps) waits for it.
$(BUILD)/deps/.cc: $(MUSL_CC)

.DEFAULT_GOAL := $(arm64_saved_goal)
