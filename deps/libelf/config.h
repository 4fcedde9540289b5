/* deps/libelf/config.h -- stands in for the config.h that elfutils'
   configure would write.  That configure cannot run against musl (it
   requires argp), and libelf/ needs only the few answers below.  They
   describe musl 1.2 with GCC; deps/libelf.mk puts this directory first on
   the include path so this file wins over any config.h in the source tree.  */
#ifndef KDUMPINIT_LIBELF_CONFIG_H
#define KDUMPINIT_LIBELF_CONFIG_H 1

#define PACKAGE "elfutils"
#define PACKAGE_NAME "elfutils"
#define PACKAGE_TARNAME "elfutils"
#define PACKAGE_VERSION "0.188"
#define PACKAGE_STRING "elfutils 0.188"
#define PACKAGE_BUGREPORT ""
#define PACKAGE_URL ""
#define VERSION PACKAGE_VERSION

#define HAVE_VISIBILITY 1      /* hide libelf's internal symbols */
#define HAVE_FALLTHROUGH 1     /* GCC >= 7 */
#define SIZEOF_LONG __SIZEOF_LONG__
#define HAVE_ERROR_H 1         /* our shim error.h, beside this file */
#define HAVE_MREMAP 1          /* musl has mremap under _GNU_SOURCE */
#define HAVE_DECL_MEMRCHR 1
#define HAVE_DECL_MEMPCPY 1
#define HAVE_DECL_REALLOCARRAY 1
#define HAVE_DECL_RAWMEMCHR 0  /* glibc-only: libelf falls back to memchr */
#define HAVE_DECL_POWEROF2 1   /* musl's <sys/param.h> has it */

/* USE_LOCKS stays undefined on purpose: eu-config.h tests it with #ifdef,
   so even "#define USE_LOCKS 0" would turn on pthread rwlocks.  kdumpinit
   uses libelf from one thread.  */

/* glibc-only; eu-config.h uses it only for the locks above.  A no-op in
   case another elfutils version uses it elsewhere.  */
#ifndef assert_perror
# define assert_perror(errnum) ((void) (errnum))
#endif

#include <eu-config.h>

#endif
