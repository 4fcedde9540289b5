#include "dhcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../lib/util.h"

#define BOOTP_FIXED	236	/* op .. file */
#define COOKIE		0x63825363u
#define OPT_MASK	1
#define OPT_ROUTER	3
#define OPT_WANT	50
#define OPT_LEASE	51
#define OPT_TYPE	53
#define OPT_SERVER	54
#define OPT_PARAMS	55
#define OPT_END		255
#define OPT_PAD		0

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

size_t dhcp_build(uint8_t *buf, size_t sz, int type, uint32_t xid, const uint8_t mac[6],
		  uint32_t want, uint32_t server)
{
	if (sz < 300)
		return 0;
	memset(buf, 0, 300);
	buf[0] = 1;		/* BOOTREQUEST */
	buf[1] = 1;		/* Ethernet */
	buf[2] = 6;
	put32(buf + 4, xid);
	buf[10] = 0x80;		/* broadcast the reply: no address to send it to yet */
	memcpy(buf + 28, mac, 6);
	uint8_t *p = put32(buf + BOOTP_FIXED, COOKIE);
	*p++ = OPT_TYPE;
	*p++ = 1;
	*p++ = (uint8_t)type;
	if (want) {
		*p++ = OPT_WANT;
		*p++ = 4;
		p = put32(p, want);
	}
	if (server) {
		*p++ = OPT_SERVER;
		*p++ = 4;
		p = put32(p, server);
	}
	*p++ = OPT_PARAMS;
	*p++ = 3;
	*p++ = OPT_MASK;
	*p++ = OPT_ROUTER;
	*p++ = OPT_LEASE;
	*p++ = OPT_END;
	return 300;	/* BOOTP's minimum, padded with zeros */
}

int dhcp_parse(const uint8_t *buf, size_t len, uint32_t xid, const uint8_t mac[6],
	       struct dhcp_lease *l)
{
	memset(l, 0, sizeof *l);
	if (len < BOOTP_FIXED + 4 || buf[0] != 2 || buf[1] != 1 || buf[2] != 6 ||
	    get32(buf + 4) != xid || memcmp(buf + 28, mac, 6) || get32(buf + BOOTP_FIXED) != COOKIE)
		return -EINVAL;
	l->addr = get32(buf + 16);
	for (size_t i = BOOTP_FIXED + 4; i < len;) {
		uint8_t o = buf[i++];
		if (o == OPT_PAD)
			continue;
		if (o == OPT_END)
			break;
		if (i >= len || i + 1 + buf[i] > len)
			return -EINVAL;	/* an option past the packet */
		uint8_t n = buf[i++];
		const uint8_t *v = buf + i;
		i += n;
		switch (o) {
		case OPT_TYPE:
			if (n == 1)
				l->type = v[0];
			break;
		case OPT_MASK:
			if (n == 4)
				l->mask = get32(v);
			break;
		case OPT_ROUTER:
			if (n >= 4)
				l->router = get32(v);	/* the first */
			break;
		case OPT_SERVER:
			if (n == 4)
				l->server = get32(v);
			break;
		case OPT_LEASE:
			if (n == 4)
				l->lease_s = get32(v);
			break;
		}
	}
	if (l->type != DHCP_OFFER && l->type != DHCP_ACK && l->type != DHCP_NAK)
		return -EINVAL;
	if (l->type != DHCP_NAK && (!l->addr || l->addr == 0xffffffffu))
		return -EINVAL;
	return 0;
}

/* Sends type and waits for the reply of want_type until end. */
static int exchange(int s, int type, uint32_t xid, const uint8_t mac[6], uint32_t ask,
		    uint32_t server, int want_type, double end, struct dhcp_lease *l)
{
	uint8_t pkt[576];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(67),
				  .sin_addr.s_addr = htonl(INADDR_BROADCAST) };
	double next = 0;

	for (;;) {
		double now = now_mono();
		if (now >= end)
			return -ETIMEDOUT;
		if (now >= next) {	/* again every 2 s: a packet may be lost */
			size_t n = dhcp_build(pkt, sizeof pkt, type, xid, mac, ask, server);
			if (sendto(s, pkt, n, 0, (struct sockaddr *)&to, sizeof to) < 0)
				return -errno;
			next = now + 2;
		}
		struct pollfd p = { .fd = s, .events = POLLIN };
		double wait = (next < end ? next : end) - now;
		if (poll(&p, 1, (int)(wait * 1000) + 1) <= 0)
			continue;
		ssize_t r = recv(s, pkt, sizeof pkt, 0);
		if (r <= 0 || dhcp_parse(pkt, (size_t)r, xid, mac, l) < 0)
			continue;	/* someone else's, or garbage */
		if (l->type == DHCP_NAK && type == DHCP_REQUEST)
			return -ECONNREFUSED;
		if (l->type == want_type)
			return 0;
	}
}

int dhcp_lease(const char *ifname, const uint8_t mac[6], unsigned timeout_ms,
	       struct dhcp_lease *l, char *why, size_t whysz)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1, r;
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(68) };
	uint32_t xid;

	if (s < 0) {
		snprintf(why, whysz, "socket: %s", strerror(errno));
		return -errno;
	}
	if (setsockopt(s, SOL_SOCKET, SO_BROADCAST, &one, sizeof one) < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) < 0 ||
	    bind(s, (struct sockaddr *)&me, sizeof me) < 0) {
		r = -errno;
		snprintf(why, whysz, "%s: the DHCP socket: %s", ifname, strerror(errno));
		close(s);
		return r;
	}
	memcpy(&xid, mac + 2, 4);
	xid ^= (uint32_t)now_mono();
	double end = now_mono() + timeout_ms / 1000.0;
	struct dhcp_lease offer;
	r = exchange(s, DHCP_DISCOVER, xid, mac, 0, 0, DHCP_OFFER, end, &offer);
	if (r == 0)
		r = exchange(s, DHCP_REQUEST, xid, mac, offer.addr, offer.server, DHCP_ACK, end, l);
	close(s);
	if (r < 0)
		snprintf(why, whysz, "%s: DHCP: %s", ifname, r == -ETIMEDOUT ? "no lease (no server answered)" :
			 r == -ECONNREFUSED ? "the server refused the address it offered (NAK)" : strerror(-r));
	return r;
}
