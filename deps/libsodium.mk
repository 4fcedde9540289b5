# deps/libsodium.mk -- build libsodium.a from the few libsodium sources
# sealed dumps (dump/seal.c) use, directly, and SHA-256, which `status`
# checks the armed image's manifest with (host/sha256.c).
#
# Why not libsodium's own build: its full static library costs kdumpinit
# 148 KB (sodium_init's runtime dispatch pulls in every CPU variant), and
# configure is slow under musl-gcc. Only the sources below are compiled;
# sodium_init is never called, and dump/seal.c runs the few choosers it
# needs itself. The result costs about 80 KB (docs/DESIGN.md, "Sealed
# dumps").
#
# Why 1.0.22, from sid: sealed dumps of format version 7 use AEGIS-256
# (1.0.19 and later), which seals at about 8 GB/s a core with AES-NI (or
# the ARMv8 crypto extension) where XChaCha20-Poly1305 does 1.3: what
# keeps a sealed capture within 5 % of a clear one. Its constant-time
# software AES opens such dumps on any CPU. XChaCha20-Poly1305 stays, for
# reading dumps of versions 5 and 6. Debian's 1.0.22-2 carries no patch
# (the CVE-2025-69277 fix bookworm's 1.0.18 needed is upstream's since
# 1.0.21).
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
SODIUM_FILES := crypto_aead/aegis256/aead_aegis256.c crypto_aead/aegis256/aegis256_soft.c \
	crypto_aead/aegis256/aegis256_aesni.c crypto_aead/aegis256/aegis256_armcrypto.c \
	crypto_core/softaes/softaes.c \
	crypto_aead/xchacha20poly1305/aead_xchacha20poly1305.c \
	crypto_aead/chacha20poly1305/aead_chacha20poly1305.c \
	crypto_stream/chacha20/stream_chacha20.c crypto_stream/chacha20/ref/chacha20_ref.c \
	crypto_onetimeauth/poly1305/onetimeauth_poly1305.c \
	crypto_onetimeauth/poly1305/donna/poly1305_donna.c \
	crypto_core/hchacha20/core_hchacha20.c \
	crypto_scalarmult/crypto_scalarmult.c crypto_scalarmult/curve25519/scalarmult_curve25519.c \
	crypto_scalarmult/curve25519/ref10/x25519_ref10.c crypto_core/ed25519/ref10/ed25519_ref10.c \
	crypto_generichash/crypto_generichash.c crypto_generichash/blake2b/generichash_blake2.c \
	crypto_generichash/blake2b/ref/generichash_blake2b.c crypto_generichash/blake2b/ref/blake2b-ref.c \
	crypto_generichash/blake2b/ref/blake2b-compress-ref.c \
	crypto_kdf/crypto_kdf.c crypto_kdf/blake2b/kdf_blake2b.c \
	crypto_hash/sha256/hash_sha256.c crypto_hash/sha256/cp/hash_sha256_cp.c \
	randombytes/randombytes.c randombytes/sysrandom/randombytes_sysrandom.c \
	sodium/utils.c sodium/runtime.c crypto_verify/verify.c

# What configure would have found on a musl x86_64/aarch64 build host:
# little-endian, getrandom(2), 128-bit integers (TI mode). The include
# directories are added by each user: -I<tree>/src/libsodium/include and
# -I<tree>/src/libsodium/include/sodium.
SODIUM_DEFS := -DCONFIGURED=1 -DNATIVE_LITTLE_ENDIAN=1 -DHAVE_GETRANDOM=1 \
	-DHAVE_SYS_RANDOM_H=1 -DHAVE_TI_MODE=1

# AEGIS-256's hardware code, chosen at run time (dump/seal.c calls
# libsodium's own choosers, which sodium_init would): AES-NI with AVX on
# x86_64 from CPUID, the crypto extension on arm64 from AT_HWCAP. Only
# these files get the intrinsics' defines: given to every file they would
# make the choosers of BLAKE2b and X25519 name variants not built here.
# Without them (the sanitizer builds) the hardware files compile to
# nothing and the software AES is chosen. XChaCha20-Poly1305, which only
# reads sealed dumps of versions 5 and 6 now, is the reference code
# (0.44 GB/s here): its SIMD variants would cost 16 KB of the binary.
SODIUM_SIMD_FILES := sodium/runtime.c crypto_aead/aegis256/aead_aegis256.c \
	crypto_aead/aegis256/aegis256_aesni.c
SODIUM_SIMD_DEFS := -DHAVE_CPUID=1 -DHAVE_AVX_ASM=1 -DHAVE_MMINTRIN_H=1 -DHAVE_EMMINTRIN_H=1 \
	-DHAVE_PMMINTRIN_H=1 -DHAVE_TMMINTRIN_H=1 -DHAVE_SMMINTRIN_H=1 -DHAVE_AVXINTRIN_H=1 \
	-DHAVE_AVX2INTRIN_H=1 -DHAVE_WMMINTRIN_H=1
SODIUM_ARM64_FILES := sodium/runtime.c crypto_aead/aegis256/aead_aegis256.c \
	crypto_aead/aegis256/aegis256_armcrypto.c
SODIUM_ARM64_DEFS := -DHAVE_ARMCRYPTO=1 -DHAVE_GETAUXVAL=1
# Built for size, but for AEGIS-256's hardware code, which seals every
# page: the rest runs once a dump (X25519, BLAKE2b), reads old dumps
# (ChaCha20, Poly1305) or stands in for missing AES instructions, where a
# capture is slow anyway (the software AES: 9 KB less than at -O2).
SODIUM_FAST_FILES := crypto_aead/aegis256/aegis256_aesni.c crypto_aead/aegis256/aegis256_armcrypto.c \
	crypto_aead/aegis256/aead_aegis256.c

ifeq ($(lastword $(MAKEFILE_LIST)),$(firstword $(MAKEFILE_LIST)))
L := $(SRC)/src/libsodium
SRCS := $(addprefix $(L)/,$(SODIUM_FILES))
OBJS := $(patsubst $(L)/%.c,$(OBJ)/%.o,$(SRCS))

SODIUM_CPPFLAGS := $(SODIUM_DEFS) -I$(L)/include -I$(L)/include/sodium

# version.h is configure's output from version.h.in (configure.ac: 1.0.22,
# library version 26.4, not minimal).
.DEFAULT_GOAL := $(OUT)
VERSION_H := $(L)/include/sodium/version.h
$(VERSION_H): $(VERSION_H).in
	sed -e 's/@VERSION@/1.0.22/' -e 's/@SODIUM_LIBRARY_VERSION_MAJOR@/26/' \
	  -e 's/@SODIUM_LIBRARY_VERSION_MINOR@/4/' -e 's/@SODIUM_LIBRARY_MINIMAL_DEF@//' $< >$@

$(OBJS): $(VERSION_H)

$(OUT): $(OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# The SIMD defines for the architecture the compiler targets.
SODIUM_TARGET := $(shell $(CC) -dumpmachine 2>/dev/null)
ifneq ($(findstring x86_64,$(SODIUM_TARGET)),)
$(addprefix $(OBJ)/,$(SODIUM_SIMD_FILES:.c=.o)): SODIUM_CPPFLAGS += $(SODIUM_SIMD_DEFS)
endif
ifneq ($(findstring aarch64,$(SODIUM_TARGET)),)
$(addprefix $(OBJ)/,$(SODIUM_ARM64_FILES:.c=.o)): SODIUM_CPPFLAGS += $(SODIUM_ARM64_DEFS)
endif

SODIUM_OPT := -Os
$(addprefix $(OBJ)/,$(SODIUM_FAST_FILES:.c=.o)): SODIUM_OPT :=
# Link-time optimisation with kdumpinit's own objects (fat objects: any
# link still works): 3 KB less.

$(OBJ)/%.o: $(L)/%.c
	@mkdir -p $(@D)
	$(CC) $(SODIUM_CPPFLAGS) $(CFLAGS) $(SODIUM_OPT) -flto -ffat-lto-objects -ffunction-sections -fdata-sections -c $< -o $@
endif
