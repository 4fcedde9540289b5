/* One file out of an initramfs, as the kernel unpacks it
 * (init/initramfs.c): for `status`, the /etc/kdumpinit.conf the armed
 * crash kernel will read. */
#ifndef KDI_INITRD_H
#define KDI_INITRD_H

#include <stddef.h>

/* The most an image may weigh, packed or unpacked: more is refused, not
 * read (the crash kernel's reservation holds it whole, unpacked too). */
#define INITRD_MAX (256u << 20)

/* Finds NAME ("etc/kdumpinit.conf": no leading slash) in the image PATH:
 * newc archives (NUL padding between them), each as it is or compressed
 * with gzip or lz4's legacy frame (kdumpinit-mkinitramfs -z); of entries
 * named alike the last, as the kernel's unpacking leaves it. Its first
 * CAP bytes go into BUF and its size into *LEN (more than CAP: not all
 * of it read). PATH is opened without following a link, and must be a
 * regular file (or a block device). 0; -ENOENT no such entry; -EBADMSG the image is not one
 * of those, or the entry not a regular file (*why says which, a static
 * string); -EFBIG over INITRD_MAX; -ENOMEM; -errno of reading. */
int initrd_file(const char *path, const char *name, char *buf, size_t cap, size_t *len,
		const char **why);

#endif
