/* Unit tests for the device-tree edit of kdumpinit's own arm64 loader,
 * fdt_set_chosen() (arm/kexec_arm64.c): it rewrites /chosen of the
 * running tree for the crash kernel (bootargs, linux,initrd-start/-end,
 * linux,elfcorehdr, linux,usable-memory-range in the root's cell sizes;
 * kaslr-seed and rng-seed dropped) and keeps everything else.
 *
 * The trees are built here, and the output is read back by a parser of
 * this file's own that checks what the DT specification asks of a
 * flattened tree (header, block offsets and alignment, balanced nodes, an
 * FDT_END, names inside the strings block) and lists every node and
 * property, so each case can say what must be there, once, and what must
 * not. The cases: a tree without /chosen (one is added at the end of the
 * root); a /chosen with every replaced property, the seeds, a vendor
 * property, a subnode, and nodes after it; no initrd (old initrd
 * properties go); default cell sizes; bad headers, every truncation and
 * random damage, which must be refused or give a valid tree, never read
 * outside the input (the ASan build runs these too); and, where dtc is
 * installed, dtc reading the output back. */
#define CHECK_PREFIX "dtb"
#include "check.h"

#include <errno.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

/* The loader itself: fdt_set_chosen is in arm/, which the unit archive
 * leaves out (a program, not a library). */
#include "../../arm/kexec_arm64.c"
#include "../../arm/machine.c"
#include "../../arm/root.c"

/* ---- building trees ---- */

struct tb {
	uint8_t st[16384];
	size_t stn;
	char strs[4096];
	size_t strn;
	uint8_t rsv[256];
	size_t rsvn;
	uint32_t cpuid;
};

static void w32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t r32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t r64(const uint8_t *p)
{
	return (uint64_t)r32(p) << 32 | r32(p + 4);
}

static void tb_tok(struct tb *t, uint32_t v)
{
	w32(t->st + t->stn, v);
	t->stn += 4;
}

static void tb_bytes(struct tb *t, const void *d, size_t n)
{
	memcpy(t->st + t->stn, d, n);
	t->stn += n;
	while (t->stn % 4)
		t->st[t->stn++] = 0;
}

static void tb_begin(struct tb *t, const char *name)
{
	tb_tok(t, 1);
	tb_bytes(t, name, strlen(name) + 1);
}

static void tb_end(struct tb *t)
{
	tb_tok(t, 2);
}

static void tb_prop(struct tb *t, const char *name, const void *v, size_t n)
{
	size_t off = t->strn;
	/* Names shared as dtc shares them: an exact earlier copy is reused. */
	for (size_t i = 0; i < t->strn; i += strlen(t->strs + i) + 1)
		if (!strcmp(t->strs + i, name)) {
			off = i;
			break;
		}
	if (off == t->strn) {
		memcpy(t->strs + t->strn, name, strlen(name) + 1);
		t->strn += strlen(name) + 1;
	}
	tb_tok(t, 3);
	tb_tok(t, (uint32_t)n);
	tb_tok(t, (uint32_t)off);
	if (n)
		tb_bytes(t, v, n);
}

static void tb_u32(struct tb *t, const char *name, uint32_t v)
{
	uint8_t b[4];
	w32(b, v);
	tb_prop(t, name, b, 4);
}

static void tb_str(struct tb *t, const char *name, const char *s)
{
	tb_prop(t, name, s, strlen(s) + 1);
}

static void tb_rsv(struct tb *t, uint64_t addr, uint64_t size)
{
	w32(t->rsv + t->rsvn, (uint32_t)(addr >> 32));
	w32(t->rsv + t->rsvn + 4, (uint32_t)addr);
	w32(t->rsv + t->rsvn + 8, (uint32_t)(size >> 32));
	w32(t->rsv + t->rsvn + 12, (uint32_t)size);
	t->rsvn += 16;
}

/* header, reservations and their zero entry, structure + FDT_END, strings
 * (dtc's order; STRINGS_FIRST: the strings before the structure, which
 * the format allows too) */
static uint8_t *tb_finish_order(struct tb *t, size_t *len, int strings_first)
{
	tb_tok(t, 9);
	size_t o_rsv = 40, o_st = o_rsv + t->rsvn + 16, o_str = o_st + t->stn;
	if (strings_first) {
		o_str = o_rsv + t->rsvn + 16;
		o_st = (o_str + t->strn + 3) & ~(size_t)3;
	}
	size_t tot = o_str + t->strn > o_st + t->stn ? o_str + t->strn : o_st + t->stn;
	uint8_t *b = calloc(1, tot);
	w32(b, 0xd00dfeed);
	w32(b + 4, (uint32_t)tot);
	w32(b + 8, (uint32_t)o_st);
	w32(b + 12, (uint32_t)o_str);
	w32(b + 16, (uint32_t)o_rsv);
	w32(b + 20, 17);
	w32(b + 24, 16);
	w32(b + 28, t->cpuid);
	w32(b + 32, (uint32_t)t->strn);
	w32(b + 36, (uint32_t)t->stn);
	memcpy(b + o_rsv, t->rsv, t->rsvn);
	memcpy(b + o_st, t->st, t->stn);
	memcpy(b + o_str, t->strs, t->strn);
	*len = tot;
	return b;
}

static uint8_t *tb_finish(struct tb *t, size_t *len)
{
	return tb_finish_order(t, len, 0);
}

/* ---- reading trees back ---- */

struct prop {
	char path[160], name[64];
	uint8_t val[256];
	uint32_t len;
};

struct tree {
	struct prop p[96];
	int np;
	char node[48][160];
	int nn;
	uint64_t rsv[8][2];
	int nrsv;
	uint32_t cpuid;
};

/* 0 and the tree in *t when B is a well-formed flattened tree of exactly
 * LEN bytes; -1 and the first reason in why otherwise. */
static int parse(const uint8_t *b, size_t len, struct tree *t, char *why, size_t wsz)
{
#define BAD(...) do { snprintf(why, wsz, __VA_ARGS__); return -1; } while (0)
	memset(t, 0, sizeof *t);
	if (len < 40 || r32(b) != 0xd00dfeed)
		BAD("no header");
	uint32_t tot = r32(b + 4), o_st = r32(b + 8), o_str = r32(b + 12), o_rsv = r32(b + 16);
	uint32_t ver = r32(b + 20), comp = r32(b + 24), sz_str = r32(b + 32), sz_st = r32(b + 36);
	t->cpuid = r32(b + 28);
	if (tot != len)
		BAD("totalsize %u, blob %zu", tot, len);
	if (ver != 17 || comp != 16)
		BAD("version %u/%u", ver, comp);
	if (o_rsv % 8 || o_st % 4 || o_rsv < 40 || o_st < 40 || o_str < 40)
		BAD("block offsets misaligned or inside the header");
	if ((uint64_t)o_st + sz_st > tot || (uint64_t)o_str + sz_str > tot || o_rsv >= tot)
		BAD("a block runs past the end");
	for (uint32_t o = o_rsv;; o += 16) {
		if ((uint64_t)o + 16 > tot)
			BAD("reservation block without its zero entry");
		uint64_t a = r64(b + o), s = r64(b + o + 8);
		if (!a && !s)
			break;
		if (t->nrsv < 8) {
			t->rsv[t->nrsv][0] = a;
			t->rsv[t->nrsv][1] = s;
		}
		t->nrsv++;
	}
	const uint8_t *p = b + o_st, *end = p + sz_st;
	char path[160] = "";
	int depth = 0, roots = 0, ended = 0;
	while (p + 4 <= end && !ended) {
		uint32_t tok = r32(p);
		p += 4;
		if (tok == 1) {
			size_t nl = strnlen((const char *)p, (size_t)(end - p));
			if (p + nl >= end)
				BAD("node name runs past the structure");
			if (depth == 0 && (roots++ || nl))
				BAD("not one root node named \"\"");
			if (depth > 0 && !nl)
				BAD("a node without a name under %s", path);
			size_t pl = strlen(path);
			if (depth == 1)
				snprintf(path + pl, sizeof path - pl, "%s", (const char *)p);
			else if (depth > 1)
				snprintf(path + pl, sizeof path - pl, "/%s", (const char *)p);
			if (t->nn == 48)
				BAD("too many nodes");
			snprintf(t->node[t->nn++], sizeof t->node[0], "/%s", path);
			p += (nl + 4) & ~(size_t)3;
			depth++;
		} else if (tok == 2) {
			if (depth == 0)
				BAD("FDT_END_NODE outside any node");
			char *slash = strrchr(path, '/');
			if (slash)
				*slash = 0;
			else
				path[0] = 0;
			depth--;
		} else if (tok == 3) {
			if (depth == 0)
				BAD("a property outside the root");
			if (p + 8 > end)
				BAD("property header runs past the structure");
			uint32_t n = r32(p), no = r32(p + 4);
			if (n > (size_t)(end - p - 8))
				BAD("property value runs past the structure");
			if (no >= sz_str || !memchr(b + o_str + no, 0, sz_str - no))
				BAD("property name outside the strings block");
			if (t->np == 96)
				BAD("too many properties");
			struct prop *q = &t->p[t->np++];
			snprintf(q->path, sizeof q->path, "/%s", path);
			snprintf(q->name, sizeof q->name, "%s", (const char *)b + o_str + no);
			q->len = n;
			memcpy(q->val, p + 8, n < sizeof q->val ? n : sizeof q->val);
			p += 8 + ((n + 3) & ~3u);
		} else if (tok == 4) {
			continue;
		} else if (tok == 9) {
			ended = 1;
		} else {
			BAD("token %u", tok);
		}
	}
	if (!ended)
		BAD("no FDT_END");
	if (depth || roots != 1)
		BAD("nodes not balanced (depth %d, %d roots)", depth, roots);
	return 0;
#undef BAD
}

/* The properties NAME of node PATH: how many, and the first in *out. */
static int count(const struct tree *t, const char *path, const char *name, const struct prop **out)
{
	int n = 0;
	for (int i = 0; i < t->np; i++)
		if (!strcmp(t->p[i].path, path) && !strcmp(t->p[i].name, name)) {
			if (!n++ && out)
				*out = &t->p[i];
		}
	return n;
}

static int nodes_named(const struct tree *t, const char *path)
{
	int n = 0;
	for (int i = 0; i < t->nn; i++)
		n += !strcmp(t->node[i], path);
	return n;
}

/* Exactly one NAME in PATH, of LEN bytes equal to VAL. */
#define CHECK_PROP(T_, P_, N_, V_, L_)                                                \
	do {                                                                          \
		const struct prop *q_ = NULL;                                         \
		int n_ = count(T_, P_, N_, &q_);                                      \
		CHECK(n_ == 1, "%s:%s appears %d times", P_, N_, n_);                 \
		if (n_ >= 1)                                                          \
			CHECK(q_->len == (L_) && !memcmp(q_->val, V_, L_),            \
			      "%s:%s has %u bytes, not the %zu wanted", P_, N_,       \
			      q_->len, (size_t)(L_));                                 \
	} while (0)

static void cells(uint8_t *out, uint64_t v, int n)
{
	if (n == 2) {
		w32(out, (uint32_t)(v >> 32));
		w32(out + 4, (uint32_t)v);
	} else {
		w32(out, (uint32_t)v);
	}
}

static const struct fdt_chosen CH = {
	.bootargs = "console=ttyAMA0 reset_devices nr_cpus=1",
	.initrd_start = 0x48000000, .initrd_end = 0x48123000,
	.elfcorehdr = 0x47f00000, .elfcorehdr_size = 0x10000,
	.usable = 0x44000000, .usable_size = 0x3800000,
};

/* What fdt_set_chosen must have put into /chosen (PATH), for cell sizes
 * AC and SC. */
static void check_chosen(const struct tree *t, const char *path, const struct fdt_chosen *ch, int ac,
			 int sc)
{
	uint8_t v[16];

	CHECK_PROP(t, path, "bootargs", ch->bootargs, strlen(ch->bootargs) + 1);
	if (ch->initrd_end > ch->initrd_start) {
		cells(v, ch->initrd_start, 2);
		CHECK_PROP(t, path, "linux,initrd-start", v, 8);
		cells(v, ch->initrd_end, 2);
		CHECK_PROP(t, path, "linux,initrd-end", v, 8);
	} else {
		CHECK_INT(count(t, path, "linux,initrd-start", NULL), 0);
		CHECK_INT(count(t, path, "linux,initrd-end", NULL), 0);
	}
	cells(v, ch->elfcorehdr, ac);
	cells(v + 4 * ac, ch->elfcorehdr_size, sc);
	CHECK_PROP(t, path, "linux,elfcorehdr", v, 4 * (size_t)(ac + sc));
	cells(v, ch->usable, ac);
	cells(v + 4 * ac, ch->usable_size, sc);
	CHECK_PROP(t, path, "linux,usable-memory-range", v, 4 * (size_t)(ac + sc));
	CHECK_INT(count(t, path, "kaslr-seed", NULL), 0);
	CHECK_INT(count(t, path, "rng-seed", NULL), 0);
}

/* Every property of IN is in OUT with the same value, but those of
 * /chosen that the edit replaces or drops. */
static void check_kept(const struct tree *in, const struct tree *out)
{
	static const char *const edited[] = {
		"bootargs", "linux,initrd-start", "linux,initrd-end", "linux,elfcorehdr",
		"linux,usable-memory-range", "kaslr-seed", "rng-seed",
	};
	for (int i = 0; i < in->np; i++) {
		const struct prop *a = &in->p[i], *b = NULL;
		int skip = 0;
		for (size_t k = 0; k < sizeof edited / sizeof edited[0]; k++)
			skip |= !strcmp(a->path, "/chosen") && !strcmp(a->name, edited[k]);
		if (skip)
			continue;
		int n = count(out, a->path, a->name, &b);
		CHECK(n == 1, "%s:%s appears %d times in the output", a->path, a->name, n);
		if (n == 1)
			CHECK(b->len == a->len && !memcmp(a->val, b->val, a->len), "%s:%s changed",
			      a->path, a->name);
	}
	for (int i = 0; i < in->nn; i++)
		CHECK(nodes_named(out, in->node[i]) == 1, "node %s lost or doubled", in->node[i]);
	CHECK_INT(out->nrsv, in->nrsv);
	for (int i = 0; i < in->nrsv && i < out->nrsv; i++)
		CHECK(out->rsv[i][0] == in->rsv[i][0] && out->rsv[i][1] == in->rsv[i][1],
		      "reservation %d changed", i);
	CHECK_INT(out->cpuid, in->cpuid);
}

/* Runs the edit and parses both trees; 0 when the output is well formed. */
static int edit(const uint8_t *blob, size_t len, const struct fdt_chosen *ch, struct tree *in,
		struct tree *out, uint8_t **res, size_t *rlen)
{
	char why[200];
	CHECK(parse(blob, len, in, why, sizeof why) == 0, "the test's own tree: %s", why);
	*res = fdt_set_chosen(blob, len, ch, rlen);
	CHECK(*res != NULL, "fdt_set_chosen refused a good tree: %s", strerror(errno));
	if (!*res)
		return -1;
	int r = parse(*res, *rlen, out, why, sizeof why);
	CHECK(r == 0, "output: %s", why);
	return r;
}

/* The tree of QEMU's virt machine, as far as it matters: 2/2 cells,
 * memory, cpus with their own cell sizes, no /chosen. */
static uint8_t *virt_tree_order(size_t *len, int with_chosen, int strings_first)
{
	static struct tb t;
	uint8_t reg[16];

	memset(&t, 0, sizeof t);
	t.cpuid = 0;
	tb_rsv(&t, 0x48000000, 0x123000);
	tb_begin(&t, "");
	tb_u32(&t, "#address-cells", 2);
	tb_u32(&t, "#size-cells", 2);
	tb_str(&t, "compatible", "linux,dummy-virt");
	tb_u32(&t, "interrupt-parent", 0x8002);
	if (with_chosen) {
		tb_begin(&t, "chosen");
		tb_str(&t, "bootargs", "console=ttyAMA0 crashkernel=96M");
		tb_str(&t, "stdout-path", "/pl011@9000000");
		uint8_t seed[32];
		for (int i = 0; i < 32; i++)
			seed[i] = (uint8_t)(i * 37 + 1);
		tb_prop(&t, "rng-seed", seed, 32);
		tb_prop(&t, "kaslr-seed", seed, 8);
		cells(reg, 0x41000000, 2);
		tb_prop(&t, "linux,initrd-start", reg, 8);
		cells(reg, 0x41200000, 2);
		tb_prop(&t, "linux,initrd-end", reg, 8);
		cells(reg, 0x40000000, 2);
		cells(reg + 8, 0x1000, 2);
		tb_prop(&t, "linux,elfcorehdr", reg, 16);
		tb_str(&t, "kdumpinit,conf", "dev=SERIAL=kdump-dump level=31");
		tb_prop(&t, "linux,booted-from-kexec", NULL, 0);
		tb_begin(&t, "framebuffer@0");
		tb_str(&t, "compatible", "simple-framebuffer");
		tb_u32(&t, "width", 1024);
		tb_end(&t);
		tb_end(&t);
	}
	tb_begin(&t, "memory@40000000");
	tb_str(&t, "device_type", "memory");
	cells(reg, 0x40000000, 2);
	cells(reg + 8, 0x60000000, 2);
	tb_prop(&t, "reg", reg, 16);
	tb_end(&t);
	tb_begin(&t, "cpus");
	tb_u32(&t, "#address-cells", 1);
	tb_u32(&t, "#size-cells", 0);
	tb_begin(&t, "cpu@0");
	tb_str(&t, "compatible", "arm,cortex-a57");
	tb_u32(&t, "reg", 0);
	tb_end(&t);
	tb_end(&t);
	tb_begin(&t, "intc@8000000");
	tb_str(&t, "compatible", "arm,gic-v3");
	tb_begin(&t, "its@8080000");
	tb_str(&t, "compatible", "arm,gic-v3-its");
	tb_prop(&t, "msi-controller", NULL, 0);
	tb_end(&t);
	tb_end(&t);
	tb_end(&t);
	return tb_finish_order(&t, len, strings_first);
}

static uint8_t *virt_tree(size_t *len, int with_chosen)
{
	return virt_tree_order(len, with_chosen, 0);
}

static void t_no_chosen(void)
{
	size_t len, rlen;
	uint8_t *blob = virt_tree(&len, 0), *res;
	static struct tree in, out;

	if (edit(blob, len, &CH, &in, &out, &res, &rlen) == 0) {
		CHECK_INT(nodes_named(&in, "/chosen"), 0);
		CHECK_INT(nodes_named(&out, "/chosen"), 1);
		CHECK_INT(out.nn, in.nn + 1);
		check_chosen(&out, "/chosen", &CH, 2, 2);
		check_kept(&in, &out);
		/* the cpus' own #address-cells 1 must not be taken for the root's */
		CHECK_PROP(&out, "/cpus", "#address-cells", "\0\0\0\1", 4);
	}
	free(res);
	free(blob);
}

static void t_replace(void)
{
	size_t len, rlen;
	uint8_t *blob = virt_tree(&len, 1), *res;
	static struct tree in, out;

	if (edit(blob, len, &CH, &in, &out, &res, &rlen) == 0) {
		CHECK_INT(out.nn, in.nn);
		check_chosen(&out, "/chosen", &CH, 2, 2);
		check_kept(&in, &out);
		CHECK_INT(count(&out, "/chosen/framebuffer@0", "width", NULL), 1);
		CHECK_INT(count(&out, "/chosen", "linux,booted-from-kexec", NULL), 1);
		/* the edit of an edited tree changes nothing */
		size_t l2 = 0;
		uint8_t *again = fdt_set_chosen(res, rlen, &CH, &l2);
		CHECK(again && l2 == rlen && !memcmp(again, res, rlen), "a second edit changed the tree");
		free(again);
	}
	free(res);
	/* no initrd this time: the old initrd properties go */
	struct fdt_chosen ch = CH;
	ch.initrd_start = ch.initrd_end = 0;
	if (edit(blob, len, &ch, &in, &out, &res, &rlen) == 0) {
		check_chosen(&out, "/chosen", &ch, 2, 2);
		check_kept(&in, &out);
	}
	free(res);
	free(blob);
}

/* A root with 1/1 cells, and one that says nothing (the spec's 2/1). */
static void t_cells(void)
{
	for (int say = 0; say < 2; say++) {
		static struct tb t;
		static struct tree in, out;
		size_t len, rlen;
		uint8_t *res;

		memset(&t, 0, sizeof t);
		tb_begin(&t, "");
		if (say) {
			tb_u32(&t, "#address-cells", 1);
			tb_u32(&t, "#size-cells", 1);
		}
		tb_begin(&t, "chosen");
		tb_str(&t, "bootargs", "x");
		tb_end(&t);
		tb_begin(&t, "memory");
		tb_prop(&t, "reg", "\x40\0\0\0\x10\0\0\0", 8);
		tb_end(&t);
		tb_end(&t);
		uint8_t *blob = tb_finish(&t, &len);
		if (edit(blob, len, &CH, &in, &out, &res, &rlen) == 0) {
			check_chosen(&out, "/chosen", &CH, say ? 1 : 2, 1);
			check_kept(&in, &out);
		}
		free(res);
		free(blob);
	}
}

static int refused(const uint8_t *blob, size_t len)
{
	size_t rlen = 0;
	errno = 0;
	uint8_t *res = fdt_set_chosen(blob, len, &CH, &rlen);
	int e = errno;
	free(res);
	return !res && e == EINVAL;
}

/* A copy of exactly N bytes, so that a read past them is ASan's. */
static uint8_t *exact(const uint8_t *b, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);
	memcpy(c, b, n);
	return c;
}

static void t_bad_header(void)
{
	size_t len;
	uint8_t *blob = virt_tree(&len, 1), *c;
	static const struct { int off; uint32_t v; const char *what; } bad[] = {
		{ 0, 0xd00dfeee, "magic" },
		{ 4, 0xffffff00, "totalsize past the blob" },
		{ 8, 0xffffff00, "structure past the end" },
		{ 12, 0xffffff00, "strings past the end" },
		{ 16, 0xffffff00, "reservations past the end" },
		{ 32, 0x7fffffff, "strings size" },
		{ 36, 0x7fffffff, "structure size" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		c = exact(blob, len);
		w32(c + bad[i].off, bad[i].v);
		CHECK(refused(c, len), "a bad %s was not refused", bad[i].what);
		free(c);
	}
	c = exact(blob, 39);
	CHECK(refused(c, 39), "39 bytes were not refused");
	free(c);
	CHECK(refused(blob, 0), "0 bytes were not refused");
	free(blob);
}

/* Output, when there is any, must be a valid tree; 0 if it was. */
static int valid_or_refused(const uint8_t *c, size_t n, const char *what, size_t at)
{
	size_t rlen = 0;
	char why[200];
	static struct tree out;
	uint8_t *res = fdt_set_chosen(c, n, &CH, &rlen);
	int bad = res && parse(res, rlen, &out, why, sizeof why) < 0;
	CHECK(!bad, "%s at %zu: an invalid tree came out: %s", what, at, why);
	free(res);
	return !bad;
}

/* Every truncation: the header as it was (totalsize past the blob), and
 * a header made to agree with the cut, so that the edit meets the cut
 * blocks themselves; in dtc's block order and with the structure last
 * (a cut then leaves the strings whole and ends the structure early). */
static void truncations(int strings_first);

static void t_truncated(void)
{
	for (int order = 0; order < 2; order++)
		truncations(order);
}

static void truncations(int strings_first)
{
	size_t len;
	uint8_t *blob = virt_tree_order(&len, 1, strings_first);
	uint32_t o_st = r32(blob + 8), o_str = r32(blob + 12);
	uint32_t sz_st = r32(blob + 36), sz_str = r32(blob + 32);

	for (size_t k = 0; k < len; k++) {
		uint8_t *c = exact(blob, k);
		CHECK(refused(c, k), "cut at %zu with the old totalsize not refused", k);
		if (k >= 40) {
			w32(c + 4, (uint32_t)k);
			if (o_st + sz_st > k)
				w32(c + 36, k > o_st ? (uint32_t)(k - o_st) : 0);
			if (o_str + sz_str > k)
				w32(c + 32, k > o_str ? (uint32_t)(k - o_str) : 0);
			if (!valid_or_refused(c, k, "a consistent cut", k)) {
				free(c);
				break;
			}
			/* a structure that stops short of FDT_END must be refused */
			if (k > o_st && k < o_st + sz_st)
				CHECK(refused(c, k), "structure cut at %zu not refused (%s)", k - o_st,
				      strings_first ? "strings first" : "dtc's order");
		}
		free(c);
	}
	free(blob);
}

/* Names and values that point outside their blocks, nodes that never
 * end or end twice, reservations without their zero entry. */
static void t_malformed(void)
{
	static struct tb t;
	size_t len;
	uint8_t *b;

	/* a name offset at the last byte of a strings block with no NUL */
	memset(&t, 0, sizeof t);
	tb_begin(&t, "");
	tb_str(&t, "model", "m");
	tb_end(&t);
	b = tb_finish(&t, &len);
	uint8_t *c = exact(b, len);
	c[len - 1] = 'x';		/* "model" loses its NUL: it is the last string */
	CHECK(refused(c, len), "a property name without its NUL not refused");
	free(c);
	free(b);

	/* an END_NODE too many, and a node never closed */
	for (int v = 0; v < 2; v++) {
		memset(&t, 0, sizeof t);
		tb_begin(&t, "");
		tb_begin(&t, "a");
		tb_end(&t);
		if (v == 0) {
			tb_end(&t);
			tb_end(&t);
		}
		b = tb_finish(&t, &len);
		CHECK(refused(b, len), "unbalanced nodes (%s) not refused", v ? "unclosed" : "closed twice");
		free(b);
	}

	/* two /chosen nodes: which would the crash kernel take? refused */
	memset(&t, 0, sizeof t);
	tb_begin(&t, "");
	for (int i = 0; i < 2; i++) {
		tb_begin(&t, "chosen");
		tb_str(&t, "bootargs", "x");
		tb_end(&t);
	}
	tb_end(&t);
	b = tb_finish(&t, &len);
	CHECK(refused(b, len), "two /chosen nodes not refused");
	free(b);

	/* a strings block whose last bytes are no string (a tail without
	 * its NUL, no property names it): the names the edit adds must still
	 * be strings of their own, and a second edit must find them */
	memset(&t, 0, sizeof t);
	tb_begin(&t, "");
	tb_str(&t, "model", "m");
	tb_end(&t);
	memcpy(t.strs + t.strn, "tail", 4);
	t.strn += 4;
	b = tb_finish(&t, &len);
	{
		static struct tree in, out;
		uint8_t *res;
		size_t rlen, l2 = 0;
		if (edit(b, len, &CH, &in, &out, &res, &rlen) == 0) {
			check_chosen(&out, "/chosen", &CH, 2, 1);
			uint8_t *again = fdt_set_chosen(res, rlen, &CH, &l2);
			CHECK(again && l2 == rlen && !memcmp(again, res, rlen),
			      "a second edit changed the tree (%zu -> %zu bytes)", rlen, l2);
			free(again);
		}
		free(res);
	}
	free(b);

	/* a property value longer than the structure */
	memset(&t, 0, sizeof t);
	tb_begin(&t, "");
	tb_str(&t, "model", "m");
	tb_end(&t);
	b = tb_finish(&t, &len);
	w32(b + r32(b + 8) + 12, 0x10000);	/* root's first property: its length */
	CHECK(refused(b, len), "a property longer than the structure not refused");
	free(b);

	/* reservations that run into the structure without a zero entry */
	memset(&t, 0, sizeof t);
	tb_rsv(&t, 0x1000, 0x1000);
	tb_begin(&t, "");
	tb_end(&t);
	b = tb_finish(&t, &len);
	c = exact(b, len);
	memset(c + 56, 0xff, 16);	/* the zero entry */
	CHECK(valid_or_refused(c, len, "reservations without an end", 0), "see above");
	free(c);
	free(b);
}

/* Random damage, 1..4 bytes at a time (a fixed seed): refused, or a valid
 * tree out; never a read outside the input (ASan). */
static void t_damage(void)
{
	size_t len;
	uint8_t *blob = virt_tree(&len, 1);
	uint64_t s = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < 3000; i++) {
		uint8_t *c = exact(blob, len);
		int nb = 1 + (int)(s % 4);
		for (int k = 0; k < nb; k++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			c[s % len] ^= (uint8_t)(1 + (s >> 32) % 255);
		}
		int ok = valid_or_refused(c, len, "damage", (size_t)i);
		free(c);
		if (!ok)
			break;
	}
	free(blob);
}

/* dtc (device-tree-compiler, a check dependency in deps/packages) reads
 * the edited tree back as DTS. */
static void t_dtc(void)
{
	if (access("/usr/bin/dtc", X_OK) != 0) {
		printf("# dtb: /usr/bin/dtc is not installed: the edited tree is not read back by dtc\n");
		CHECK(1, "dtc absent");
		return;
	}
	size_t len, rlen;
	uint8_t *blob = virt_tree(&len, 1);
	uint8_t *res = fdt_set_chosen(blob, len, &CH, &rlen);
	CHECK(res != NULL, "refused");
	char in[] = "/tmp/kdi-dtb-XXXXXX";
	int fd = mkstemp(in);
	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	if (!res || fd < 0) {
		free(res);
		free(blob);
		return;
	}
	CHECK(write(fd, res, rlen) == (ssize_t)rlen, "write");
	close(fd);
	char cmd[256], dts[8192];
	snprintf(cmd, sizeof cmd, "/usr/bin/dtc -q -I dtb -O dts %s", in);
	FILE *p = popen(cmd, "r");
	size_t n = p ? fread(dts, 1, sizeof dts - 1, p) : 0;
	dts[n] = 0;
	int st = p ? pclose(p) : -1;
	unlink(in);
	CHECK(st == 0, "dtc exit %d", st);
	CHECK(strstr(dts, "bootargs = \"console=ttyAMA0 reset_devices nr_cpus=1\";") != NULL,
	      "dtc shows no new bootargs");
	CHECK(strstr(dts, "linux,elfcorehdr = <0x00 0x47f00000 0x00 0x10000>;") ||
	      strstr(dts, "linux,elfcorehdr = <0x0 0x47f00000 0x0 0x10000>;"),
	      "dtc shows no elfcorehdr of 2+2 cells: %.300s", strstr(dts, "chosen") ? strstr(dts, "chosen") : dts);
	CHECK(strstr(dts, "kaslr-seed") == NULL && strstr(dts, "rng-seed") == NULL, "a seed is left");
	CHECK(strstr(dts, "kdumpinit,conf = \"dev=SERIAL=kdump-dump level=31\";") != NULL,
	      "the vendor property is lost");
	CHECK(strstr(dts, "its@8080000 {") != NULL, "a node after /chosen is lost");
	free(res);
	free(blob);
}

int main(void)
{
	RUN(t_no_chosen);
	RUN(t_replace);
	RUN(t_cells);
	RUN(t_bad_header);
	RUN(t_truncated);
	RUN(t_malformed);
	RUN(t_damage);
	RUN(t_dtc);
	return check_done();
}
