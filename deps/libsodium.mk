# deps/libsodium.mk -- build libsodium.a from the few libsodium sources
# sealed dumps (dump/seal.c) use, directly.
#
# Why not libsodium's own build: the Debian orig tarball is a git snapshot
# with no configure (autogen.sh needs autoconf, automake, libtool), and its
# full static library costs kdumpinit 148 KB: sodium_init's runtime
# dispatch pulls in every CPU variant. Only the reference implementations
# below are compiled; sodium_init is never called, so they stay the
# defaults. The result costs about 70 KB (docs/DESIGN.md, "Sealed dumps").
#
# Debian's patch: bookworm's libsodium 1.0.18-1+deb12u1 carries one,
# CVE-2025-69277 (core_ed25519_is_valid_point: check Y==Z as well as X==0,
# in ge25519_is_on_main_subgroup). It edits
# crypto_core/ed25519/ref10/ed25519_ref10.c, which is compiled here (the
# X25519 base-point multiply lives in it), so it is applied: deps.mk fetches
# the revision's debian tarball (pinned in deps/SHA256SUMS, like the orig
# one) and applies its series to the unpacked tree before this file runs.
# Nothing here calls the patched function (seal.c does X25519, not ed25519
# point checks), and --gc-sections drops it from kdumpinit. A superseded
# revision has another debian tarball: fetch.sh then fails on the missing
# file, and the pins move together.
#
# Run by deps.mk from the repository top as
#   $(MAKE) -f deps/libsodium.mk SRC=<libsodium tree> OBJ=<object dir> \
#       OUT=<libsodium.a> CC=... CFLAGS=...
#
# Also included, for SODIUM_FILES and SODIUM_DEFS only (the rules below are
# left out unless this is make's main makefile), by tests/unit/unit.mk and
# tests/fuzz/fuzz.mk: they compile the same sources with the same defines
# under sanitizers with the host compiler, as they do lz4.c. The list of
# files is this one; add a source here and every build gets it.

# The sources, relative to src/libsodium/ in the tree.
SODIUM_FILES := crypto_aead/xchacha20poly1305/sodium/aead_xchacha20poly1305.c \
	crypto_aead/chacha20poly1305/sodium/aead_chacha20poly1305.c \
	crypto_stream/chacha20/stream_chacha20.c crypto_stream/chacha20/ref/chacha20_ref.c \
	crypto_onetimeauth/poly1305/onetimeauth_poly1305.c \
	crypto_onetimeauth/poly1305/donna/poly1305_donna.c \
	crypto_stream/chacha20/dolbeau/chacha20_dolbeau-ssse3.c \
	crypto_stream/chacha20/dolbeau/chacha20_dolbeau-avx2.c \
	crypto_onetimeauth/poly1305/sse2/poly1305_sse2.c \
	crypto_core/hchacha20/core_hchacha20.c \
	crypto_scalarmult/crypto_scalarmult.c crypto_scalarmult/curve25519/scalarmult_curve25519.c \
	crypto_scalarmult/curve25519/ref10/x25519_ref10.c crypto_core/ed25519/ref10/ed25519_ref10.c \
	crypto_generichash/crypto_generichash.c crypto_generichash/blake2b/generichash_blake2.c \
	crypto_generichash/blake2b/ref/generichash_blake2b.c crypto_generichash/blake2b/ref/blake2b-ref.c \
	crypto_generichash/blake2b/ref/blake2b-compress-ref.c \
	crypto_kdf/crypto_kdf.c crypto_kdf/blake2b/kdf_blake2b.c \
	randombytes/randombytes.c randombytes/sysrandom/randombytes_sysrandom.c \
	sodium/utils.c sodium/runtime.c crypto_verify/sodium/verify.c

# What configure would have found on a musl x86_64/aarch64 build host:
# little-endian, getrandom(2), 128-bit integers (TI mode). The include
# directories are added by each user: -I<tree>/src/libsodium/include and
# -I<tree>/src/libsodium/include/sodium.
SODIUM_DEFS := -DCONFIGURED=1 -DNATIVE_LITTLE_ENDIAN=1 -DHAVE_GETRANDOM=1 \
	-DHAVE_SYS_RANDOM_H=1 -DHAVE_TI_MODE=1

# The x86_64 SIMD code of the two primitives a capture spends its time in:
# ChaCha20 (SSSE3, AVX2) and Poly1305 (SSE2), chosen at run time from
# CPUID (dump/seal.c calls libsodium's own choosers, which sodium_init
# would). 1.5 GB/s against 0.44 for the reference code on this machine:
# what keeps sealing within the capture's budget (docs/DESIGN.md). Only
# these files get the intrinsics' defines: given to every file they would
# make the choosers of BLAKE2b and X25519 name variants not built here.
# Without them (arm64, the sanitizer builds) the SIMD files compile to
# nothing and the reference code is chosen.
SODIUM_SIMD_FILES := crypto_stream/chacha20/stream_chacha20.c \
	crypto_stream/chacha20/dolbeau/chacha20_dolbeau-ssse3.c \
	crypto_stream/chacha20/dolbeau/chacha20_dolbeau-avx2.c \
	crypto_onetimeauth/poly1305/onetimeauth_poly1305.c \
	crypto_onetimeauth/poly1305/sse2/poly1305_sse2.c sodium/runtime.c
SODIUM_SIMD_DEFS := -DHAVE_CPUID=1 -DHAVE_AVX_ASM=1 -DHAVE_MMINTRIN_H=1 -DHAVE_EMMINTRIN_H=1 \
	-DHAVE_PMMINTRIN_H=1 -DHAVE_TMMINTRIN_H=1 -DHAVE_SMMINTRIN_H=1 -DHAVE_AVXINTRIN_H=1 \
	-DHAVE_AVX2INTRIN_H=1

ifeq ($(lastword $(MAKEFILE_LIST)),$(firstword $(MAKEFILE_LIST)))
L := $(SRC)/src/libsodium
SRCS := $(addprefix $(L)/,$(SODIUM_FILES))
OBJS := $(patsubst $(L)/%.c,$(OBJ)/%.o,$(SRCS))

SODIUM_CPPFLAGS := $(SODIUM_DEFS) -I$(L)/include -I$(L)/include/sodium

# version.h is configure's output from version.h.in (configure.ac: 1.0.18,
# library version 10.3, not minimal).
.DEFAULT_GOAL := $(OUT)
VERSION_H := $(L)/include/sodium/version.h
$(VERSION_H): $(VERSION_H).in
	sed -e 's/@VERSION@/1.0.18/' -e 's/@SODIUM_LIBRARY_VERSION_MAJOR@/10/' \
	  -e 's/@SODIUM_LIBRARY_VERSION_MINOR@/3/' -e 's/@SODIUM_LIBRARY_MINIMAL_DEF@//' $< >$@

$(OBJS): $(VERSION_H)

$(OUT): $(OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# The SIMD defines where the compiler targets x86_64.
ifneq ($(findstring x86_64,$(shell $(CC) -dumpmachine 2>/dev/null)),)
$(addprefix $(OBJ)/,$(SODIUM_SIMD_FILES:.c=.o)): SODIUM_CPPFLAGS += $(SODIUM_SIMD_DEFS)
endif

$(OBJ)/%.o: $(L)/%.c
	@mkdir -p $(@D)
	$(CC) $(SODIUM_CPPFLAGS) $(CFLAGS) -ffunction-sections -fdata-sections -c $< -o $@
endif
