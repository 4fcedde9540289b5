/* The kernel's NBD client over generic netlink (linux/nbd-netlink.h): the
 * connection handed over with NBD_CMD_CONNECT and a dead-connection
 * timeout, so that when it drops the kernel holds the dump's writes
 * instead of failing them; NBD_CMD_LINK_DEAD, multicast when it does; and
 * NBD_CMD_RECONFIGURE, which gives the device a new connection, on which
 * the held writes go out. (The ioctls, net/netdump.c's fallback, have no
 * such timeout: a dropped connection fails every write after it.) */
#ifndef KDI_NBDNL_H
#define KDI_NBDNL_H

#include <stddef.h>
#include <stdint.h>

struct nbd_export;

struct nbdnl {
	int fd;			/* commands and their answers */
	int mc;			/* the multicast group: LINK_DEAD */
	uint16_t family;
	uint32_t group;
	uint32_t seq;
};

/* Both sockets, the family and its group resolved: 0, or -errno
 * (-ENOENT: no "nbd" family, the module not loaded). */
int nbdnl_open(struct nbdnl *n);
void nbdnl_close(struct nbdnl *n);

/* Socket sock (handshake done) as a new device for export ex: requests
 * answered in timeout_s or the connection taken for dead, writes held
 * dead_s for a new one. 0 and the device's index, or -errno. The kernel
 * keeps its own reference to sock. */
int nbdnl_connect(struct nbdnl *n, int sock, const struct nbd_export *ex, unsigned timeout_s,
		  unsigned dead_s, uint32_t *index);

/* Device index's dead connection replaced by sock: 0 or -errno. */
int nbdnl_reconfigure(struct nbdnl *n, uint32_t index, int sock);

/* 1 when the kernel said device index's connection is dead within ms,
 * 0 when not, -errno. */
int nbdnl_wait_dead(struct nbdnl *n, uint32_t index, int ms);

/* The parser of the kernel's messages, alone (tests, fuzz): the value of
 * attribute type in the attributes at a[0, len), or NULL; *alen its
 * length. Lengths are checked against len. */
const uint8_t *nbdnl_attr(const uint8_t *a, size_t len, uint16_t type, uint16_t *alen);

#endif
