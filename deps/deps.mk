# deps/deps.mk -- the static musl libraries kdumpinit links: lz4, zlib,
# libelf (from elfutils) and libsodium.  Debian's liblz4.a/libelf.a are glibc
# builds that musl cannot link, so we build all four from pinned sources with
# musl-gcc (libsodium: only the sources dump/seal.c needs, deps/libsodium.mk).
#
# The top Makefile does `include deps/deps.mk` and runs from the repository
# top, so every path here is relative to it.  It gets:
#   DEPS_STAMP   a file target: depend on it before compiling with
#                DEPS_CFLAGS; making it builds and installs all four libs
#   DEPS_CFLAGS  -isystem flags for the libs' headers and for the kernel
#                uapi headers (linux/, asm/, asm-generic/ only: glibc's
#                /usr/include would break a musl build), plus the XXH64
#                name mapping explained below
#   DEPS_LDLIBS  -L and -l flags, in a valid order for a static link
#   MUSL_CC      the musl compiler driver, default musl-gcc
#
# Overrides for packagers (make VAR=VALUE):
#   LZ4_SRC=DIR       use this unpacked lz4 source tree, download nothing
#   ZLIB_SRC=DIR      the same for zlib
#   ELFUTILS_SRC=DIR  the same for elfutils (only libelf/ and lib/ are read)
#   DEPS_PREFIX=DIR   use prebuilt musl static libraries from DIR/lib and
#                     their headers from DIR/include (e.g. Alpine's
#                     lz4-static, zlib-static, elfutils-dev, libsodium-static
#                     and libsodium-dev); nothing is downloaded or built.
#                     DIR/include needs xxhash.h too.
#   BUILD=DIR         build directory (default: build)
#   UAPI_INCLUDE=DIR  where linux/ and asm-generic/ live (default /usr/include)
#   UAPI_ASM=DIR      the asm/ directory (default: the multiarch one)
#   DEPS_DEBIAN_MIRROR=URL  Debian mirror for downloads (environment)
# Source trees given with *_SRC are copied (lz4, zlib) or only read
# (elfutils): the build never writes into them.
#
# Needs GNU make >= 4.3 (grouped targets), sh, tar, bzip2, gzip, sha256sum,
# and for downloads apt-get with debian-archive-keyring.

# Rules here must not become the includer's default goal: remember it and
# restore it at the end (empty means "the next rule defined").
deps_saved_goal := $(.DEFAULT_GOAL)

BUILD ?= build
MUSL_CC ?= musl-gcc
UAPI_INCLUDE ?= /usr/include
UAPI_ASM ?= $(firstword $(wildcard $(UAPI_INCLUDE)/$(shell uname -m)-linux-gnu/asm) $(UAPI_INCLUDE)/asm)

DEPS_DIR := $(BUILD)/deps
DEPS_STAMP := $(DEPS_DIR)/stamp
DEPS_UAPI := $(DEPS_DIR)/uapi

# lz4's own Makefile prefixes xxhash's symbols (XXH64 -> LZ4_XXH64) so that
# liblz4 can coexist with libxxhash; every distro's liblz4.a is built so.
# Consumers of xxhash.h must then define the same namespace, which maps the
# plain names in xxhash.h onto the prefixed symbols: code still says XXH64().
DEPS_XXH_NAMESPACE := -DXXH_NAMESPACE=LZ4_

# Flags for compiling the libraries: sections per function and object so
# that the final `-static -Wl,--gc-sections` link drops what is unused.
DEPS_OPT_CFLAGS ?= -O2 -ffunction-sections -fdata-sections

ifneq ($(DEPS_PREFIX),)
DEPS_CFLAGS := -isystem $(DEPS_PREFIX)/include -isystem $(DEPS_UAPI) $(DEPS_XXH_NAMESPACE)
DEPS_LDLIBS := -L$(DEPS_PREFIX)/lib -lelf -lz -llz4 -lsodium
else
DEPS_CFLAGS := -isystem $(DEPS_DIR)/include -isystem $(DEPS_UAPI) $(DEPS_XXH_NAMESPACE)
DEPS_LDLIBS := -L$(DEPS_DIR)/lib -lelf -lz -llz4 -lsodium
endif

# The kernel uapi headers, as a directory of links only.
# The compiler first: say what is missing before anything is fetched.
$(DEPS_DIR)/.cc:
	@command -v $(MUSL_CC) >/dev/null || { echo "deps: $(MUSL_CC) not found: install musl-tools" \
	  "(make setup installs every host package; deps/packages lists them)" >&2; exit 1; }
	@mkdir -p $(@D) && touch $@

$(DEPS_DIR)/.uapi: deps/deps.mk | $(DEPS_DIR)/.cc
	@mkdir -p $(DEPS_UAPI)
	@ln -sfn $(UAPI_INCLUDE)/linux $(DEPS_UAPI)/linux
	@ln -sfn $(UAPI_INCLUDE)/asm-generic $(DEPS_UAPI)/asm-generic
	@ln -sfn $(UAPI_ASM) $(DEPS_UAPI)/asm
	@for h in linux/types.h asm/types.h asm-generic/types.h; do \
	  test -f $(DEPS_UAPI)/$$h || { echo "deps: no $$h under $(UAPI_INCLUDE)" \
	    "(install linux-libc-dev, or set UAPI_INCLUDE/UAPI_ASM)" >&2; exit 1; }; \
	done
	@touch $@

ifneq ($(DEPS_PREFIX),)
# Prebuilt: check that the pieces are there, and that DIR is not a glibc
# prefix such as /usr on Debian (its headers break musl builds).
$(DEPS_STAMP): $(DEPS_DIR)/.uapi
	@for f in lib/libelf.a lib/libz.a lib/liblz4.a lib/libsodium.a include/libelf.h \
	  include/gelf.h include/zlib.h include/lz4.h include/lz4frame.h \
	  include/xxhash.h include/sodium.h; do \
	  test -f $(DEPS_PREFIX)/$$f || { echo "deps: DEPS_PREFIX: no $(DEPS_PREFIX)/$$f" >&2; exit 1; }; \
	done
	@if test -f $(DEPS_PREFIX)/include/gnu/libc-version.h; then \
	  echo "deps: DEPS_PREFIX=$(DEPS_PREFIX) holds glibc headers; musl needs its own prefix" >&2; exit 1; fi
	@touch $@
else

# Pinned sources: Debian bookworm source package, and its .orig tarball
# whose sha256 is pinned in deps/SHA256SUMS.
deps_lz4_pkg := lz4=1.9.4-1
deps_lz4_tar := lz4_1.9.4.orig.tar.gz
deps_zlib_pkg := zlib=1:1.2.13.dfsg-1
deps_zlib_tar := zlib_1.2.13.dfsg.orig.tar.bz2
deps_elfutils_pkg := elfutils=0.188-2.1
deps_elfutils_tar := elfutils_0.188.orig.tar.bz2
deps_elfutils_top := elfutils-0.188
# libsodium from sid (deps/fetch.sh lists sid's sources after bookworm's):
# bookworm's 1.0.18 has no AEGIS-256, which sealed dumps use from format
# version 7 (deps/libsodium.mk says why).
deps_sodium_pkg := libsodium=1.0.22-2
deps_sodium_tar := libsodium_1.0.22.orig.tar.gz

deps_dl := $(BUILD)/dl
deps_src := $(BUILD)/src
deps_log := $(DEPS_DIR)/log
deps_get :=
deps_tarballs :=

# Where each library comes from: the downloaded tarball, or the *_SRC tree.
ifeq ($(LZ4_SRC),)
deps_lz4_from := $(deps_dl)/$(deps_lz4_tar)
deps_get += $(deps_lz4_pkg) $(deps_lz4_tar)
deps_tarballs += $(deps_lz4_from)
else
deps_lz4_from := $(LZ4_SRC)
endif
ifeq ($(ZLIB_SRC),)
deps_zlib_from := $(deps_dl)/$(deps_zlib_tar)
deps_get += $(deps_zlib_pkg) $(deps_zlib_tar)
deps_tarballs += $(deps_zlib_from)
else
deps_zlib_from := $(ZLIB_SRC)
endif
ifeq ($(ELFUTILS_SRC),)
deps_elfutils_from := $(deps_dl)/$(deps_elfutils_tar)
deps_elfutils_dir := $(deps_src)/elfutils
deps_get += $(deps_elfutils_pkg) $(deps_elfutils_tar)
deps_tarballs += $(deps_elfutils_from)
else
deps_elfutils_dir := $(ELFUTILS_SRC)
endif

deps_sodium_from := $(deps_dl)/$(deps_sodium_tar)
deps_get += $(deps_sodium_pkg) $(deps_sodium_tar)
deps_tarballs += $(deps_sodium_from)

# One recipe fetches every missing tarball: separate ones would run
# `apt-get update` concurrently under -j and fight over apt's lock.
ifneq ($(deps_tarballs),)
$(deps_tarballs) &: | $(DEPS_DIR)/.cc
	@deps/fetch.sh download $(BUILD) $(deps_get)
endif

# Each library is rebuilt from a freshly unpacked tree whenever its source or
# our build rules change: that is rare, and it leaves no stale objects.  The
# `clean` steps are for *_SRC trees, which may hold objects built for glibc.
# lz4 gets its own default CPPFLAGS restated, because a CPPFLAGS given on
# the make command line would otherwise replace it.

$(DEPS_DIR)/.lz4: $(filter $(deps_dl)/%,$(deps_lz4_from)) deps/deps.mk deps/fetch.sh deps/run.sh | $(DEPS_DIR)/.cc
	@echo "  DEPS    lz4"
	@deps/fetch.sh unpack $(deps_lz4_from) $(deps_src)/lz4
	@deps/run.sh $(deps_log)/lz4-clean.log $(MAKE) -C $(deps_src)/lz4/lib clean
	@deps/run.sh $(deps_log)/lz4.log $(MAKE) -C $(deps_src)/lz4/lib \
	  CC='$(MUSL_CC)' CFLAGS='$(DEPS_OPT_CFLAGS)' \
	  CPPFLAGS='$(DEPS_XXH_NAMESPACE)' liblz4.a
	@mkdir -p $(DEPS_DIR)/include $(DEPS_DIR)/lib
	@cd $(deps_src)/lz4/lib && cp lz4.h lz4hc.h lz4frame.h xxhash.h $(abspath $(DEPS_DIR)/include)/
	@cp $(deps_src)/lz4/lib/liblz4.a $(DEPS_DIR)/lib/
	@touch $@

$(DEPS_DIR)/.zlib: $(filter $(deps_dl)/%,$(deps_zlib_from)) deps/deps.mk deps/fetch.sh deps/run.sh | $(DEPS_DIR)/.cc
	@echo "  DEPS    zlib"
	@deps/fetch.sh unpack $(deps_zlib_from) $(deps_src)/zlib
	@cd $(deps_src)/zlib && $(abspath deps/run.sh) $(abspath $(deps_log)/zlib-configure.log) \
	  env CC='$(MUSL_CC)' CFLAGS='$(DEPS_OPT_CFLAGS)' ./configure --static
	@deps/run.sh $(deps_log)/zlib-clean.log $(MAKE) -C $(deps_src)/zlib clean
	@deps/run.sh $(deps_log)/zlib-make.log $(MAKE) -C $(deps_src)/zlib libz.a
	@mkdir -p $(DEPS_DIR)/include $(DEPS_DIR)/lib
	@cp $(deps_src)/zlib/zlib.h $(deps_src)/zlib/zconf.h $(DEPS_DIR)/include/
	@cp $(deps_src)/zlib/libz.a $(DEPS_DIR)/lib/
	@touch $@

# libelf needs zlib.h, hence .zlib.  Only libelf/ and lib/ are extracted
# from the elfutils tarball; objects go to a fresh directory of our own.
$(DEPS_DIR)/.libelf: $(filter $(deps_dl)/%,$(deps_elfutils_from)) $(DEPS_DIR)/.zlib \
		deps/deps.mk deps/fetch.sh deps/run.sh deps/libelf.mk \
		deps/libelf/config.h deps/libelf/error.h deps/libelf/libintl.h | $(DEPS_DIR)/.cc
	@echo "  DEPS    libelf"
	$(if $(ELFUTILS_SRC),,@deps/fetch.sh unpack $(deps_elfutils_from) $(deps_elfutils_dir) \
	  $(deps_elfutils_top)/libelf $(deps_elfutils_top)/lib)
	@rm -rf $(DEPS_DIR)/obj/libelf
	@mkdir -p $(DEPS_DIR)/include $(DEPS_DIR)/lib
	@deps/run.sh $(deps_log)/libelf.log $(MAKE) -f deps/libelf.mk \
	  SRC=$(deps_elfutils_dir) OBJ=$(DEPS_DIR)/obj/libelf \
	  OUT=$(DEPS_DIR)/lib/libelf.a ZLIB_INC=$(DEPS_DIR)/include \
	  CC='$(MUSL_CC)' CFLAGS='$(DEPS_OPT_CFLAGS)'
	@cd $(deps_elfutils_dir)/libelf && cp libelf.h gelf.h nlist.h $(abspath $(DEPS_DIR)/include)/
	@touch $@

# libsodium: deps/libsodium.mk compiles the sources sealed dumps use from
# the unpacked tree; the unit tests' and the fuzzers' sanitizer builds
# compile the same tree. Debian's 1.0.22-2 carries no patch.
$(DEPS_DIR)/.sodium: $(deps_sodium_from) deps/deps.mk deps/fetch.sh deps/run.sh \
		deps/libsodium.mk | $(DEPS_DIR)/.cc
	@echo "  DEPS    libsodium"
	@deps/fetch.sh unpack $(deps_sodium_from) $(deps_src)/libsodium
	@rm -rf $(DEPS_DIR)/obj/libsodium
	@mkdir -p $(DEPS_DIR)/include $(DEPS_DIR)/lib
	@deps/run.sh $(deps_log)/libsodium.log $(MAKE) -f deps/libsodium.mk \
	  SRC=$(deps_src)/libsodium OBJ=$(DEPS_DIR)/obj/libsodium \
	  OUT=$(DEPS_DIR)/lib/libsodium.a CC='$(MUSL_CC)' CFLAGS='$(DEPS_OPT_CFLAGS)'
	@cp -R $(deps_src)/libsodium/src/libsodium/include/sodium.h \
	  $(deps_src)/libsodium/src/libsodium/include/sodium $(DEPS_DIR)/include/
	@touch $@

$(DEPS_STAMP): $(DEPS_DIR)/.lz4 $(DEPS_DIR)/.zlib $(DEPS_DIR)/.libelf $(DEPS_DIR)/.uapi $(DEPS_DIR)/.sodium
	@touch $@
endif

.DEFAULT_GOAL := $(deps_saved_goal)
