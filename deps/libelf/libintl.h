/* deps/libelf/libintl.h -- libelf wraps its error messages in dgettext()
   (via _() in eu-config.h).  A kdump initramfs has no message catalogs, so
   translation can only ever return the English text: skip musl's gettext
   and its locale-loading code (a few KB of the static binary).  */
#ifndef KDUMPINIT_LIBINTL_H
#define KDUMPINIT_LIBINTL_H 1

#define dgettext(domain, msgid) ((void) (domain), (char *) (msgid))

#endif
