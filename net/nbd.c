#include "nbd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The protocol's numbers (NetworkBlockDevice's doc/proto.md). */
#define NBDMAGIC	0x4e42444d41474943ull	/* "NBDMAGIC" */
#define IHAVEOPT	0x49484156454f5054ull	/* "IHAVEOPT" */
#define CLISERV_MAGIC	0x00420281861253ull	/* the old style's */
#define REPLY_MAGIC	0x3e889045565a9ull
#define FLAG_FIXED_NEWSTYLE 1u
#define FLAG_NO_ZEROES	2u
#define OPT_EXPORT_NAME	1u
#define OPT_GO		7u
#define REP_ACK		1u
#define REP_INFO	3u
#define REP_ERR		(1u << 31)
#define ERR_UNSUP	(REP_ERR | 1)
#define ERR_POLICY	(REP_ERR | 2)
#define ERR_INVALID	(REP_ERR | 3)
#define ERR_TLS_REQD	(REP_ERR | 5)
#define ERR_UNKNOWN	(REP_ERR | 6)
#define ERR_SHUTDOWN	(REP_ERR | 7)
#define INFO_EXPORT	0u
#define INFO_BLOCK_SIZE	3u
/* Replies to one option: a server that sends more is not answering. */
#define MAX_REPLIES	64
/* A reply's data: the protocol's strings are at most 4 KiB, and no
 * information type is longer. */
#define MAX_REPLY	(NBD_NAME_MAX + 64)

static void say(char *why, size_t sz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sz, fmt, ap);
	va_end(ap);
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	*p++ = (uint8_t)(v >> 8);
	*p++ = (uint8_t)v;
	return p;
}

/* All len bytes, or -EIO (the connection ended or failed). */
static int get(const struct nbd_io *io, void *buf, size_t len, char *why, size_t wsz)
{
	for (size_t n = 0; n < len;) {
		ssize_t r = io->read(io->arg, (uint8_t *)buf + n, len - n);
		if (r == -EINTR)
			continue;
		if (r <= 0) {
			say(why, wsz, r == 0 ? "the server closed the connection" :
				      "reading from the server: %s", strerror((int)-r));
			return -EIO;
		}
		n += (size_t)r;
	}
	return 0;
}

static int put(const struct nbd_io *io, const void *buf, size_t len, char *why, size_t wsz)
{
	for (size_t n = 0; n < len;) {
		ssize_t r = io->write(io->arg, (const uint8_t *)buf + n, len - n);
		if (r == -EINTR)
			continue;
		if (r <= 0) {
			say(why, wsz, "writing to the server: %s", r ? strerror((int)-r) : "nothing written");
			return -EIO;
		}
		n += (size_t)r;
	}
	return 0;
}

/* The server's message as text for why: printable bytes only. */
static void server_text(const uint8_t *d, uint32_t len, char *out, size_t sz)
{
	size_t o = 0;
	for (uint32_t i = 0; i < len && o + 1 < sz; i++)
		out[o++] = d[i] >= 0x20 && d[i] < 0x7f ? (char)d[i] : '?';
	out[o] = 0;
}

static int check_export(const struct nbd_export *ex, const char *name, char *why, size_t wsz)
{
	if (!(ex->flags & NBDX_HAS_FLAGS)) {
		say(why, wsz, "export '%s': transmission flags without HAS_FLAGS (0x%x)", name, ex->flags);
		return -EPROTO;
	}
	if (ex->flags & NBDX_READ_ONLY) {
		say(why, wsz, "export '%s' is read-only: nothing can be written to it", name);
		return -EROFS;
	}
	if (!ex->size || ex->size >= (1ull << 62)) {
		say(why, wsz, "export '%s': size %llu", name, (unsigned long long)ex->size);
		return -EPROTO;
	}
	return 0;
}

/* NBD_OPT_EXPORT_NAME, for a server that does not know NBD_OPT_GO: no
 * error reply exists for it, the server closes on a wrong name. */
static int export_name(const struct nbd_io *io, const char *name, size_t nl, int no_zeroes,
		       struct nbd_export *ex, char *why, size_t wsz)
{
	uint8_t h[16], *p = h, r[10 + 124];

	p = put64(p, IHAVEOPT);
	p = put32(p, OPT_EXPORT_NAME);
	put32(p, (uint32_t)nl);
	if (put(io, h, sizeof h, why, wsz) || put(io, name, nl, why, wsz))
		return -EIO;
	if (get(io, r, no_zeroes ? 10 : sizeof r, why, wsz)) {
		say(why, wsz, "the server closed the connection after the export's name: "
			      "no export '%s' there (a server without NBD_OPT_GO says no more)", name);
		return -ENOENT;
	}
	ex->size = be64(r);
	ex->flags = be16(r + 8);
	ex->go = 0;
	return check_export(ex, name, why, wsz);
}

int nbd_handshake(const struct nbd_io *io, const char *name, struct nbd_export *ex, char *why,
		  size_t whysz)
{
	uint8_t g[18];
	size_t nl = strlen(name);
	int r;

	memset(ex, 0, sizeof *ex);
	say(why, whysz, "?");
	if (nl > NBD_NAME_MAX) {
		say(why, whysz, "the export's name is longer than %d bytes", NBD_NAME_MAX);
		return -EINVAL;
	}
	if (get(io, g, 16, why, whysz))
		return -EIO;
	if (be64(g) != NBDMAGIC) {
		say(why, whysz, "not an NBD server: its first bytes are not NBDMAGIC");
		return -EPROTO;
	}
	if (be64(g + 8) == CLISERV_MAGIC) {
		say(why, whysz, "an old-style NBD server (no export names): use a newstyle one "
				"(nbd-server 3.x, qemu-nbd, nbdkit)");
		return -EOPNOTSUPP;
	}
	if (be64(g + 8) != IHAVEOPT) {
		say(why, whysz, "not an NBD server: its second magic is not IHAVEOPT");
		return -EPROTO;
	}
	if (get(io, g + 16, 2, why, whysz))
		return -EIO;
	uint16_t hflags = be16(g + 16);
	if (!(hflags & FLAG_FIXED_NEWSTYLE)) {
		say(why, whysz, "the server does not do the fixed newstyle negotiation");
		return -EOPNOTSUPP;
	}
	int no_zeroes = !!(hflags & FLAG_NO_ZEROES);
	uint8_t cf[4];
	put32(cf, FLAG_FIXED_NEWSTYLE | (no_zeroes ? FLAG_NO_ZEROES : 0));
	if (put(io, cf, 4, why, whysz))
		return -EIO;

	/* NBD_OPT_GO: the name, then one information request, the block
	 * sizes (so that a server with its own never refuses for want of
	 * asking). */
	uint8_t h[16 + 4], *p = h;
	p = put64(p, IHAVEOPT);
	p = put32(p, OPT_GO);
	p = put32(p, (uint32_t)(4 + nl + 2 + 2));
	put32(p, (uint32_t)nl);
	uint8_t tail[4];
	put16(put16(tail, 1), INFO_BLOCK_SIZE);
	if (put(io, h, sizeof h, why, whysz) || put(io, name, nl, why, whysz) ||
	    put(io, tail, sizeof tail, why, whysz))
		return -EIO;

	uint8_t *d = malloc(MAX_REPLY);
	if (!d)
		return -ENOMEM;
	int have_export = 0;
	r = -EPROTO;
	for (int k = 0; k < MAX_REPLIES; k++) {
		uint8_t rh[20];
		if (get(io, rh, sizeof rh, why, whysz)) {
			r = -EIO;
			goto out;
		}
		uint32_t opt = be32(rh + 8), type = be32(rh + 12), len = be32(rh + 16);
		if (be64(rh) != REPLY_MAGIC || opt != OPT_GO) {
			say(why, whysz, "a reply that is not one to NBD_OPT_GO (magic 0x%llx, option %u)",
			    (unsigned long long)be64(rh), opt);
			goto out;
		}
		if (len > MAX_REPLY) {
			say(why, whysz, "a reply of %u bytes (type 0x%x): more than any the protocol has",
			    len, type);
			goto out;
		}
		if (get(io, d, len, why, whysz)) {
			r = -EIO;
			goto out;
		}
		if (type == REP_ACK) {
			if (len) {
				say(why, whysz, "an ACK with %u bytes of data", len);
				goto out;
			}
			if (!have_export) {
				say(why, whysz, "an ACK before the export's size (NBD_INFO_EXPORT)");
				goto out;
			}
			ex->go = 1;
			r = check_export(ex, name, why, whysz);
			goto out;
		}
		if (type == REP_INFO) {
			if (len < 2) {
				say(why, whysz, "an INFO reply of %u bytes", len);
				goto out;
			}
			uint16_t it = be16(d);
			if (it == INFO_EXPORT) {
				if (len != 12) {
					say(why, whysz, "NBD_INFO_EXPORT of %u bytes, not 12", len);
					goto out;
				}
				ex->size = be64(d + 2);
				ex->flags = be16(d + 10);
				have_export = 1;
			} else if (it == INFO_BLOCK_SIZE) {
				if (len != 14) {
					say(why, whysz, "NBD_INFO_BLOCK_SIZE of %u bytes, not 14", len);
					goto out;
				}
				uint32_t mn = be32(d + 2), pr = be32(d + 6), mx = be32(d + 10);
				/* Powers of two, min <= 64 KiB <= ..., preferred
				 * between: the protocol's constraints. */
				if (!mn || (mn & (mn - 1)) || mn > 65536 || !pr || (pr & (pr - 1)) ||
				    pr < mn || pr > (32u << 20) || mx < pr || mx % mn) {
					say(why, whysz, "block sizes %u, %u, %u break the protocol's rules",
					    mn, pr, mx);
					goto out;
				}
				ex->min_block = mn;
				ex->pref_block = pr;
				ex->max_block = mx;
			}
			continue;	/* other information: not needed */
		}
		if (type & REP_ERR) {
			char msg[200];
			server_text(d, len, msg, sizeof msg);
			if (type == ERR_UNSUP) {
				/* A server before NBD_OPT_GO. */
				free(d);
				return export_name(io, name, nl, no_zeroes, ex, why, whysz);
			}
			r = type == ERR_UNKNOWN ? -ENOENT :
			    type == ERR_POLICY || type == ERR_TLS_REQD ? -EACCES : -EPROTO;
			say(why, whysz, "%s%s%s%s",
			    type == ERR_UNKNOWN ? "no such export on the server" :
			    type == ERR_TLS_REQD ? "the server requires TLS, which kdumpinit does not do" :
			    type == ERR_POLICY ? "the server refuses this client (its policy)" :
			    type == ERR_INVALID ? "the server calls the request invalid" :
			    type == ERR_SHUTDOWN ? "the server is shutting down" :
						   "the server answered an error",
			    *msg ? ": \"" : "", msg, *msg ? "\"" : "");
			goto out;
		}
		say(why, whysz, "a reply of an unknown type 0x%x", type);
		goto out;
	}
	say(why, whysz, "more than %d replies to one option", MAX_REPLIES);
out:
	free(d);
	return r;
}

#define REQUEST_MAGIC	0x25609513u
#define SIMPLE_REPLY	0x67446698u
#define CMD_READ	0u
#define CMD_DISC	2u
#define READ_HANDLE	0x6b64692d72656164ull	/* "kdi-read" */

static void request(uint8_t r[28], uint16_t type, uint64_t off, uint32_t len)
{
	uint8_t *p = put32(r, REQUEST_MAGIC);
	p = put16(p, 0);
	p = put16(p, type);
	p = put64(p, READ_HANDLE);
	p = put64(p, off);
	put32(p, len);
}

int nbd_read(const struct nbd_io *io, uint64_t off, void *buf, uint32_t len, char *why,
	     size_t whysz)
{
	uint8_t r[28], h[16];

	request(r, CMD_READ, off, len);
	if (put(io, r, sizeof r, why, whysz) || get(io, h, sizeof h, why, whysz))
		return -EIO;
	if (be32(h) != SIMPLE_REPLY || be64(h + 8) != READ_HANDLE) {
		say(why, whysz, "a reply to the read that is not one (magic 0x%x)", be32(h));
		return -EPROTO;
	}
	if (be32(h + 4)) {
		say(why, whysz, "the server's read failed: error %u", be32(h + 4));
		return -EIO;
	}
	return get(io, buf, len, why, whysz) ? -EIO : 0;
}

void nbd_disconnect(const struct nbd_io *io)
{
	uint8_t r[28];
	char why[8];

	request(r, CMD_DISC, 0, 0);
	(void)put(io, r, sizeof r, why, sizeof why);
}

int nbd_url_parse(const char *s, struct nbd_url *u, char *why, size_t whysz)
{
	memset(u, 0, sizeof *u);
	u->port = NBD_PORT;
	if (strncmp(s, "nbd://", 6)) {
		say(why, whysz, "not nbd://HOST[:PORT]/EXPORT");
		return -EINVAL;
	}
	const char *h = s + 6, *he, *rest;
	if (*h == '[') {	/* an IPv6 literal */
		he = strchr(h, ']');
		if (!he) {
			say(why, whysz, "an IPv6 address without its ']'");
			return -EINVAL;
		}
		h++;
		rest = he + 1;
	} else {
		he = h + strcspn(h, ":/");
		rest = he;
	}
	size_t hl = (size_t)(he - h);
	if (!hl || hl >= sizeof u->host) {
		say(why, whysz, hl ? "the host is longer than %zu bytes" : "no host", sizeof u->host - 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < hl; i++) {
		char c = h[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || (c == ':' && s[6] == '['))) {
			say(why, whysz, "the host has a '%c'", c);
			return -EINVAL;
		}
	}
	memcpy(u->host, h, hl);
	if (*rest == ':') {
		char *end;
		unsigned long p = strtoul(rest + 1, &end, 10);
		if (end == rest + 1 || p == 0 || p > 65535 || (*end != '/' && *end)) {
			say(why, whysz, "the port is not 1-65535");
			return -EINVAL;
		}
		u->port = (uint16_t)p;
		rest = end;
	}
	if (*rest != '/' || !rest[1]) {
		say(why, whysz, "no /EXPORT after the host");
		return -EINVAL;
	}
	rest++;
	size_t nl = strlen(rest);
	if (nl >= sizeof u->name) {
		say(why, whysz, "the export's name is longer than %zu bytes", sizeof u->name - 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < nl; i++)
		if ((unsigned char)rest[i] <= 0x20 || (unsigned char)rest[i] >= 0x7f) {
			say(why, whysz, "the export's name has a space, a control or a non-ASCII byte");
			return -EINVAL;
		}
	memcpy(u->name, rest, nl);
	return 0;
}

uint32_t nbd_block_size(const struct nbd_export *ex)
{
	return ex->pref_block >= 512 && ex->pref_block <= 4096 ? ex->pref_block : 4096;
}
