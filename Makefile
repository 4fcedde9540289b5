# kdumpinit: make builds build/kdumpinit, one static musl binary.
#   make         the binary (fetches and builds lz4, zlib, libelf first)
#   make demo    a VM crash, captured by kdumpinit as PID 1, then saved
#   make check   unit tests and the QEMU end-to-end test
#   make install PREFIX=/usr/local DESTDIR=
#   make deb     the Debian packages, build/kdumpinit_VERSION_amd64.deb and
#                build/kdumpinit-crash-kernel_VERSION_amd64.deb
#   make crash-kernel  the dedicated crash kernel, kdumpinit inside, from
#                Debian's linux-source (crash-kernel/README.md; ARCH=arm64 too)
#   make ARCH=arm64  the same binary for aarch64, build/arm64/kdumpinit
#                (cross gcc + musl-dev:arm64 unpacked privately: deps/arm64.mk)
VERSION := 0.1.0
ARCH ?=
ifeq ($(ARCH),arm64)
# Its own tree whatever BUILD the caller has (tests/check.sh exports one;
# x86_64 objects and prebuilt x86_64 DEPS_PREFIX libraries must never mix in).
override BUILD := $(or $(ARM64_BUILD),build/arm64)
override DEPS_PREFIX :=
include deps/arm64.mk
else ifneq ($(filter-out x86_64 x86 amd64,$(ARCH)),)
$(error ARCH=$(ARCH): kdumpinit builds for x86_64 (default) and arm64)
endif
BUILD ?= build
PREFIX ?= /usr/local
DESTDIR ?=

include deps/deps.mk

CFLAGS_WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wpointer-arith \
	-Wcast-qual -Wundef -Wno-unused-parameter
CFLAGS ?= -Os
# -flto: the link sees the whole program (6 KB less code, x86_64); fat
# objects keep machine code beside it, for the unit tests' libkdi.a.
KDI_CFLAGS := -std=gnu11 $(CFLAGS) $(CFLAGS_WARN) -ffunction-sections -fdata-sections -flto -ffat-lto-objects \
	-DKDI_VERSION='"$(VERSION)"' $(DEPS_CFLAGS)
# -z noseparate-code: one read-execute segment for code and read-only
# data instead of two, each padded to a 4 KiB page in the file (8 KB of
# padding in a 520 KB binary); nothing is writable and executable.
LDFLAGS_STATIC := -static -Wl,--gc-sections -s -Wl,-z,noseparate-code -flto=auto $(CFLAGS)

# The folders, top-down; each includes only those below it
# (docs/DESIGN.md): main -> host -> arm -> init -> net -> config -> capture -> dump -> kernel -> arch -> lib.
SRCS := main/main.c \
	host/commands.c host/json.c host/progress.c host/keys.c host/savecore.c host/source.c host/status.c host/sha256.c host/modules.c host/estimate.c host/testmark.c host/crashtest.c \
	arm/arm.c arm/armed.c arm/kexec_tools.c arm/kexec_arm64.c arm/machine.c arm/unload.c arm/kimage.c arm/reserve.c arm/reach.c \
	arm/root.c arm/cmdline.c arm/rebuild.c \
	init/pid1.c init/run_capture.c init/hwdog.c init/devwait.c \
	net/nbd.c net/nbdnl.c net/link.c net/dhcp.c net/netdump.c net/route.c \
	config/config.c config/firmware.c config/target.c config/probe.c config/gpt.c config/modalias.c \
	config/dmtable.c config/dmctl.c config/stack.c \
	capture/pipeline.c capture/passes.c capture/window.c capture/sink.c capture/writer.c \
	dump/format.c dump/chain.c dump/seal.c dump/dumpfile.c dump/save_elf.c dump/save_kdump.c \
	kernel/vmcore.c kernel/vmcoreinfo.c kernel/physmem.c kernel/kmem.c kernel/memmap.c \
	kernel/dmesg.c kernel/memory.c kernel/dbgpages.c kernel/kallsyms.c kernel/vmemmap.c \
	kernel/diskdump.c \
	arch/arch.c arch/x86_64.c arch/arm64.c \
	lib/log.c lib/io.c lib/ring.c lib/util.c lib/sigclean.c lib/rng.c lib/cli.c lib/progress.c lib/initrd.c
OBJS := $(SRCS:%.c=$(BUILD)/obj/%.o)
HDRS := $(wildcard */*.h)

all: $(BUILD)/kdumpinit

$(BUILD)/obj/%.o: %.c $(HDRS) $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(MUSL_CC) $(KDI_CFLAGS) -c $< -o $@

# The size limit: 512 KiB since sealed dumps: libsodium's X25519,
# BLAKE2b and AEGIS-256 (and XChaCha20-Poly1305, which reads older dumps)
# add about 80 KB (deps/libsodium.mk). What it guards is the crash
# kernel's initramfs, which a small reservation holds in memory. arm64's
# code is the larger: it meets the limit first. 528 KiB since stacked dump
# devices (config/stack.c, dmtable.c, dmctl.c: rebuilding an LVM volume or
# an md mirror with device-mapper, and recording its table on the host):
# about 16 KB, which took arm64 past 512 KiB. 536 KiB since the
# debugger's pages in two tiers (kernel/dbgpages.c: the section symbols,
# per-CPU areas, current tasks' stacks, the rodata hops, the tasks without
# init_task; arm64's page-table walk): about 8 KB, arm64 541,160 bytes.
# 544 KiB since the host commands' one option parser (lib/cli.c), --json
# (host/json.c) and rebuild (arm/rebuild.c): about 9 KB, arm64 553,784
# bytes, x86_64 548,144. 568 KiB since kdumpinit estimate (host/estimate.c:
# the page classes from /proc/kpageflags, a sample compressed through
# /proc/kcore) and kdumpinit test (host/crashtest.c, testmark.c: the
# marker, the next boot's report): about 16 KB, arm64 577,400 bytes,
# x86_64 568,848. 584 KiB since network dump devices (net/: the NBD
# handshake, the interface's address and route, the socket handed to the
# kernel): about 12 KB. 592 KiB since arm records the way to a network
# dump server (net/route.c: the route, the interface's address and MAC)
# and `kdumpinit modules nbd://` packs the NIC's drivers: about 4 KB,
# arm64 598,360 bytes; then the NBD connection over netlink, connected
# again when it drops (net/nbdnl.c): arm64 604,280. tests/e2e-arm64/host.sh and the docs suite read
# the limit here.
$(BUILD)/kdumpinit: $(OBJS)
	@echo "  LD      $@"
	@$(MUSL_CC) $(LDFLAGS_STATIC) $(ARCH_LDFLAGS) -o $@ $(OBJS) $(DEPS_LDLIBS) -lpthread
	@size=$$(stat -c %s $@); echo "  SIZE    $@ $$size bytes"; \
	  test $$size -le 606208 || { echo "kdumpinit is over 592 KiB" >&2; rm -f $@; exit 1; }

include tests/tests.mk

SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
SYSTEMD_GENERATOR_DIR ?= $(PREFIX)/lib/systemd/system-generators
SYSCONFDIR ?= /etc
MANDIR ?= $(PREFIX)/share/man
# kdumpinit-arm and kdumpinit-save, which the units and the kernel hook run
# (not for PATH), and the package's defaults (default.kdumpinit) they read.
LIBEXECDIR ?= $(PREFIX)/lib/kdumpinit
DOCDIR ?= $(PREFIX)/share/doc/kdumpinit
DOCS := README.md docs/CLI.md docs/DESIGN.md docs/FILTERING.md docs/FORMAT.md

# The settings file is the administrator's once it exists: never replaced.
# The kernel hooks in /etc/kernel are code, and are.
install: $(BUILD)/kdumpinit
	install -D -m 0755 $(BUILD)/kdumpinit $(DESTDIR)$(PREFIX)/sbin/kdumpinit
	sed 's|^installed_binary=$$|installed_binary=$(PREFIX)/sbin/kdumpinit|' initramfs/mkinitramfs \
	  > $(DESTDIR)$(PREFIX)/sbin/kdumpinit-mkinitramfs
	grep -qx 'installed_binary=$(PREFIX)/sbin/kdumpinit' $(DESTDIR)$(PREFIX)/sbin/kdumpinit-mkinitramfs
	chmod 0755 $(DESTDIR)$(PREFIX)/sbin/kdumpinit-mkinitramfs
	install -d $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	sed 's|@PREFIX@|$(PREFIX)|g' dist/kdumpinit-save.service > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/kdumpinit-save.service
	chmod 0644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/kdumpinit-save.service
	sed 's|@PREFIX@|$(PREFIX)|g' dist/kdumpinit-arm.service > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/kdumpinit-arm.service
	chmod 0644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/kdumpinit-arm.service
	install -d $(DESTDIR)$(LIBEXECDIR)
	sed 's|@PREFIX@|$(PREFIX)|g' dist/kdumpinit-arm > $(DESTDIR)$(LIBEXECDIR)/kdumpinit-arm
	chmod 0755 $(DESTDIR)$(LIBEXECDIR)/kdumpinit-arm
	sed 's|@PREFIX@|$(PREFIX)|g' dist/kdumpinit-save > $(DESTDIR)$(LIBEXECDIR)/kdumpinit-save
	chmod 0755 $(DESTDIR)$(LIBEXECDIR)/kdumpinit-save
	sed 's|@PREFIX@|$(PREFIX)|g' dist/kdumpinit-exports > $(DESTDIR)$(LIBEXECDIR)/kdumpinit-exports
	chmod 0755 $(DESTDIR)$(LIBEXECDIR)/kdumpinit-exports
	sed 's|@PREFIX@|$(PREFIX)|g' dist/default.kdumpinit > $(DESTDIR)$(LIBEXECDIR)/default.kdumpinit
	chmod 0644 $(DESTDIR)$(LIBEXECDIR)/default.kdumpinit
	install -d $(DESTDIR)$(SYSTEMD_GENERATOR_DIR)
	sed 's|@PREFIX@|$(PREFIX)|g' dist/kdumpinit-generator > $(DESTDIR)$(SYSTEMD_GENERATOR_DIR)/kdumpinit-generator
	chmod 0755 $(DESTDIR)$(SYSTEMD_GENERATOR_DIR)/kdumpinit-generator
	install -d $(DESTDIR)$(SYSCONFDIR)/kernel/postinst.d $(DESTDIR)$(SYSCONFDIR)/kernel/postrm.d
	sed 's|@PREFIX@|$(PREFIX)|g' dist/kernel-postinst.d/kdumpinit > $(DESTDIR)$(SYSCONFDIR)/kernel/postinst.d/kdumpinit
	chmod 0755 $(DESTDIR)$(SYSCONFDIR)/kernel/postinst.d/kdumpinit
	install -m 0755 dist/kernel-postrm.d/kdumpinit $(DESTDIR)$(SYSCONFDIR)/kernel/postrm.d/kdumpinit
	test -e $(DESTDIR)$(SYSCONFDIR)/default/kdumpinit || \
	  { install -d $(DESTDIR)$(SYSCONFDIR)/default && \
	    sed 's|@PREFIX@|$(PREFIX)|g' dist/default.kdumpinit > $(DESTDIR)$(SYSCONFDIR)/default/kdumpinit && \
	    chmod 0644 $(DESTDIR)$(SYSCONFDIR)/default/kdumpinit; }
	install -D -m 0644 docs/kdumpinit.8 $(DESTDIR)$(MANDIR)/man8/kdumpinit.8
	install -D -m 0644 docs/kdumpinit-mkinitramfs.8 $(DESTDIR)$(MANDIR)/man8/kdumpinit-mkinitramfs.8
	install -d $(DESTDIR)$(DOCDIR)
	install -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	install -d $(DESTDIR)$(DOCDIR)/examples
	for u in kdumpinit-exports.service kdumpinit-exports.timer; do \
	  sed 's|@PREFIX@|$(PREFIX)|g; s|@DOCDIR@|$(DOCDIR)|g' dist/$$u > $(DESTDIR)$(DOCDIR)/examples/$$u && \
	  chmod 0644 $(DESTDIR)$(DOCDIR)/examples/$$u || exit 1; done

# make deb: kdumpinit_$(VERSION)_amd64.deb and
# kdumpinit-crash-kernel_$(VERSION)_amd64.deb in $(BUILD)/, built with
# dpkg-buildpackage from a copy of the tracked sources (debian/rules); the
# static libraries come from this tree's deps build, and the crash kernel
# from this machine's cache of it (relinked around the package's own
# kdumpinit), so the package build itself downloads nothing once
# `make crash-kernel` has run here.
deb:
	@$(SETUP) deb
	@$(MAKE) --no-print-directory run-deb

run-deb: $(DEPS_STAMP)
	@BUILD=$(BUILD) VERSION=$(VERSION) dist/mkdeb.sh

# make crash-kernel: $(BUILD)/crash-kernel/vmlinuz (x86_64) or Image
# (ARCH=arm64), one file that captures for any first kernel of its
# architecture. Cached per machine (crash-kernel/build.sh says how).
CRASH_KERNEL_ARCH := $(if $(filter arm64,$(ARCH)),arm64,x86_64)
CRASH_KERNEL_FILE := $(BUILD)/crash-kernel/$(if $(filter arm64,$(ARCH)),Image,vmlinuz)
crash-kernel:
	@$(SETUP) build crash-kernel $(if $(filter arm64,$(ARCH)),arm64)
	@$(MAKE) --no-print-directory run-crash-kernel

run-crash-kernel: $(BUILD)/kdumpinit
	@crash-kernel/build.sh $(CRASH_KERNEL_ARCH) $(BUILD)/kdumpinit $(BUILD)/crash-kernel

# Installed where kdumpinit-arm looks for it (KDUMPINIT_CRASH_KERNEL=auto), with
# its .config and built-in lists beside it (arm --dev reads them).
install-crash-kernel: run-crash-kernel
	@$(MAKE) --no-print-directory install-built-crash-kernel

# What run-crash-kernel left, installed without building (the package
# build runs the two in its build and install steps).
install-built-crash-kernel:
	install -D -m 0644 $(CRASH_KERNEL_FILE) $(DESTDIR)$(LIBEXECDIR)/crash-kernel
	install -m 0644 $(CRASH_KERNEL_FILE).manifest $(DESTDIR)$(LIBEXECDIR)/crash-kernel.manifest
	for f in config modules.builtin modules.builtin.modinfo; do \
	  install -m 0644 $(CRASH_KERNEL_FILE).$$f $(DESTDIR)$(LIBEXECDIR)/crash-kernel.$$f || exit 1; \
	done

clean:
	rm -rf $(BUILD)/obj $(BUILD)/kdumpinit $(BUILD)/tests

distclean:
	rm -rf $(BUILD)

.PHONY: all install deb run-deb clean distclean crash-kernel run-crash-kernel install-crash-kernel \
	install-built-crash-kernel
$(BUILD)/obj/kernel/memmap.o: KDI_CFLAGS += -O2
