/* fuzz_nbd: net/nbd.c's handshake against a hostile server, the nbd://
 * selector, and net/dhcp.c's reply parser.
 *
 * Input layout:
 *   byte 0    the export name's length (b % 40; its bytes are 'a')
 *   then      the server's bytes, all it will ever send: reads past
 *             them end the connection; writes are taken and kept
 *   the whole input, NUL-terminated, is also an nbd:// selector
 *
 * Checks beyond "no crash": the reason is NUL-terminated and said for
 * every failure; a success has a size, HAS_FLAGS and not READ_ONLY; a
 * read never asks past what the server sent; the client never writes
 * more than its flags, two options and the name twice; a parsed selector
 * has a host, a port and a name of printable bytes; the whole input as a
 * DHCP reply (net/dhcp.c) is taken only with a known type and, but for
 * a NAK, a usable address; and as netlink attributes (net/nbdnl.c's
 * parser of the kernel's answers), every value found lies inside them. */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>

#include "../../net/dhcp.h"
#include "../../net/nbd.h"
#include "../../net/nbdnl.h"

struct srv {
	const uint8_t *p;
	size_t n, pos, wrote;
};

static ssize_t rd(void *arg, void *buf, size_t len)
{
	struct srv *s = arg;
	size_t k = s->n - s->pos < len ? s->n - s->pos : len;
	memcpy(buf, s->p + s->pos, k);
	s->pos += k;
	return (ssize_t)k;
}

static ssize_t wr(void *arg, const void *buf, size_t len)
{
	struct srv *s = arg;
	(void)buf;
	s->wrote += len;
	return (ssize_t)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char name[40];
	size_t nl = data[0] % 40;
	memset(name, 'a', nl);
	name[nl] = 0;
	struct srv s = { data + 1, size - 1, 0, 0 };
	struct nbd_io io = { rd, wr, &s };
	struct nbd_export ex;
	char why[160];
	int r = nbd_handshake(&io, name, &ex, why, sizeof why);
	assert(memchr(why, 0, sizeof why));
	assert(s.pos <= s.n);
	assert(s.wrote <= 4 + 2 * (16 + 4 + nl + 4));
	if (r == 0) {
		assert(ex.size && (ex.flags & NBDX_HAS_FLAGS) && !(ex.flags & NBDX_READ_ONLY));
	} else {
		assert(r == -ENOENT || r == -EACCES || r == -EROFS || r == -EOPNOTSUPP ||
		       r == -EPROTO || r == -EIO || r == -ENOMEM);
		assert(why[0] && strcmp(why, "?"));
	}

	/* The same bytes as a DHCP reply to xid 0x01020304 for a fixed MAC
	 * (its own fields at their offsets are the input's). */
	static const uint8_t mac[6] = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 };
	struct dhcp_lease l;
	if (dhcp_parse(data, size, 0x01020304u, mac, &l) == 0)
		assert((l.type == DHCP_OFFER || l.type == DHCP_ACK || l.type == DHCP_NAK) &&
		       (l.type == DHCP_NAK || (l.addr && l.addr != 0xffffffffu)));

	for (uint16_t type = 0; type < 12; type++) {
		uint16_t al = 0;
		const uint8_t *v = nbdnl_attr(data, size, type, &al);
		if (v)
			assert(v >= data + 4 && v + al <= data + size);
	}

	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct nbd_url u;
	if (nbd_url_parse(text, &u, why, sizeof why) == 0) {
		assert(u.host[0] && u.port && u.name[0]);
		for (const char *c = u.name; *c; c++)
			assert((unsigned char)*c > 0x20 && (unsigned char)*c < 0x7f);
	} else {
		assert(why[0] && memchr(why, 0, sizeof why));
	}
	free(text);
	return 0;
}
