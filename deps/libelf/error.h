/* deps/libelf/error.h -- musl has no <error.h> (a glibc extension), and
   elfutils' lib/system.h insists on it.  libelf 0.188 never calls error(),
   but a working definition keeps other elfutils versions (ELFUTILS_SRC=)
   building and linking.  */
#ifndef KDUMPINIT_ERROR_H
#define KDUMPINIT_ERROR_H 1

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void
error (int status, int errnum, const char *format, ...)
{
  va_list ap;

  fflush (stdout);
  va_start (ap, format);
  vfprintf (stderr, format, ap);
  va_end (ap);
  if (errnum != 0)
    fprintf (stderr, ": %s", strerror (errnum));
  fputc ('\n', stderr);
  if (status != 0)
    exit (status);
}

#endif
