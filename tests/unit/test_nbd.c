/* Unit tests for net/nbd.c: the handshake against scripted servers (the
 * bytes each would send, and what the client must send back), and the
 * nbd:// selector.
 *
 *   test_nbd                          the cases
 *   test_nbd --connect HOST PORT NAME netdump_probe against a real server
 *                                     (run.sh: qemu-nbd): prints "size N
 *                                     flags 0xF go G" or "error E: why" */
#define CHECK_PREFIX "nbd"
#include "check.h"

#include <errno.h>
#include <stdint.h>

#include "../../net/nbd.h"
#include "../../net/netdump.h"
#include "../../net/nbdnl.h"

/* A server made of bytes: reads come from in, writes go to out. */
struct script {
	uint8_t in[16384], out[16384];
	size_t in_len, in_pos, out_len;
};

static ssize_t s_read(void *arg, void *buf, size_t len)
{
	struct script *s = arg;
	size_t n = s->in_len - s->in_pos < len ? s->in_len - s->in_pos : len;
	memcpy(buf, s->in + s->in_pos, n);
	s->in_pos += n;
	return (ssize_t)n;
}

static ssize_t s_write(void *arg, const void *buf, size_t len)
{
	struct script *s = arg;
	if (s->out_len + len > sizeof s->out)
		return -ENOSPC;
	memcpy(s->out + s->out_len, buf, len);
	s->out_len += len;
	return (ssize_t)len;
}

static struct script sc;

static void b64(uint64_t v)
{
	for (int i = 7; i >= 0; i--)
		sc.in[sc.in_len++] = (uint8_t)(v >> (8 * i));
}
static void b32(uint32_t v)
{
	for (int i = 3; i >= 0; i--)
		sc.in[sc.in_len++] = (uint8_t)(v >> (8 * i));
}
static void b16(uint16_t v)
{
	sc.in[sc.in_len++] = (uint8_t)(v >> 8);
	sc.in[sc.in_len++] = (uint8_t)v;
}

#define NBDMAGIC 0x4e42444d41474943ull
#define IHAVEOPT 0x49484156454f5054ull
#define REPLY 0x3e889045565a9ull

static void greet(uint16_t hflags)
{
	memset(&sc, 0, sizeof sc);
	b64(NBDMAGIC);
	b64(IHAVEOPT);
	b16(hflags);
}
static void reply(uint32_t type, uint32_t len)
{
	b64(REPLY);
	b32(7);
	b32(type);
	b32(len);
}
static void info_export(uint64_t size, uint16_t flags)
{
	reply(3, 12);
	b16(0);
	b64(size);
	b16(flags);
}

static int go(const char *name, struct nbd_export *ex, char *why)
{
	struct nbd_io io = { s_read, s_write, &sc };
	return nbd_handshake(&io, name, ex, why, 200);
}

static uint32_t out32(size_t off)
{
	return (uint32_t)sc.out[off] << 24 | (uint32_t)sc.out[off + 1] << 16 |
	       (uint32_t)sc.out[off + 2] << 8 | sc.out[off + 3];
}

static void go_ok(void)
{
	struct nbd_export ex;
	char why[200];
	greet(3);
	info_export(64ull << 20, 1 | 4);
	reply(3, 14);
	b16(3);
	b32(512);
	b32(4096);
	b32(32u << 20);
	reply(3, 6);	/* an information type it does not know: ignored */
	b16(9);
	b32(0);
	reply(1, 0);
	CHECK_INT(go("dump", &ex, why), 0);
	CHECK_INT(ex.size, 64ull << 20);
	CHECK_INT(ex.flags, 5);
	CHECK_INT(ex.go, 1);
	CHECK_INT(ex.pref_block, 4096);
	CHECK_INT(ex.min_block, 512);
	/* What the client said: fixed newstyle and no zeroes, then one
	 * NBD_OPT_GO with the name and a request for the block sizes. */
	CHECK_INT(sc.out_len, 4 + 16 + 4 + 4 + 4);
	CHECK_INT(out32(0), 3);
	CHECK_INT(out32(12), 7);
	CHECK_INT(out32(16), 4 + 4 + 2 + 2);
	CHECK_INT(out32(20), 4);
	CHECK(!memcmp(sc.out + 24, "dump", 4), "the name");
	CHECK_INT(out32(28), 0x00010003);
	CHECK_INT(sc.in_pos, sc.in_len);
}

static void errors(void)
{
	static const struct {
		uint32_t type;
		int rc;
		const char *word;
	} c[] = {
		{ (1u << 31) | 6, -ENOENT, "no such export" },
		{ (1u << 31) | 5, -EACCES, "TLS" },
		{ (1u << 31) | 2, -EACCES, "policy" },
		{ (1u << 31) | 7, -EPROTO, "shutting down" },
		{ (1u << 31) | 99, -EPROTO, "error" },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct nbd_export ex;
		char why[200];
		greet(1);
		reply(c[i].type, 5);
		memcpy(sc.in + sc.in_len, "no\x01pe", 5);
		sc.in_len += 5;
		CHECK_INT(go("x", &ex, why), c[i].rc);
		CHECK(check_mentions(why, c[i].word), "why '%s' lacks '%s'", why, c[i].word);
		CHECK(c[i].type != ((1u << 31) | 6) || strstr(why, "\"no?pe\""), "the message, cleaned: %s", why);
		/* no NO_ZEROES offered: the client does not ask for it */
		CHECK_INT(out32(0), 1);
	}
}

static void read_only(void)
{
	struct nbd_export ex;
	char why[200];
	greet(3);
	info_export(1 << 20, 1 | 2);
	reply(1, 0);
	CHECK_INT(go("ro", &ex, why), -EROFS);
	CHECK(check_mentions(why, "read-only"), "%s", why);
}

/* A server that does not know NBD_OPT_GO: NBD_OPT_EXPORT_NAME. */
static void fallback(void)
{
	struct nbd_export ex;
	char why[200];
	for (int nz = 0; nz < 2; nz++) {
		greet(nz ? 3 : 1);
		reply((1u << 31) | 1, 0);
		b64(8ull << 20);
		b16(1);
		if (!nz)
			sc.in_len += 124;	/* the zeroes */
		CHECK_INT(go("old", &ex, why), 0);
		CHECK_INT(ex.size, 8ull << 20);
		CHECK_INT(ex.go, 0);
		CHECK_INT(sc.in_pos, sc.in_len);
		size_t o = 4 + 16 + 4 + 3 + 4;	/* flags, GO, its name, its request */
		CHECK_INT(out32(o + 8), 1);
		CHECK_INT(out32(o + 12), 3);
	}
	/* ... and one that closes on a wrong name */
	greet(3);
	reply((1u << 31) | 1, 0);
	CHECK_INT(go("nope", &ex, why), -ENOENT);
}

static void bad_servers(void)
{
	struct nbd_export ex;
	char why[200];

	memset(&sc, 0, sizeof sc);
	memcpy(sc.in, "SSH-2.0-OpenSSH_9.2\r\n", 21);
	sc.in_len = 21;
	CHECK_INT(go("x", &ex, why), -EPROTO);
	CHECK(check_mentions(why, "not an NBD server"), "%s", why);

	memset(&sc, 0, sizeof sc);
	b64(NBDMAGIC);
	b64(0x00420281861253ull);
	CHECK_INT(go("x", &ex, why), -EOPNOTSUPP);

	greet(0);	/* newstyle, not fixed */
	CHECK_INT(go("x", &ex, why), -EOPNOTSUPP);

	greet(1);	/* closes after the greeting */
	CHECK_INT(go("x", &ex, why), -EIO);
	CHECK(check_mentions(why, "closed"), "%s", why);

	greet(1);	/* a reply that claims 4 GiB */
	reply(3, 0xffffffffu);
	CHECK_INT(go("x", &ex, why), -EPROTO);
	CHECK(sc.in_pos == sc.in_len, "nothing read past the header");

	greet(1);	/* ACK before the size */
	reply(1, 0);
	CHECK_INT(go("x", &ex, why), -EPROTO);

	greet(1);	/* an export of size 0 */
	info_export(0, 1);
	reply(1, 0);
	CHECK_INT(go("x", &ex, why), -EPROTO);

	greet(1);	/* replies without end */
	for (int i = 0; i < 70; i++) {
		reply(3, 2);
		b16(8);
	}
	CHECK_INT(go("x", &ex, why), -EPROTO);
	CHECK(check_mentions(why, "more than"), "%s", why);

	greet(1);	/* a reply to another option */
	b64(REPLY);
	b32(1);
	b32(1);
	b32(0);
	CHECK_INT(go("x", &ex, why), -EPROTO);

	greet(1);	/* block sizes that break the rules */
	reply(3, 14);
	b16(3);
	b32(3);
	b32(4096);
	b32(1 << 20);
	CHECK_INT(go("x", &ex, why), -EPROTO);

	greet(1);	/* an INFO_EXPORT of the wrong length */
	reply(3, 11);
	b16(0);
	sc.in_len += 9;
	CHECK_INT(go("x", &ex, why), -EPROTO);

	char longname[NBD_NAME_MAX + 2];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	greet(1);
	CHECK_INT(go(longname, &ex, why), -EINVAL);
}

static void urls(void)
{
	struct nbd_url u;
	char why[200];

	CHECK_INT(nbd_url_parse("nbd://10.0.2.2/dump", &u, why, sizeof why), 0);
	CHECK_STR(u.host, "10.0.2.2");
	CHECK_INT(u.port, 10809);
	CHECK_STR(u.name, "dump");
	CHECK_INT(nbd_url_parse("nbd://server.example:10810/host-4f2a/x", &u, why, sizeof why), 0);
	CHECK_STR(u.host, "server.example");
	CHECK_INT(u.port, 10810);
	CHECK_STR(u.name, "host-4f2a/x");
	CHECK_INT(nbd_url_parse("nbd://[fd00::2]:7000/d", &u, why, sizeof why), 0);
	CHECK_STR(u.host, "fd00::2");
	CHECK_INT(u.port, 7000);
	static const char *const bad[] = {
		"nbd://10.0.2.2", "nbd://10.0.2.2/", "nbd:///dump", "nbd://h:0/d", "nbd://h:65536/d",
		"nbd://h:x/d", "nbd://[fd00::2/d", "nbd://h_1/d", "nbd://h/a b", "http://h/d",
		"nbd://h/\x7f", "nbd://fd00::2/d",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = 0;
		CHECK(nbd_url_parse(bad[i], &u, why, sizeof why) == -EINVAL && why[0],
		      "'%s' taken", bad[i]);
	}
}

/* The host side's own path (net/netdump.c: connect, handshake, the
 * first 4 KiB, disconnect), against the server run.sh starts. */
static int connect_main(const char *host, const char *port, const char *name)
{
	static uint8_t sb[4096];
	struct nbd_export ex;
	char url[600], why[300];

	snprintf(url, sizeof url, "nbd://%s:%s/%s", host, port, name);
	int r = netdump_probe(url, &ex, sb, why, sizeof why);
	if (r < 0)
		printf("error %d: %s\n", -r, why);
	else
		printf("size %llu flags 0x%x go %d\n", (unsigned long long)ex.size, ex.flags, ex.go);
	return r < 0;
}

/* net/nbdnl.c's parser of the kernel's attributes: found by type (the
 * nested bit aside), and nothing past the buffer taken. */
static void netlink_attrs(void)
{
	uint8_t b[32] = { 8, 0, 1, 0, 7, 0, 0, 0,		/* type 1, u32 7 */
			  12, 0, 2, 0x80, 1, 2, 3, 4, 5, 6, 7, 8,	/* type 2, nested bit */
			  5, 0, 3, 0, 'x', 0, 0, 0 };		/* type 3, one byte, padded */
	uint16_t l = 0;
	const uint8_t *v = nbdnl_attr(b, 28, 1, &l);
	CHECK(v == b + 4 && l == 4, "type 1");
	v = nbdnl_attr(b, 28, 2, &l);
	CHECK(v == b + 12 && l == 8, "type 2, the nested bit masked");
	v = nbdnl_attr(b, 28, 3, &l);
	CHECK(v == b + 24 && l == 1, "type 3");
	CHECK(!nbdnl_attr(b, 28, 4, &l), "no type 4");
	CHECK(!nbdnl_attr(b, 22, 3, &l), "type 3 cut off");
	CHECK(!nbdnl_attr(b, 18, 2, &l), "type 2's length past the buffer");
	b[0] = 3;	/* shorter than its own header */
	CHECK(!nbdnl_attr(b, 28, 2, &l), "a length under 4 stops the walk");
	CHECK(!nbdnl_attr(b, 3, 1, &l), "no room for a header");
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--connect"))
		return connect_main(argv[2], argv[3], argv[4]);
	RUN(go_ok);
	RUN(errors);
	RUN(read_only);
	RUN(fallback);
	RUN(bad_servers);
	RUN(urls);
	RUN(netlink_attrs);
	return check_done();
}
