/* The NBD client's handshake (the fixed newstyle negotiation with
 * NBD_OPT_GO, falling back to NBD_OPT_EXPORT_NAME), which PID 1 does
 * before it hands the socket to the kernel's NBD driver: a network dump
 * device (kdumpinit.dev=nbd://HOST[:PORT]/EXPORT). Over read and write
 * callbacks, so that the tests and the fuzz target drive it with any
 * server's bytes; everything the server sends is checked. */
#ifndef KDI_NBD_H
#define KDI_NBD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NBD_PORT 10809
#define NBD_NAME_MAX 4096	/* the protocol's longest string */

/* Transmission flags (NBD_INFO_EXPORT). */
#define NBDX_HAS_FLAGS	(1u << 0)
#define NBDX_READ_ONLY	(1u << 1)
#define NBDX_SEND_FLUSH	(1u << 2)
#define NBDX_SEND_FUA	(1u << 3)

struct nbd_io {
	/* Like read(2) and write(2): bytes moved, 0 at the end, -errno. */
	ssize_t (*read)(void *arg, void *buf, size_t len);
	ssize_t (*write)(void *arg, const void *buf, size_t len);
	void *arg;
};

struct nbd_export {
	uint64_t size;		/* bytes */
	uint16_t flags;		/* NBD_FLAG_* */
	uint32_t min_block, pref_block, max_block;	/* 0: not said */
	int go;			/* NBD_OPT_GO was answered (else EXPORT_NAME) */
};

/* The block size to give the kernel's NBD driver for ex: the server's
 * preferred one when the driver takes it (512 to 4096), else 4096. */
uint32_t nbd_block_size(const struct nbd_export *ex);

/* Negotiates export name (at most NBD_NAME_MAX bytes) on io. 0: ex is
 * filled and the connection is in the transmission phase. -errno, with
 * what the server said or did in why:
 *   -ENOENT      no such export
 *   -EACCES      refused by policy, or TLS required
 *   -EROFS       the export is read-only
 *   -EOPNOTSUPP  not a fixed-newstyle server
 *   -EPROTO      the server's bytes are not the protocol
 *   -EIO         the connection ended or failed (the read's error) */
int nbd_handshake(const struct nbd_io *io, const char *name, struct nbd_export *ex, char *why,
		  size_t whysz);

/* In the transmission phase, done by the host commands themselves (the
 * kernel's driver does it in the crash kernel): len bytes at off with
 * NBD_CMD_READ, a simple reply checked (its magic, its handle, its
 * error). 0, or -errno with why. */
int nbd_read(const struct nbd_io *io, uint64_t off, void *buf, uint32_t len, char *why,
	     size_t whysz);
/* NBD_CMD_DISC: the server closes; nothing comes back. */
void nbd_disconnect(const struct nbd_io *io);

/* kdumpinit.dev=nbd://HOST[:PORT]/EXPORT: 0 and the parts (host without
 * brackets for an IPv6 literal), or -EINVAL with why. */
struct nbd_url {
	char host[256];
	uint16_t port;
	char name[256];
};
int nbd_url_parse(const char *s, struct nbd_url *u, char *why, size_t whysz);

#endif
