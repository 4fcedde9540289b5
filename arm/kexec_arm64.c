/* kdumpinit's own arm64 crash loader (see kexec_arm64.h).
 *
 * Facts it relies on (arm64 kexec, 6.1):
 *  - kexec_load jumps to the entry with the MMU off and x0 = 0 (only
 *    kexec_file_load fills in a DTB address), so the entry is a purgatory
 *    that loads x0 with the DTB's physical address and branches to the
 *    Image; the boot protocol wants x1..x3 zero.
 *  - The Image is placed at a 2 MiB-aligned address plus its header's
 *    text_offset, with image_size bytes of room (bss included).
 *  - The crash kernel takes its memory from /chosen
 *    linux,usable-memory-range and the old kernel's from the ELF core
 *    header at linux,elfcorehdr; both use the root's cell sizes.
 *  - /proc/kcore's PT_LOADs give the linear map (RAM: vaddr - paddr is
 *    the same for all) and the kernel image (vaddr - paddr =
 *    kimage_voffset), so no symbol lookup is needed. */
#define _GNU_SOURCE
#include "kexec_arm64.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/log.h"
#include "root.h"
#include "machine.h"

#define KEXEC_ON_CRASH		0x1
#define KEXEC_ARCH_AARCH64	(183 << 16)
#define PAGE			((uint64_t)4096)
#define SZ_2M			((uint64_t)2 << 20)

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* ---- flattened device tree ---- */

#define FDT_MAGIC	0xd00dfeedu
#define FDT_BEGIN_NODE	1u
#define FDT_END_NODE	2u
#define FDT_PROP	3u
#define FDT_NOP		4u
#define FDT_END		9u

static uint32_t be32(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

struct buf {
	uint8_t *p;
	size_t len, cap;
	int oom;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 8 > b->cap) {
		size_t cap = (b->cap + n + 8) * 2;
		uint8_t *np = realloc(b->p, cap);
		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void put32(struct buf *b, uint32_t v)
{
	uint8_t x[4];
	put_be32(x, v);
	put(b, x, 4);
}

static void pad4(struct buf *b)
{
	static const uint8_t z[4];
	put(b, z, (4 - (b->len & 3)) & 3);
}

/* A property with a value of CELLS 32-bit cells holding v (1 or 2). */
static void put_cells(uint8_t *out, uint64_t v, uint32_t cells)
{
	if (cells == 2) {
		put_be32(out, (uint32_t)(v >> 32));
		put_be32(out + 4, (uint32_t)v);
	} else {
		put_be32(out, (uint32_t)v);
	}
}

/* The offset of NAME in the strings block, appending it when absent. */
static uint32_t str_off(struct buf *strs, const char *name)
{
	size_t nl = strlen(name) + 1;
	for (size_t i = 0; i + nl <= strs->len; i++)
		if (!memcmp(strs->p + i, name, nl) && (i == 0 || strs->p[i - 1] == 0))
			return (uint32_t)i;
	uint32_t off = (uint32_t)strs->len;
	put(strs, name, nl);
	return off;
}

static void put_prop(struct buf *st, struct buf *strs, const char *name, const void *v, size_t n)
{
	put32(st, FDT_PROP);
	put32(st, (uint32_t)n);
	put32(st, str_off(strs, name));
	put(st, v, n);
	pad4(st);
}

static int replaced(const char *name)
{
	static const char *const names[] = {
		"bootargs", "linux,initrd-start", "linux,initrd-end", "linux,elfcorehdr",
		"linux,usable-memory-range", "kaslr-seed", "rng-seed",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

static void put_chosen(struct buf *st, struct buf *strs, const struct fdt_chosen *ch,
		       uint32_t ac, uint32_t sc)
{
	uint8_t v[16];

	put_prop(st, strs, "bootargs", ch->bootargs, strlen(ch->bootargs) + 1);
	if (ch->initrd_end > ch->initrd_start) {
		put_cells(v, ch->initrd_start, 2);
		put_prop(st, strs, "linux,initrd-start", v, 8);
		put_cells(v, ch->initrd_end, 2);
		put_prop(st, strs, "linux,initrd-end", v, 8);
	}
	put_cells(v, ch->elfcorehdr, ac);
	put_cells(v + 4 * ac, ch->elfcorehdr_size, sc);
	put_prop(st, strs, "linux,elfcorehdr", v, 4 * (ac + sc));
	/* crashk_res first, then the low region: the crash kernel caps its
	 * memory at the first range and adds the second (drivers/of/fdt.c,
	 * from 5.18; older ones read the first only, as kexec-tools and the
	 * kernel's own kexec_file_load order them too) */
	uint8_t u[32];
	size_t un = 4 * (ac + sc);
	put_cells(u, ch->usable, ac);
	put_cells(u + 4 * ac, ch->usable_size, sc);
	if (ch->usable_low_size) {
		put_cells(u + un, ch->usable_low, ac);
		put_cells(u + un + 4 * ac, ch->usable_low_size, sc);
		un *= 2;
	}
	put_prop(st, strs, "linux,usable-memory-range", u, un);
}

void *fdt_set_chosen(const void *fdt, size_t len, const struct fdt_chosen *ch, size_t *outlen)
{
	const uint8_t *f = fdt;
	if (len < 40 || be32(f) != FDT_MAGIC || be32(f + 4) > len) {
		errno = EINVAL;
		return NULL;
	}
	uint32_t total = be32(f + 4), o_st = be32(f + 8), o_str = be32(f + 12), o_rsv = be32(f + 16);
	uint32_t sz_str = be32(f + 32), sz_st = be32(f + 36);
	if (o_st >= total || o_str > total || sz_str > total - o_str || sz_st > total - o_st ||
	    o_rsv >= total) {
		errno = EINVAL;
		return NULL;
	}
	struct buf st = { 0 }, strs = { 0 }, rsv = { 0 }, out = { 0 };
	put(&strs, f + o_str, sz_str);
	/* names appended below must start a string of their own */
	if (sz_str && f[o_str + sz_str - 1])
		put(&strs, "", 1);
	/* The reservation block, up to and with its zero entry: without one
	 * the copy would have no end either. */
	int rsv_end = 0;
	for (uint32_t o = o_rsv; o + 16 <= total && !rsv_end; o += 16) {
		put(&rsv, f + o, 16);
		rsv_end = !memcmp(f + o, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	}
	if (!rsv_end)
		goto bad;
	uint32_t ac = 2, sc = 1;	/* the defaults of the DT spec */
	int depth = 0, in_chosen = 0, chosen_done = 0, roots = 0, ended = 0;
	const uint8_t *p = f + o_st, *end = f + o_st + sz_st;
	while (p + 4 <= end) {
		uint32_t tok = be32(p);
		p += 4;
		if (tok == FDT_BEGIN_NODE) {
			const uint8_t *nm = p;
			size_t nl = strnlen((const char *)nm, (size_t)(end - p));
			if (nm + nl >= end)
				goto bad;
			/* one root, named "": a second one or a named root is
			 * not a tree the edit could keep whole */
			if (depth == 0 && (roots++ || nl))
				goto bad;
			p += align_up(nl + 1, 4);
			depth++;
			put32(&st, FDT_BEGIN_NODE);
			put(&st, nm, nl + 1);
			pad4(&st);
			in_chosen = depth == 2 && !strcmp((const char *)nm, "chosen");
			if (in_chosen && chosen_done)
				goto bad;	/* a second /chosen: which one would count? */
			if (in_chosen) {
				put_chosen(&st, &strs, ch, ac, sc);
				chosen_done = 1;
			}
		} else if (tok == FDT_END_NODE) {
			if (depth == 0)
				goto bad;
			if (depth == 1 && !chosen_done) {
				/* No /chosen: add one at the end of the root. */
				put32(&st, FDT_BEGIN_NODE);
				put(&st, "chosen", 7);
				pad4(&st);
				put_chosen(&st, &strs, ch, ac, sc);
				put32(&st, FDT_END_NODE);
				chosen_done = 1;
			}
			if (depth == 2)
				in_chosen = 0;
			depth--;
			put32(&st, FDT_END_NODE);
		} else if (tok == FDT_PROP) {
			if (p + 8 > end || depth == 0)
				goto bad;
			uint32_t n = be32(p), no = be32(p + 4);
			const uint8_t *v = p + 8;
			/* the name must end inside the strings block */
			if (no >= sz_str || !memchr(f + o_str + no, 0, sz_str - no) ||
			    n > (size_t)(end - v))
				goto bad;
			p = v + align_up(n, 4);
			const char *name = (const char *)f + o_str + no;
			if (depth == 1 && n == 4 && !strcmp(name, "#address-cells"))
				ac = be32(v);
			if (depth == 1 && n == 4 && !strcmp(name, "#size-cells"))
				sc = be32(v);
			if (in_chosen && depth == 2 && replaced(name))
				continue;
			put_prop(&st, &strs, name, v, n);
		} else if (tok == FDT_NOP) {
			continue;
		} else if (tok == FDT_END) {
			ended = 1;
			break;
		} else {
			goto bad;
		}
		if (ac < 1 || ac > 2 || sc < 1 || sc > 2)
			goto bad;
	}
	/* a structure cut short (no FDT_END, nodes left open) is refused:
	 * the crash kernel would get a tree that ends mid-node */
	if (!ended || depth != 0 || !roots)
		goto bad;
	put32(&st, FDT_END);
	/* header, reservations (8-aligned), structure, strings */
	uint8_t hdr[40] = { 0 };
	size_t off_rsv = 40, off_st = off_rsv + rsv.len, off_str = off_st + st.len;
	size_t tot = off_str + strs.len;
	put_be32(hdr, FDT_MAGIC);
	put_be32(hdr + 4, (uint32_t)tot);
	put_be32(hdr + 8, (uint32_t)off_st);
	put_be32(hdr + 12, (uint32_t)off_str);
	put_be32(hdr + 16, (uint32_t)off_rsv);
	put_be32(hdr + 20, 17);
	put_be32(hdr + 24, 16);
	put_be32(hdr + 28, be32(f + 28));
	put_be32(hdr + 32, (uint32_t)strs.len);
	put_be32(hdr + 36, (uint32_t)st.len);
	put(&out, hdr, 40);
	put(&out, rsv.p, rsv.len);
	put(&out, st.p, st.len);
	put(&out, strs.p, strs.len);
	free(st.p);
	free(strs.p);
	free(rsv.p);
	if (out.oom || st.oom || strs.oom || rsv.oom) {
		free(out.p);
		errno = ENOMEM;
		return NULL;
	}
	*outlen = out.len;
	return out.p;
bad:
	free(st.p);
	free(strs.p);
	free(rsv.p);
	errno = EINVAL;
	return NULL;
}

/* ---- what the running kernel tells ---- */

struct layout {
	struct machine m;	/* RAM, crash regions, CPU notes, VMCOREINFO */
	int64_t linear_delta;	/* vaddr - paddr of the linear map */
	int64_t kimage_voffset;	/* vaddr - paddr of the kernel image */
	int have_linear, have_kimage;
};

/* The linear map's and the image's offsets from /proc/kcore's headers
 * (read only the headers: the file is as large as the address space). */
static int read_kcore(const char *root, struct layout *l)
{
	char path[512];
	int fd = open(root_path(root, "/proc/kcore", path, sizeof path), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	Elf64_Ehdr eh;
	uint64_t code = l->m.code.start;
	int r = -EINVAL;
	if (read_full_at(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0 && eh.e_phnum < 4096) {
		size_t sz = (size_t)eh.e_phnum * sizeof(Elf64_Phdr);
		Elf64_Phdr *ph = malloc(sz);
		if (ph && read_full_at(fd, ph, sz, eh.e_phoff) == (ssize_t)sz) {
			/* Two segments hold the kernel's code: the linear map's
			 * and the image's (KCORE_TEXT). From 5.4 on the linear
			 * map is the lower of the two kernel ranges. */
			uint64_t lo_va = 0, hi_va = 0;
			for (int i = 0; i < eh.e_phnum; i++) {
				if (ph[i].p_type != PT_LOAD || ph[i].p_paddr == (uint64_t)-1 ||
				    ph[i].p_paddr > code || ph[i].p_paddr + ph[i].p_memsz <= code)
					continue;
				int64_t d = (int64_t)(ph[i].p_vaddr - ph[i].p_paddr);
				if (!l->have_linear || ph[i].p_vaddr < lo_va) {
					if (l->have_linear && (!l->have_kimage || lo_va > hi_va)) {
						l->kimage_voffset = l->linear_delta;
						hi_va = lo_va;
						l->have_kimage = 1;
					}
					l->linear_delta = d;
					lo_va = ph[i].p_vaddr;
					l->have_linear = 1;
				} else if (!l->have_kimage || ph[i].p_vaddr > hi_va) {
					l->kimage_voffset = d;
					hi_va = ph[i].p_vaddr;
					l->have_kimage = 1;
				}
			}
			r = 0;
		}
		free(ph);
	}
	close(fd);
	return r;
}

/* What the header is built from, read whole; each failure said once. */
static int read_layout(const char *root, struct layout *l)
{
	struct machine *m = &l->m;
	int r = machine_read_iomem(root, m);

	if (r < 0 && r != -E2BIG)	/* E2BIG: it said why */
		err("own arm64 loader: /proc/iomem: %s", errstr(r));
	if (r < 0)
		return r;
	if (!m->ncrash || !m->have_code) {
		err("own arm64 loader: /proc/iomem names no %s",
		    !m->ncrash ? "Crash kernel region (crashkernel=?)" : "Kernel code");
		return -ENOENT;
	}
	if ((r = read_kcore(root, l)) < 0 || !l->have_linear || !l->have_kimage) {
		err("own arm64 loader: /proc/kcore gives no linear map and image offsets");
		return r < 0 ? r : -ENOENT;
	}
	if ((r = machine_read_cpus(root, m, 1)) < 0)
		return r;	/* it said which file */
	if ((r = machine_read_vmcoreinfo(root, m)) < 0 || !m->nnotes || !m->notes_size) {
		r = r < 0 ? r : -ENOENT;
		err("own arm64 loader: no crash_notes or /sys/kernel/vmcoreinfo: %s", strerror(-r));
		return r;
	}
	return 0;
}

/* ---- the ELF core header ---- */

/* ELF counts program headers in 16 bits, and 0xffff (PN_XNUM) means "see
 * section 0", which the crash kernel's /proc/vmcore does not read: this
 * many is the most a header can have. */
#define PHDR_MAX	0xfffe

/* The parts of RAM range R outside the crash regions (ascending, so one
 * pass): at most one more than there are regions. */
static int ram_parts(struct mrange r, const struct machine *m, struct mrange out[MACHINE_CRASH_MAX + 1])
{
	uint64_t at = r.start;
	int n = 0;

	for (int i = 0; i < m->ncrash && at <= r.end; i++) {
		const struct mrange *c = &m->crash[i];
		if (c->end < at || c->start > r.end)
			continue;
		if (c->start > at)
			out[n++] = (struct mrange){ at, c->start - 1 };
		if (c->end == UINT64_MAX)
			return n;
		at = c->end + 1;
	}
	if (at <= r.end)
		out[n++] = (struct mrange){ at, r.end };
	return n;
}

static size_t header_phdrs(const struct layout *l)
{
	struct mrange parts[MACHINE_CRASH_MAX + 1];
	size_t n = l->m.nnotes + 1 + 1;

	for (size_t i = 0; i < l->m.nram; i++)
		n += (size_t)ram_parts(l->m.ram[i], &l->m, parts);
	return n;
}

static Elf64_Phdr load_phdr(uint64_t s, uint64_t e, int64_t delta)
{
	return (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X, .p_offset = s, .p_paddr = s,
			     .p_vaddr = s + (uint64_t)delta, .p_filesz = e - s, .p_memsz = e - s };
}

/* The ELF core header the crash kernel's /proc/vmcore is built from:
 * every CPU's note, VMCOREINFO, the kernel image, RAM without the crash
 * regions (the crash kernel's own memory). NULL: -E2BIG (said) or
 * -ENOMEM in *e. */
static void *core_header(const struct layout *l, size_t *len, size_t *nph, int *e)
{
	const struct machine *m = &l->m;
	size_t want = header_phdrs(l);

	*nph = want;
	if (want > PHDR_MAX) {
		err("own arm64 loader: the crash header would need %zu program headers (%zu CPUs, %zu RAM "
		    "ranges); ELF allows %d: not arming with a header that leaves memory out",
		    want, m->nnotes, m->nram, PHDR_MAX);
		*e = -E2BIG;
		return NULL;
	}
	size_t sz = sizeof(Elf64_Ehdr) + want * sizeof(Elf64_Phdr);
	uint8_t *b = calloc(1, sz);
	if (!b) {
		*e = -ENOMEM;
		return NULL;
	}
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	Elf64_Phdr *ph = (Elf64_Phdr *)(b + sizeof *eh);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_AARCH64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof *eh;
	eh->e_ehsize = sizeof *eh;
	eh->e_phentsize = sizeof *ph;
	size_t n = 0;
	for (size_t i = 0; i < m->nnotes; i++)
		ph[n++] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = m->notes[i].addr, .p_paddr = m->notes[i].addr,
					.p_filesz = m->notes_size, .p_memsz = m->notes_size };
	ph[n++] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = m->vmcoreinfo, .p_paddr = m->vmcoreinfo,
				.p_filesz = m->vmcoreinfo_size, .p_memsz = m->vmcoreinfo_size };
	/* The kernel image, as its own segment (tools find the text by it). */
	uint64_t ks = m->code.start, ke = (m->have_data ? m->data.end : m->code.end) + 1;
	ph[n++] = load_phdr(ks, ke, l->kimage_voffset);
	for (size_t i = 0; i < m->nram; i++) {
		struct mrange parts[MACHINE_CRASH_MAX + 1];
		int np = ram_parts(m->ram[i], m, parts);
		for (int k = 0; k < np; k++)
			ph[n++] = load_phdr(parts[k].start, parts[k].end + 1, l->linear_delta);
	}
	eh->e_phnum = (Elf64_Half)n;
	*len = sz;
	return b;
}

/* ---- crash hotplug ---- */

/* Linux 6.6 (CONFIG_CRASH_HOTPLUG) can rewrite a loaded crash header
 * itself when CPUs or memory come and go, instead of leaving it stale
 * until someone re-arms. A kexec_load image opts in with a flag:
 * KEXEC_UPDATE_ELFCOREHDR (6.6), or KEXEC_CRASH_HOTPLUG_SUPPORT (6.10,
 * the only one the arm64 support proposed in 2026 honours; x86 takes
 * either). The kernel then finds the header as the segment that starts
 * with ELF magic and writes its own into it, so the segment must have
 * room for it: /sys/kernel/crash_elfcorehdr_size (6.6) says how much. The
 * flags are refused (EINVAL) by a kernel that does not know them, so
 * they are given only where crash_hotplug files say the kernel has the
 * feature. */
#define KEXEC_UPDATE_ELFCOREHDR		0x4
#define KEXEC_CRASH_HOTPLUG_SUPPORT	0x8
#define KEXEC_HOTPLUG_FLAGS		(KEXEC_UPDATE_ELFCOREHDR | KEXEC_CRASH_HOTPLUG_SUPPORT)

static int crash_hotplug_kernel(const char *root)
{
	static const char *const files[] = {
		"/sys/devices/system/cpu/crash_hotplug", "/sys/devices/system/memory/crash_hotplug",
	};
	char path[512];

	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		if (access(root_path(root, files[i], path, sizeof path), F_OK) == 0)
			return 1;
	return 0;
}

/* The header segment's size with room for the kernel's rewrite. */
static uint64_t header_room(const char *root, size_t hlen)
{
	static const char *const files[] = {
		"/sys/kernel/kexec/crash_elfcorehdr_size", "/sys/kernel/crash_elfcorehdr_size",
	};
	char path[512], v[32];
	uint64_t room = 0;

	for (size_t i = 0; i < sizeof files / sizeof files[0] && !room; i++)
		if (read_text_file(root_path(root, files[i], path, sizeof path), v, sizeof v) >= 0)
			room = strtoull(v, NULL, 10);
	/* without the kernel's figure: twice ours, room for as much again */
	if (!room)
		room = 2 * (uint64_t)hlen;
	return align_up(room > hlen ? room : hlen, PAGE);
}

/* ---- placing it all ---- */

/* ldr x0, dtb; ldr x4, entry; mov x1..x3, xzr; br x4; dtb; entry. */
static void purgatory(uint8_t out[40], uint64_t dtb, uint64_t entry)
{
	static const uint32_t code[6] = {
		0x580000c0,	/* ldr x0, [pc, #24] */
		0x580000e4,	/* ldr x4, [pc, #28] */
		0xaa1f03e1,	/* mov x1, xzr */
		0xaa1f03e2,	/* mov x2, xzr */
		0xaa1f03e3,	/* mov x3, xzr */
		0xd61f0080,	/* br x4 */
	};
	for (int i = 0; i < 6; i++)
		for (int k = 0; k < 4; k++)
			out[4 * i + k] = (uint8_t)(code[i] >> (8 * k));
	for (int k = 0; k < 8; k++) {
		out[24 + k] = (uint8_t)(dtb >> (8 * k));
		out[32 + k] = (uint8_t)(entry >> (8 * k));
	}
}

struct kseg {
	const void *buf;
	size_t bufsz;
	unsigned long mem;
	size_t memsz;
};

/* Everything kexec_load is given, and what the console is told. */
struct arm64_load {
	struct kseg segs[5];
	unsigned long entry, flags;
	uint8_t *hdr, *dtb;		/* owned */
	uint8_t purg[40];
	size_t nphdr, ncpus, nram;
	struct mrange crash, low;	/* low.end == 0: no low region */
};

static void arm64_load_free(struct arm64_load *ld)
{
	free(ld->hdr);
	free(ld->dtb);
	ld->hdr = ld->dtb = NULL;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Builds the load of IMG (an arm64 Image) and RD with command line CL
 * from what ROOT's /proc and /sys say: 0, -ENOTSUP (not an Image that
 * says its size), or -errno (said). */
static int arm64_plan(const char *root, const uint8_t *img, size_t klen, const void *rd, size_t ilen,
		      const char *fdt, size_t flen, const char *cl, struct arm64_load *ld)
{
	memset(ld, 0, sizeof *ld);
	if (klen < 64 || be32(img + 56) != 0x41524d64u /* "ARM\x64" */)
		return -ENOTSUP;
	uint64_t text_offset = le64(img + 8), image_size = le64(img + 16);
	if (image_size == 0)
		return -ENOTSUP;	/* pre-3.17 Images: no size in the header */

	struct layout *l = calloc(1, sizeof *l);
	if (!l)
		return -ENOMEM;
	size_t hlen = 0, dlen = 0;
	int r = read_layout(root, l);
	if (r < 0)
		goto out;
	ld->hdr = core_header(l, &hlen, &ld->nphdr, &r);
	if (!ld->hdr)
		goto out;
	ld->ncpus = l->m.nnotes;
	ld->nram = l->m.nram;
	int hotplug = crash_hotplug_kernel(root);
	uint64_t hmem = hotplug ? header_room(root, hlen) : align_up(hlen, PAGE);
	ld->flags = KEXEC_ON_CRASH | KEXEC_ARCH_AARCH64 | (hotplug ? KEXEC_HOTPLUG_FLAGS : 0);

	/* Every segment in crashk_res (the highest region: kexec_load
	 * refuses any other); a low region is the crash kernel's memory too. */
	ld->crash = l->m.crash[l->m.ncrash - 1];
	if (l->m.ncrash > 1)
		ld->low = l->m.crash[0];
	uint64_t cs = ld->crash.start, ce = ld->crash.end + 1;
	uint64_t kaddr = align_up(cs, SZ_2M) + text_offset;
	uint64_t iaddr = align_up(kaddr + image_size, PAGE);
	uint64_t daddr = align_up(iaddr + ilen, PAGE);
	/* The tree's size is known only once built; its addresses are not
	 * in it, so build it with the final header address after a first
	 * pass for the size (the edit adds a fixed amount). */
	struct fdt_chosen ch = { cl, iaddr, iaddr + ilen, 0, 0, cs, ce - cs,
				 ld->low.start, ld->low.end ? ld->low.end + 1 - ld->low.start : 0 };
	ld->dtb = fdt_set_chosen(fdt, flen, &ch, &dlen);
	if (!ld->dtb) {
		r = -errno;
		err("own arm64 loader: /sys/firmware/fdt: %s", strerror(errno));
		goto out;
	}
	uint64_t haddr = align_up(daddr + dlen, PAGE);
	uint64_t paddr = haddr + hmem;
	if (paddr + PAGE > ce) {
		err("own arm64 loader: Image, initramfs and the rest need %" PRIu64 " MiB, the crash region "
		    "has %" PRIu64 " MiB", (paddr + PAGE - cs) >> 20, (ce - cs) >> 20);
		r = -ENOMEM;
		goto out;
	}
	free(ld->dtb);
	/* with hotplug the crash kernel must keep the whole room: the
	 * header the kernel writes there may be longer than ours */
	ch.elfcorehdr = haddr;
	ch.elfcorehdr_size = hotplug ? hmem : hlen;
	ld->dtb = fdt_set_chosen(fdt, flen, &ch, &dlen);
	if (!ld->dtb) {
		r = -errno;
		goto out;
	}
	purgatory(ld->purg, daddr, kaddr);
	ld->entry = paddr;
	ld->segs[0] = (struct kseg){ img, klen, kaddr, align_up(image_size > klen ? image_size : klen, PAGE) };
	ld->segs[1] = (struct kseg){ rd, ilen, iaddr, align_up(ilen, PAGE) };
	ld->segs[2] = (struct kseg){ ld->dtb, dlen, daddr, align_up(dlen, PAGE) };
	ld->segs[3] = (struct kseg){ ld->hdr, hlen, haddr, hmem };
	ld->segs[4] = (struct kseg){ ld->purg, sizeof ld->purg, paddr, PAGE };
	r = 0;
out:
	machine_free(&l->m);
	free(l);
	if (r < 0)
		arm64_load_free(ld);
	return r;
}

static long do_kexec_load(const struct arm64_load *ld, unsigned long flags)
{
	return syscall(SYS_kexec_load, ld->entry, 5UL, ld->segs, flags);
}

int arm64_kexec_load(const char *root, const char *kernel, const char *initrd, const char *cl)
{
	struct utsname u;
	if (uname(&u) < 0 || strcmp(u.machine, "aarch64"))
		return -ENOTSUP;

	size_t klen = 0, ilen = 0, flen = 0;
	char path[512];
	uint8_t *img = (uint8_t *)read_all_file(kernel, 0, &klen);
	if (!img)
		return -ENOTSUP;
	/* No initramfs (the dedicated kernel carries its own): an empty
	 * newc archive, the trailer alone, keeps the segment layout; the
	 * kernel unpacks it over the built-in one, adding nothing. */
	static const char trailer[] = "070701" "00000000" "00000000" "00000000" "00000000"
		"00000001" "00000000" "00000000" "00000000" "00000000" "00000000" "00000000"
		"0000000B" "00000000" "TRAILER!!!\0\0\0";
	char *rd = initrd ? read_all_file(initrd, 0, &ilen) : malloc(512);
	if (!initrd && rd) {
		memset(rd, 0, 512);
		memcpy(rd, trailer, sizeof trailer - 1);
		ilen = 512;
	}
	char *fdt = read_all_file(root_path(root, "/sys/firmware/fdt", path, sizeof path), 0, &flen);
	struct arm64_load ld;
	int r;
	if (!rd || !fdt) {
		r = -errno ? -errno : -ENOMEM;
		err("own arm64 loader: cannot read %s: %s", !rd ? initrd : path, strerror(-r));
		goto out;
	}
	if ((r = arm64_plan(root, img, klen, rd, ilen, fdt, flen, cl, &ld)) < 0)
		goto out;
	msg("own arm64 loader: Image 0x%" PRIx64 " (%zu bytes), initramfs 0x%" PRIx64 ", DTB 0x%" PRIx64
	    ", core header 0x%" PRIx64 " (%zu program headers: %zu CPUs, %zu RAM ranges), purgatory 0x%" PRIx64
	    "; crash region 0x%" PRIx64 "-0x%" PRIx64 "%s", (uint64_t)ld.segs[0].mem, klen,
	    (uint64_t)ld.segs[1].mem, (uint64_t)ld.segs[2].mem, (uint64_t)ld.segs[3].mem, ld.nphdr, ld.ncpus,
	    ld.nram, (uint64_t)ld.entry, ld.crash.start, ld.crash.end,
	    ld.low.end ? ", and the low one for the crash kernel's use" : "");
	if (ld.flags & KEXEC_HOTPLUG_FLAGS)
		msg("own arm64 loader: the kernel updates crash headers on hotplug: asking it to "
		    "update this one (%zu bytes of room)", ld.segs[3].memsz);
	long s = do_kexec_load(&ld, ld.flags);
	if (s < 0 && errno == EINVAL && (ld.flags & KEXEC_HOTPLUG_FLAGS)) {
		warn("own arm64 loader: the kernel refused the crash-hotplug flags: loading without; the "
		     "header goes stale on CPU or memory hotplug until arm runs again");
		s = do_kexec_load(&ld, ld.flags & ~(unsigned long)KEXEC_HOTPLUG_FLAGS);
	}
	if (s < 0) {
		r = -errno;
		err("own arm64 loader: kexec_load: %s", strerror(errno));
	}
	arm64_load_free(&ld);
out:
	free(img);
	free(rd);
	free(fdt);
	return r;
}
