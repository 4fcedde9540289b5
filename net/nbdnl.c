#include "nbdnl.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/nbd-netlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nbd.h"

#define MSG_MAX 8192u
#define ALIGN4(n) (((n) + 3u) & ~3u)

/* A message being built: nlmsghdr, genlmsghdr, attributes. */
struct msg {
	uint8_t b[512];
	size_t len;
};

static void msg_start(struct msg *m, uint16_t type, uint8_t cmd, uint8_t version, uint32_t seq)
{
	struct nlmsghdr h = { .nlmsg_type = type, .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
			      .nlmsg_seq = seq };
	struct genlmsghdr g = { .cmd = cmd, .version = version };

	memset(m->b, 0, sizeof m->b);
	memcpy(m->b, &h, sizeof h);
	memcpy(m->b + NLMSG_HDRLEN, &g, sizeof g);
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

/* An attribute: its offset, for a nest's end. Never past m->b (the
 * messages here are a few dozen bytes). */
static size_t put(struct msg *m, uint16_t type, const void *data, uint16_t len)
{
	size_t at = m->len;
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type };

	memcpy(m->b + at, &a, sizeof a);
	if (len)
		memcpy(m->b + at + NLA_HDRLEN, data, len);
	m->len += ALIGN4(NLA_HDRLEN + len);
	return at;
}

static void put64(struct msg *m, uint16_t type, uint64_t v)
{
	put(m, type, &v, sizeof v);
}

static void put32(struct msg *m, uint16_t type, uint32_t v)
{
	put(m, type, &v, sizeof v);
}

static void nest_end(struct msg *m, size_t at)
{
	uint16_t l = (uint16_t)(m->len - at);
	memcpy(m->b + at, &l, sizeof l);
}

const uint8_t *nbdnl_attr(const uint8_t *a, size_t len, uint16_t type, uint16_t *alen)
{
	while (len >= NLA_HDRLEN) {
		struct nlattr h;
		memcpy(&h, a, sizeof h);
		if (h.nla_len < NLA_HDRLEN || h.nla_len > len)
			return NULL;
		if ((h.nla_type & NLA_TYPE_MASK) == type) {
			*alen = (uint16_t)(h.nla_len - NLA_HDRLEN);
			return a + NLA_HDRLEN;
		}
		size_t step = ALIGN4(h.nla_len);
		if (step >= len)
			break;
		a += step;
		len -= step;
	}
	return NULL;
}

static int nl_socket(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* Sends m and reads the answers to it up to the ACK: 0, or the error the
 * kernel gave. A reply's attributes (after the genl header) are copied to
 * reply (at most *rlen bytes; *rlen becomes their length). */
static int transact(struct nbdnl *n, struct msg *m, uint8_t *reply, size_t *rlen)
{
	static uint8_t buf[MSG_MAX];
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	uint32_t seq;
	size_t cap = rlen ? *rlen : 0;

	memcpy(&seq, m->b + offsetof(struct nlmsghdr, nlmsg_seq), sizeof seq);
	uint32_t l32 = (uint32_t)m->len;
	memcpy(m->b, &l32, sizeof l32);
	if (rlen)
		*rlen = 0;
	if (sendto(n->fd, m->b, m->len, 0, (struct sockaddr *)&to, sizeof to) < 0)
		return -errno;
	for (;;) {
		struct pollfd p = { .fd = n->fd, .events = POLLIN };
		if (poll(&p, 1, 5000) <= 0)
			return -ETIMEDOUT;
		ssize_t got = recv(n->fd, buf, sizeof buf, 0);
		if (got < 0)
			return -errno;
		for (size_t off = 0; off + NLMSG_HDRLEN <= (size_t)got;) {
			struct nlmsghdr h;
			memcpy(&h, buf + off, sizeof h);
			if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > (size_t)got - off)
				return -EBADMSG;
			const uint8_t *body = buf + off + NLMSG_HDRLEN;
			size_t blen = h.nlmsg_len - NLMSG_HDRLEN;
			off += NLMSG_ALIGN(h.nlmsg_len);
			if (h.nlmsg_seq != seq)
				continue;
			if (h.nlmsg_type == NLMSG_ERROR) {
				int e;
				if (blen < sizeof e)
					return -EBADMSG;
				memcpy(&e, body, sizeof e);
				return e > 0 ? -EBADMSG : e;
			}
			if (blen >= GENL_HDRLEN && rlen) {
				size_t al = blen - GENL_HDRLEN;
				*rlen = al < cap ? al : cap;
				memcpy(reply, body + GENL_HDRLEN, *rlen);
			}
		}
	}
}

/* The "nbd" family's id and its multicast group's, from the controller. */
static int resolve(struct nbdnl *n)
{
	static uint8_t r[MSG_MAX];
	struct msg m;
	size_t rl = sizeof r;
	uint16_t l, gl;

	msg_start(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, ++n->seq);
	put(&m, CTRL_ATTR_FAMILY_NAME, NBD_GENL_FAMILY_NAME, sizeof NBD_GENL_FAMILY_NAME);
	int e = transact(n, &m, r, &rl);
	if (e < 0)
		return e;
	const uint8_t *id = nbdnl_attr(r, rl, CTRL_ATTR_FAMILY_ID, &l);
	const uint8_t *groups = nbdnl_attr(r, rl, CTRL_ATTR_MCAST_GROUPS, &gl);
	if (!id || l != 2)
		return -EBADMSG;
	memcpy(&n->family, id, 2);
	/* Each group a nest of its name and id; the family has one. */
	for (size_t off = 0; groups && off + NLA_HDRLEN <= gl;) {
		struct nlattr h;
		memcpy(&h, groups + off, sizeof h);
		if (h.nla_len < NLA_HDRLEN || h.nla_len > gl - off)
			break;
		const uint8_t *g = groups + off + NLA_HDRLEN, *name, *gid;
		uint16_t nl, il;
		name = nbdnl_attr(g, h.nla_len - NLA_HDRLEN, CTRL_ATTR_MCAST_GRP_NAME, &nl);
		gid = nbdnl_attr(g, h.nla_len - NLA_HDRLEN, CTRL_ATTR_MCAST_GRP_ID, &il);
		if (name && gid && il == 4 && nl == sizeof NBD_GENL_MCAST_GROUP_NAME &&
		    !memcmp(name, NBD_GENL_MCAST_GROUP_NAME, nl)) {
			memcpy(&n->group, gid, 4);
			return 0;
		}
		off += ALIGN4(h.nla_len);
	}
	return -ENOENT;
}

int nbdnl_open(struct nbdnl *n)
{
	memset(n, 0, sizeof *n);
	n->fd = n->mc = -1;
	int r = nl_socket();
	if (r < 0)
		return r;
	n->fd = r;
	if ((r = resolve(n)) < 0 || (r = nl_socket()) < 0) {
		nbdnl_close(n);
		return r;
	}
	n->mc = r;
	if (setsockopt(n->mc, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &n->group, sizeof n->group) < 0) {
		r = -errno;
		nbdnl_close(n);
		return r;
	}
	return 0;
}

void nbdnl_close(struct nbdnl *n)
{
	if (n->fd >= 0)
		close(n->fd);
	if (n->mc >= 0)
		close(n->mc);
	n->fd = n->mc = -1;
}

/* NBD_ATTR_SOCKETS: one item, one fd. */
static void put_socket(struct msg *m, int sock)
{
	size_t socks = put(m, NBD_ATTR_SOCKETS | NLA_F_NESTED, NULL, 0);
	size_t item = put(m, NBD_SOCK_ITEM | NLA_F_NESTED, NULL, 0);
	put32(m, NBD_SOCK_FD, (uint32_t)sock);
	nest_end(m, item);
	nest_end(m, socks);
}

int nbdnl_connect(struct nbdnl *n, int sock, const struct nbd_export *ex, unsigned timeout_s,
		  unsigned dead_s, uint32_t *index)
{
	uint8_t r[256];
	size_t rl = sizeof r;
	uint16_t l;
	struct msg m;

	msg_start(&m, n->family, NBD_CMD_CONNECT, NBD_GENL_VERSION, ++n->seq);
	put64(&m, NBD_ATTR_SIZE_BYTES, ex->size);
	put64(&m, NBD_ATTR_BLOCK_SIZE_BYTES, nbd_block_size(ex));
	put64(&m, NBD_ATTR_SERVER_FLAGS, ex->flags);
	put64(&m, NBD_ATTR_TIMEOUT, timeout_s);
	put64(&m, NBD_ATTR_DEAD_CONN_TIMEOUT, dead_s);
	put_socket(&m, sock);
	int e = transact(n, &m, r, &rl);
	if (e < 0)
		return e;
	const uint8_t *v = nbdnl_attr(r, rl, NBD_ATTR_INDEX, &l);
	if (!v || l != 4)
		return -EBADMSG;
	memcpy(index, v, 4);
	return 0;
}

int nbdnl_reconfigure(struct nbdnl *n, uint32_t index, int sock)
{
	struct msg m;

	msg_start(&m, n->family, NBD_CMD_RECONFIGURE, NBD_GENL_VERSION, ++n->seq);
	put32(&m, NBD_ATTR_INDEX, index);
	put_socket(&m, sock);
	return transact(n, &m, NULL, NULL);
}

int nbdnl_wait_dead(struct nbdnl *n, uint32_t index, int ms)
{
	static uint8_t buf[MSG_MAX];
	struct pollfd p = { .fd = n->mc, .events = POLLIN };
	int k = poll(&p, 1, ms);

	if (k <= 0)
		return k < 0 ? -errno : 0;
	ssize_t got = recv(n->mc, buf, sizeof buf, MSG_DONTWAIT);
	if (got < 0)
		return errno == EAGAIN ? 0 : -errno;
	for (size_t off = 0; off + NLMSG_HDRLEN + GENL_HDRLEN <= (size_t)got;) {
		struct nlmsghdr h;
		struct genlmsghdr g;
		uint16_t l;
		memcpy(&h, buf + off, sizeof h);
		if (h.nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN || h.nlmsg_len > (size_t)got - off)
			return 0;
		memcpy(&g, buf + off + NLMSG_HDRLEN, sizeof g);
		const uint8_t *v = nbdnl_attr(buf + off + NLMSG_HDRLEN + GENL_HDRLEN,
					      h.nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, NBD_ATTR_INDEX, &l);
		uint32_t i;
		if (h.nlmsg_type == n->family && g.cmd == NBD_CMD_LINK_DEAD && v && l == 4 &&
		    (memcpy(&i, v, 4), i == index))
			return 1;
		off += NLMSG_ALIGN(h.nlmsg_len);
	}
	return 0;
}
