#include "netdump.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nbd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dhcp.h"
#include "link.h"
#include "nbd.h"
#include "nbdnl.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

#define SAY_EVERY 10.0		/* seconds between "still waiting" words */
#define CONNECT_TIMEOUT_MS 5000
#define NBD_DEVICES 16		/* the nbd module's nbds_max default */
#define NBD_TIMEOUT_S 30	/* a request the server does not answer in this fails */

int netdump_is(const char *dev)
{
	return !strncmp(dev, "nbd://", 6);
}

static ssize_t fd_read(void *arg, void *buf, size_t len)
{
	int fd = *(int *)arg;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, CONNECT_TIMEOUT_MS);
	if (n == 0)
		return -ETIMEDOUT;
	if (n < 0)
		return -errno;
	ssize_t r = read(fd, buf, len);
	return r < 0 ? -errno : r;
}

static ssize_t fd_write(void *arg, const void *buf, size_t len)
{
	ssize_t r = write(*(int *)arg, buf, len);
	return r < 0 ? -errno : r;
}

/* A TCP connection to sa, or -errno within CONNECT_TIMEOUT_MS. */
static int tcp_connect(const struct sockaddr_in *sa)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1, e = 0;
	socklen_t el = sizeof e;

	if (s < 0)
		return -errno;
	if (connect(s, (const struct sockaddr *)sa, sizeof *sa) < 0 && errno != EINPROGRESS) {
		e = errno;
		close(s);
		return -e;
	}
	struct pollfd p = { .fd = s, .events = POLLOUT };
	int n = poll(&p, 1, CONNECT_TIMEOUT_MS);
	if (n <= 0 || getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
		e = n == 0 ? ETIMEDOUT : e ? e : errno;
		close(s);
		return -e;
	}
	fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	return s;
}

static void *do_it(void *arg)
{
	int fd = (int)(intptr_t)arg;
	/* Returns when the connection ends: the device's writes fail from
	 * then on, and the capture goes around them as around a disk's. */
	if (ioctl(fd, NBD_DO_IT) < 0)
		warn("the NBD connection ended: %s", strerror(errno));
	else
		warn("the NBD connection ended");
	return NULL;
}

/* The first free /dev/nbdN given the socket; its path. */
static int nbd_give(int sock, const struct nbd_export *ex, char *path, size_t sz)
{
	int last = -ENODEV;
	for (int i = 0; i < NBD_DEVICES; i++) {
		char p[32], sp[64], v[32];
		snprintf(p, sizeof p, "/dev/nbd%d", i);
		snprintf(sp, sizeof sp, "/sys/block/nbd%d/pid", i);
		if (read_text_file(sp, v, sizeof v) >= 0)
			continue;	/* connected already */
		int fd = open(p, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			last = -errno;
			continue;
		}
		unsigned long bs = nbd_block_size(ex);
		if (ioctl(fd, NBD_SET_BLKSIZE, bs) < 0 || ioctl(fd, NBD_SET_SIZE, (unsigned long)ex->size) < 0 ||
		    ioctl(fd, NBD_SET_FLAGS, (unsigned long)ex->flags) < 0 ||
		    ioctl(fd, NBD_SET_TIMEOUT, (unsigned long)NBD_TIMEOUT_S) < 0 ||
		    ioctl(fd, NBD_SET_SOCK, (unsigned long)sock) < 0) {
			last = -errno;
			ioctl(fd, NBD_CLEAR_SOCK);
			close(fd);
			continue;
		}
		pthread_t t;
		if (pthread_create(&t, NULL, do_it, (void *)(intptr_t)fd) != 0) {
			ioctl(fd, NBD_CLEAR_SOCK);
			close(fd);
			return -EAGAIN;
		}
		pthread_detach(t);
		snprintf(path, sz, "%s", p);
		return 0;
	}
	return last;
}

/* The connection's keeper, a thread of PID 1 for the length of the dump:
 * when the kernel says the connection is dead (the server stopped, a
 * request unanswered in NBD_TIMEOUT_S), a new one within wait_s: the
 * handshake again, the same export of the same size, handed to the
 * device with NBD_CMD_RECONFIGURE; the writes the kernel held go out on
 * it, and none is lost. */
struct keeper {
	struct nbdnl nl;
	uint32_t index;
	struct sockaddr_in sa;
	struct nbd_url u;
	uint64_t size;
	unsigned wait_s;
};

/* One new connection, handed over: 0, or -errno with why. */
static int reconnect(struct keeper *k, char *why, size_t whysz)
{
	int s = tcp_connect(&k->sa), r;

	if (s < 0) {
		snprintf(why, whysz, "%s", s == -ETIMEDOUT ? "no answer" : strerror(-s));
		return s;
	}
	struct nbd_io io = { fd_read, fd_write, &s };
	struct nbd_export ex;
	r = nbd_handshake(&io, k->u.name, &ex, why, whysz);
	if (!r && ex.size != k->size) {
		snprintf(why, whysz, "the export is %llu bytes now, not %llu: not the one the dump was going "
			 "to", (unsigned long long)ex.size, (unsigned long long)k->size);
		r = -ESTALE;
	}
	if (!r && (r = nbdnl_reconfigure(&k->nl, k->index, s)) < 0)
		snprintf(why, whysz, "the kernel did not take it: %s", strerror(-r));
	close(s);	/* the kernel holds its own reference */
	return r;
}

static void *keep(void *arg)
{
	struct keeper *k = arg;
	char why[300] = "";

	for (;;) {
		int d = nbdnl_wait_dead(&k->nl, k->index, 1000);
		if (d < 0)
			sleep_ms(1000);
		if (d <= 0)
			continue;
		double t0 = now_mono(), said = t0, now = t0;
		warn("the connection to the NBD server %s:%u dropped: connecting again (the dump's writes "
		     "wait up to %u s)", k->u.host, k->u.port, k->wait_s);
		int r = -ETIMEDOUT;
		while (now - t0 < k->wait_s && (r = reconnect(k, why, sizeof why)) < 0) {
			if (now - said >= SAY_EVERY) {
				msg("still connecting again to %s:%u: %.0f s of %u s (%s)", k->u.host, k->u.port,
				    now - t0, k->wait_s, why);
				said = now;
			}
			sleep_ms(1000);
			now = now_mono();
		}
		if (r < 0) {
			warn("gave up connecting again after %u s (%s): the dump's writes fail from here on, "
			     "and the capture goes on past them", k->wait_s, why);
			return NULL;
		}
		msg("connected again to the NBD server %s:%u after %.1f s: the held writes go out, the "
		    "dump goes on", k->u.host, k->u.port, now_mono() - t0);
	}
}

/* The connection handed to the kernel over netlink, with a keeper; 0 and
 * the device's path, or -errno (then the ioctls may try). */
static int nbd_hand(int sock, const struct nbd_export *ex, const struct nbd_url *u,
		    const struct sockaddr_in *sa, unsigned wait_s, char *path, size_t sz)
{
	struct keeper *k = calloc(1, sizeof *k);
	pthread_t t;
	int r;

	if (!k)
		return -ENOMEM;
	if ((r = nbdnl_open(&k->nl)) < 0) {
		free(k);
		return r;
	}
	k->sa = *sa;
	k->u = *u;
	k->size = ex->size;
	k->wait_s = wait_s;
	if ((r = nbdnl_connect(&k->nl, sock, ex, NBD_TIMEOUT_S, wait_s, &k->index)) < 0) {
		nbdnl_close(&k->nl);
		free(k);
		return r;
	}
	snprintf(path, sz, "/dev/nbd%u", k->index);
	if (pthread_create(&t, NULL, keep, k) != 0)
		warn("no thread to keep the NBD connection: a dropped one is not connected again");
	else
		pthread_detach(t);
	close(sock);
	return 0;
}

/* kdumpinit.ip=dhcp: a lease on ifname (up, with carrier) within the
 * wait, 10 s at a time so that the words keep coming; ic becomes it. */
static int dhcp_configure(const char *ifname, struct ip_conf *ic, double end)
{
	uint8_t mac[6];
	struct dhcp_lease l;
	char why[200];
	double left = end - now_mono();

	if (link_mac("/", ifname, mac) < 0 || left <= 0)
		return -EIO;
	if (dhcp_lease(ifname, mac, (unsigned)((left < SAY_EVERY ? left : SAY_EVERY) * 1000), &l,
		       why, sizeof why) < 0) {
		msg("network: %s", why);
		return -ETIMEDOUT;
	}
	unsigned prefix = 0;
	for (uint32_t m = l.mask ? l.mask : 0xffffff00u; m & 0x80000000u; m <<= 1)
		prefix++;
	ic->addr = l.addr;
	ic->prefix = prefix ? prefix : 24;
	ic->gw = l.router;
	ic->dhcp = 0;
	if (link_configure(ifname, ic, why, sizeof why) < 0) {
		err("network: %s", why);
		return -EIO;
	}
	struct in_addr a = { htonl(l.addr) }, g = { htonl(l.router) };
	char as[16], gs[16];
	inet_ntop(AF_INET, &a, as, sizeof as);
	inet_ntop(AF_INET, &g, gs, sizeof gs);
	msg("network: %s: DHCP lease %s/%u, gateway %s, %u s", ifname, as, ic->prefix,
	    l.router ? gs : "none", l.lease_s);
	return 0;
}

/* The selector's parts and the server's socket address: PID 1 resolves
 * no names, so HOST is an IPv4 address. 0, or -EINVAL with why. */
static int server_of(const char *dev, struct nbd_url *u, struct sockaddr_in *sa, char *why,
		     size_t whysz)
{
	if (nbd_url_parse(dev, u, why, whysz) < 0)
		return -EINVAL;
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons(u->port);
	if (inet_pton(AF_INET, u->host, &sa->sin_addr) != 1) {
		snprintf(why, whysz, "'%s' is not an IPv4 address: the crash kernel resolves no names",
			 u->host);
		return -EINVAL;
	}
	return 0;
}

int netdump_server(const char *dev, uint32_t *addr, char *why, size_t whysz)
{
	struct nbd_url u;
	struct sockaddr_in sa;

	if (server_of(dev, &u, &sa, why, whysz) < 0)
		return -EINVAL;
	*addr = ntohl(sa.sin_addr.s_addr);
	return 0;
}

int netdump_probe(const char *dev, struct nbd_export *ex, void *sb, char *why, size_t whysz)
{
	struct nbd_url u;
	struct sockaddr_in sa;

	if (server_of(dev, &u, &sa, why, whysz) < 0)
		return -EINVAL;
	int s = tcp_connect(&sa);
	if (s < 0) {
		snprintf(why, whysz, "%s:%u does not answer: %s", u.host, u.port,
			 s == -ETIMEDOUT ? "no answer" : strerror(-s));
		return s;
	}
	struct nbd_io io = { fd_read, fd_write, &s };
	int r = nbd_handshake(&io, u.name, ex, why, whysz);
	if (r == 0) {
		r = nbd_read(&io, 0, sb, 4096, why, whysz);
		nbd_disconnect(&io);
	}
	close(s);
	return r;
}

int netdump_attach(const char *dev, const char *ip, unsigned wait_s, char *path, size_t sz)
{
	struct nbd_url u;
	struct ip_conf ic;
	struct sockaddr_in sa;
	char why[300], ifname[32] = "";

	if (server_of(dev, &u, &sa, why, sizeof why) < 0) {
		err("kdumpinit.dev=%s: %s", dev, why);
		return -EINVAL;
	}
	if (!ip || !*ip) {
		err("kdumpinit.dev=%s needs kdumpinit.ip=ADDR/PREFIX[,GATEWAY[,MAC]] or kdumpinit.ip=dhcp",
		    dev);
		return -EINVAL;
	}
	if (ip_conf_parse(ip, &ic, why, sizeof why) < 0) {
		err("kdumpinit.ip=%s: %s", ip, why);
		return -EINVAL;
	}
	double t0 = now_mono(), said = t0, end = t0 + wait_s;
	int configured = 0, linked = 0, r = -ETIMEDOUT;
	const char *stage = "an Ethernet interface";
	msg("network dump device %s: waiting up to %u s for the network and the server", dev, wait_s);
	for (;;) {
		double now = now_mono();
		if (!ifname[0] && link_pick("/", &ic, ifname, sizeof ifname) == 0)
			msg("network: %s", ifname);
		if (ifname[0] && !configured && ic.dhcp) {
			/* Up first: the lease is asked on the link. */
			if (!linked && link_up(ifname, why, sizeof why) < 0) {
				err("network: %s", why);
				return -EIO;
			}
			linked = 1;
			stage = "a DHCP lease";
			if (link_carrier("/", ifname) == 1 && dhcp_configure(ifname, &ic, end) == 0)
				configured = 1;
		} else if (ifname[0] && !configured) {
			if (link_configure(ifname, &ic, why, sizeof why) < 0) {
				err("network: %s", why);
				return -EIO;
			}
			configured = 1;
			stage = "the link (carrier)";
		}
		if (configured && link_carrier("/", ifname) == 1) {
			stage = "the server";
			int s = tcp_connect(&sa);
			if (s >= 0) {
				struct nbd_io io = { fd_read, fd_write, &s };
				struct nbd_export ex;
				r = nbd_handshake(&io, u.name, &ex, why, sizeof why);
				if (r < 0) {
					close(s);
					err("NBD server %s:%u, export '%s': %s", u.host, u.port, u.name, why);
					/* A refusal is the server's answer: asking again
					 * gets the same. A dropped connection may not. */
					if (r != -EIO)
						return r;
				} else {
					int nl = nbd_hand(s, &ex, &u, &sa, wait_s, path, sz);
					if (nl < 0)
						warn("NBD over netlink: %s: the ioctls instead, and a "
						     "dropped connection is not connected again",
						     strerror(-nl));
					r = nl < 0 ? nbd_give(s, &ex, path, sz) : 0;
					if (r < 0) {
						close(s);
						err("NBD: no /dev/nbdN took the connection (%s): is the nbd "
						    "module packed?", strerror(-r));
						return r;
					}
					msg("NBD server %s:%u, export '%s': %.1f MiB, on %s after %.1f s",
					    u.host, u.port, u.name, ex.size / 1048576.0, path, now_mono() - t0);
					return 0;
				}
			} else {
				r = s;
			}
		}
		now = now_mono();
		if (now >= end) {
			err("network dump device %s: gave up after %u s waiting for %s (%s)", dev, wait_s,
			    stage, r == -ETIMEDOUT ? "no answer" : strerror(-r));
			return -ETIMEDOUT;
		}
		if (now - said >= SAY_EVERY) {
			msg("still waiting for %s: %.0f s of %u s (%s)", stage, now - t0, wait_s,
			    !ifname[0] ? "no Ethernet interface yet" :
			    r == -ETIMEDOUT ? "no answer" : strerror(-r));
			said = now;
		}
		sleep_ms(500);
	}
}
