# deps/libelf.mk -- build libelf.a from elfutils' libelf/*.c directly.
#
# Why not elfutils' own build: its configure fails under musl (it requires
# argp), and we want only libelf anyway.  All libelf/*.c files are exactly
# the sources of upstream's libelf.a (libelf/Makefile.am, 0.188).
#
# Run by deps.mk from the repository top as
#   $(MAKE) -f deps/libelf.mk SRC=<elfutils tree> OBJ=<object dir> \
#       OUT=<libelf.a> ZLIB_INC=<dir with zlib.h> CC=... CFLAGS=...

shim := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))/libelf

SRCS := $(sort $(wildcard $(SRC)/libelf/*.c))
ifeq ($(SRCS),)
$(error no $(SRC)/libelf/*.c: ELFUTILS_SRC must be an elfutils source tree)
endif
OBJS := $(patsubst $(SRC)/libelf/%.c,$(OBJ)/%.o,$(SRCS))

# The shim directory comes first so its config.h, error.h and libintl.h win.  elfutils
# itself always builds with _GNU_SOURCE (mremap, memrchr, mempcpy).
LIBELF_CPPFLAGS := -DHAVE_CONFIG_H -D_GNU_SOURCE -I$(shim) \
	-I$(SRC)/libelf -I$(SRC) -I$(SRC)/lib -I$(ZLIB_INC)

$(OUT): $(OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(OBJ)/%.o: $(SRC)/libelf/%.c | $(OBJ)
	$(CC) $(LIBELF_CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OBJ):
	mkdir -p $@
