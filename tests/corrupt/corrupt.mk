# tests/corrupt/corrupt.mk: the corrupt suite's ASan build of the binary.
# Included by tests/tests.mk; paths are relative to the repository top.
#
#   make asan-kdumpinit   build/asan/kdumpinit: every source of kdumpinit,
#                         the programs included, built with the host clang under
#                         AddressSanitizer and UBSan, for tests/corrupt/run.sh
#                         to capture damaged vmcores with
#
# lz4.c and xxhash.c come from the unpacked lz4 tree, as for the fuzz
# targets (FUZZ_LZ4_SRC); libelf and zlib are the system's. It is a host
# binary (glibc): never packed into an initramfs.
ASAN_KDI := $(BUILD)/asan/kdumpinit
ASAN_KDI_CC ?= clang-14
ASAN_KDI_LZ4 ?= $(BUILD)/src/lz4/lib
ASAN_KDI_FLAGS := -std=gnu11 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -DKDI_VERSION='"asan"' -DXXH_NAMESPACE=LZ4_ \
	-I$(ASAN_KDI_LZ4) -w

$(ASAN_KDI): $(SRCS) $(HDRS) tests/corrupt/corrupt.mk
	@test -f $(ASAN_KDI_LZ4)/lz4.c || { echo "asan-kdumpinit: no $(ASAN_KDI_LZ4)/lz4.c:" \
	  "run 'make' first, or set ASAN_KDI_LZ4 to an unpacked lz4 lib/ directory" >&2; exit 1; }
	@mkdir -p $(@D)
	@echo "  ASAN    $@"
	@$(ASAN_KDI_CC) $(ASAN_KDI_FLAGS) -o $@ $(SRCS) $(ASAN_KDI_LZ4)/lz4.c $(ASAN_KDI_LZ4)/xxhash.c \
	  -lelf -lz -lpthread

asan-kdumpinit: $(ASAN_KDI)

.PHONY: asan-kdumpinit
