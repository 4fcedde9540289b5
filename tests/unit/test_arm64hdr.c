/* Unit tests for the crash header of kdumpinit's own arm64 loader
 * (arm/kexec_arm64.c, arm/machine.c) and the record of it (arm/armed.c),
 * on a fake root: the loader reads /proc and /sys under a root prefix
 * (root_path), so a directory made here stands for a big server.
 *
 * The fake machine: 80 System RAM ranges; 128 CPUs with crash notes
 * among cpu0..cpu130, with holes (cpu5 and cpu64 absent, cpu100 without
 * crash_notes, as a CPU the kernel gives no note buffer) and offline ones
 * (the notes of offline CPUs are there from boot, and kept);
 * crashkernel=X,high's two regions, the high one (crashk_res, where every
 * segment must go) and the low one below 4 GiB. Cases:
 *  - every CPU's note in the header, in CPU order, at its address; every
 *    RAM range, without both crash regions; the segments in the high
 *    region; linux,usable-memory-range naming the high region, then the
 *    low one (the order the crash kernel and kexec-tools use);
 *  - a kernel with crash hotplug (crash_hotplug files): the flags that
 *    ask it to update the header, and a header segment with the room it
 *    asks for (crash_elfcorehdr_size), that room named in the tree;
 *  - limits: a third crash region, and more program headers than ELF can
 *    count (65534), each refused with -E2BIG, never a cut header;
 *  - the armed record's fingerprint: written, read back, current until
 *    RAM or CPUs change, stale after (unless the kernel updates the
 *    header), unknowable from a non-root /proc/iomem. */
#define _GNU_SOURCE
#define CHECK_PREFIX "arm64hdr"
#include "check.h"

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* The loader, the machine reader and the record: arm/ is not in the unit
 * archive (a program, not a library), so they are compiled in here. */
#include "../../arm/kexec_arm64.c"
#include "../../arm/machine.c"
#include "../../arm/armed.c"
#include "../../arm/root.c"

#define NRAM		80
#define RAM_BASE	0x40000000ull
#define RAM_STEP	0x10000000ull	/* 256 MiB apart */
#define RAM_SIZE	0x08000000ull	/* 128 MiB each */
#define LOW_START	0x60000000ull	/* the start of RAM range 2, below 4 GiB */
#define LOW_END		0x63ffffffull
#define HIGH_START	0x4a2000000ull	/* inside RAM range 70, above 4 GiB */
#define HIGH_END	0x4a5ffffffull
#define NOTE_SIZE	400
#define CPU_TOP		131		/* cpu0..cpu130 */

static int cpu_dir(int c) { return c != 5 && c != 64; }
static int cpu_has_note(int c) { return cpu_dir(c) && c != 100; }
static uint64_t note_addr(int c) { return 0x4100000000ull + (uint64_t)c * 0x10000; }

static char root[64];

static void put_file(const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s%s", root, rel);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void rm_file(const char *rel)
{
	char p[512];
	snprintf(p, sizeof p, "%s%s", root, rel);
	unlink(p);
}

/* /proc/iomem of NRAM ranges (plus EXTRA more, 4 KiB each, high up),
 * kernel code and data in range 0, the crash regions (NCRASH: 1 the high
 * one, 2 both, 3 a third one too). ZERO: as a non-root reader sees it. */
static void write_iomem(int extra, int ncrash, int zero)
{
	size_t cap = 128 + (size_t)(NRAM + extra) * 64, n = 0;
	char *t = malloc(cap);
#define L(...) n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__)
	for (int i = 0; i < NRAM; i++) {
		uint64_t s = RAM_BASE + i * RAM_STEP, e = s + RAM_SIZE - 1;
		if (zero)
			s = e = 0;
		L("%08llx-%08llx : System RAM\n", (unsigned long long)s, (unsigned long long)e);
		if (i == 0) {
			L("  %08llx-%08llx : Kernel code\n", zero ? 0ull : 0x40210000ull, zero ? 0ull : 0x40ffffffull);
			L("  %08llx-%08llx : Kernel data\n", zero ? 0ull : 0x41000000ull, zero ? 0ull : 0x411fffffull);
		}
		if (i == 2 && ncrash >= 2)
			L("  %08llx-%08llx : Crash kernel\n", zero ? 0ull : LOW_START, zero ? 0ull : LOW_END);
		if (i == 3 && ncrash >= 3)
			L("  %08llx-%08llx : Crash kernel\n", 0x70000000ull, 0x70ffffffull);
		if (i == 70)
			L("  %08llx-%08llx : Crash kernel\n", zero ? 0ull : HIGH_START, zero ? 0ull : HIGH_END);
	}
	L("%08llx-%08llx : PCI ECAM\n", 0x4010000000ull, 0x401fffffffull);
	for (int i = 0; i < extra; i++) {
		uint64_t s = 0x10000000000ull + (uint64_t)i * 0x2000;
		L("%08llx-%08llx : System RAM\n", (unsigned long long)s, (unsigned long long)(s + 0xfff));
	}
#undef L
	put_file("/proc/iomem", t);
	free(t);
}

/* /proc/kcore: the linear map (lower) and the image (KCORE_TEXT) over
 * the kernel code. */
static void write_kcore(void)
{
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph[2];
	} k;
	memset(&k, 0, sizeof k);
	memcpy(k.eh.e_ident, ELFMAG, SELFMAG);
	k.eh.e_ident[EI_CLASS] = ELFCLASS64;
	k.eh.e_phoff = sizeof k.eh;
	k.eh.e_phentsize = sizeof(Elf64_Phdr);
	k.eh.e_phnum = 2;
	k.ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_paddr = RAM_BASE, .p_vaddr = 0xffff000000000000ull,
				.p_memsz = RAM_SIZE };
	k.ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_paddr = 0x40210000ull, .p_vaddr = 0xffff800008010000ull,
				.p_memsz = 0x1000000 };
	char p[512];
	snprintf(p, sizeof p, "%s/proc/kcore", root);
	FILE *f = fopen(p, "w");
	if (f) {
		fwrite(&k, sizeof k, 1, f);
		fclose(f);
	}
}

static void make_root(void)
{
	char rel[128], v[64];

	snprintf(root, sizeof root, "/tmp/kdi-arm64hdr-XXXXXX");
	if (!mkdtemp(root))
		return;
	write_iomem(0, 2, 0);
	write_kcore();
	for (int c = 0; c < CPU_TOP; c++) {
		if (!cpu_dir(c))
			continue;
		snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/online", c);
		put_file(rel, c % 3 ? "1\n" : "0\n");	/* every third offline */
		if (!cpu_has_note(c))
			continue;
		snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/crash_notes", c);
		snprintf(v, sizeof v, "%llx\n", (unsigned long long)note_addr(c));
		put_file(rel, v);
		snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%d/crash_notes_size", c);
		snprintf(v, sizeof v, "%d\n", NOTE_SIZE);
		put_file(rel, v);
	}
	/* names that are not CPUs */
	put_file("/sys/devices/system/cpu/cpufreq/boost", "0\n");
	put_file("/sys/devices/system/cpu/cpuidle/current_driver", "psci_idle\n");
	put_file("/sys/devices/system/cpu/possible", "0-130\n");
	put_file("/sys/kernel/vmcoreinfo", "0000000041234000 1000\n");
	put_file("/run/.keep", "");	/* the record goes to ROOT/run/kdumpinit */
}

static void rm_root(void)
{
	char cmd[128];
	if (root[0] && !strncmp(root, "/tmp/kdi-arm64hdr-", 18)) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
		if (system(cmd) != 0)
			fprintf(stderr, "# cannot remove %s\n", root);
	}
}

/* ---- a tree and an Image ---- */

struct tbuf {
	uint8_t b[1024];
	size_t n;
};

static void tw(struct tbuf *t, uint32_t v)
{
	put_be32(t->b + t->n, v);
	t->n += 4;
}

static void tstr(struct tbuf *t, const char *s)
{
	size_t l = strlen(s) + 1;
	memcpy(t->b + t->n, s, l);
	t->n += (l + 3) & ~(size_t)3;
}

/* / { #address-cells = 2; #size-cells = 2; chosen { bootargs = "x"; }; } */
static uint8_t *tiny_tree(size_t *len)
{
	static const char strs[] = "#address-cells\0#size-cells\0bootargs";
	struct tbuf st = { .n = 0 };
	tw(&st, FDT_BEGIN_NODE);
	tstr(&st, "");
	for (int i = 0; i < 2; i++) {
		tw(&st, FDT_PROP);
		tw(&st, 4);
		tw(&st, i ? 15 : 0);
		tw(&st, 2);
	}
	tw(&st, FDT_BEGIN_NODE);
	tstr(&st, "chosen");
	tw(&st, FDT_PROP);
	tw(&st, 2);
	tw(&st, 27);
	tstr(&st, "x");
	tw(&st, FDT_END_NODE);
	tw(&st, FDT_END_NODE);
	tw(&st, FDT_END);
	size_t off_rsv = 40, off_st = off_rsv + 16, off_str = off_st + st.n, tot = off_str + sizeof strs;
	uint8_t *b = calloc(1, tot);
	put_be32(b, FDT_MAGIC);
	put_be32(b + 4, (uint32_t)tot);
	put_be32(b + 8, (uint32_t)off_st);
	put_be32(b + 12, (uint32_t)off_str);
	put_be32(b + 16, (uint32_t)off_rsv);
	put_be32(b + 20, 17);
	put_be32(b + 24, 16);
	put_be32(b + 32, sizeof strs);
	put_be32(b + 36, (uint32_t)st.n);
	memcpy(b + off_st, st.b, st.n);
	memcpy(b + off_str, strs, sizeof strs);
	*len = tot;
	return b;
}

/* The value of property NAME anywhere in the tree (the tiny tree has it
 * once), or NULL. */
static const uint8_t *tree_prop(const uint8_t *f, const char *name, uint32_t *len)
{
	const uint8_t *p = f + be32(f + 8), *end = p + be32(f + 36);
	const char *strs = (const char *)f + be32(f + 12);

	while (p + 4 <= end) {
		uint32_t tok = be32(p);
		p += 4;
		if (tok == FDT_BEGIN_NODE) {
			p += align_up(strlen((const char *)p) + 1, 4);
		} else if (tok == FDT_PROP) {
			uint32_t n = be32(p), no = be32(p + 4);
			if (!strcmp(strs + no, name)) {
				*len = n;
				return p + 8;
			}
			p += 8 + align_up(n, 4);
		} else if (tok == FDT_END) {
			break;
		}
	}
	return NULL;
}

static uint64_t cells64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }

struct inputs {
	uint8_t img[4096];
	uint8_t rd[8192];
	uint8_t *fdt;
	size_t flen;
};

static void make_inputs(struct inputs *in)
{
	memset(in, 0, sizeof *in);
	put_be32(in->img + 56, 0x41524d64u);		/* "ARM\x64" */
	in->img[16 + 2] = 0x10;				/* image_size 1 MiB, text_offset 0 */
	in->fdt = tiny_tree(&in->flen);
}

static int plan(struct inputs *in, struct arm64_load *ld)
{
	return arm64_plan(root, in->img, sizeof in->img, in->rd, sizeof in->rd, (const char *)in->fdt,
			  in->flen, "console=ttyAMA0 nr_cpus=1", ld);
}

static int in_region(uint64_t s, uint64_t len, uint64_t rs, uint64_t re)
{
	return s >= rs && s + len - 1 <= re;
}

static int overlaps(uint64_t s, uint64_t len, uint64_t rs, uint64_t re)
{
	return s <= re && s + len - 1 >= rs;
}

/* ---- cases ---- */

/* Every CPU, every RAM range, both crash regions: nothing cut. */
static void t_big_server(void)
{
	struct inputs in;
	struct arm64_load ld;

	make_inputs(&in);
	int r = plan(&in, &ld);
	CHECK_INT(r, 0);
	if (r) {
		free(in.fdt);
		return;
	}
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)ld.hdr;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(ld.hdr + eh->e_phoff);
	int want_cpus = 0;
	for (int c = 0; c < CPU_TOP; c++)
		want_cpus += cpu_has_note(c);
	CHECK_INT(want_cpus, 128);
	/* notes: the CPUs in order, then VMCOREINFO */
	int k = 0, c = 0, notes_ok = 1;
	for (; k < eh->e_phnum && ph[k].p_type == PT_NOTE; k++) {
		if (k == want_cpus)
			continue;	/* VMCOREINFO */
		while (c < CPU_TOP && !cpu_has_note(c))
			c++;
		if (ph[k].p_paddr != note_addr(c) || ph[k].p_memsz != NOTE_SIZE) {
			CHECK(0, "note %d: address %#llx size %llu, want cpu%d's %#llx", k,
			      (unsigned long long)ph[k].p_paddr, (unsigned long long)ph[k].p_memsz, c,
			      (unsigned long long)note_addr(c));
			notes_ok = 0;
			break;
		}
		c++;
	}
	if (notes_ok)
		CHECK(k == want_cpus + 1, "%d PT_NOTEs, want %d CPUs' and VMCOREINFO (the CPUs past a hole "
		      "or past 64 lost?)", k, want_cpus + 1);
	CHECK(k > want_cpus && ph[want_cpus].p_paddr == 0x41234000ull, "VMCOREINFO is not after the CPUs");
	/* loads: the image, then RAM without both crash regions */
	uint64_t total = 0;
	int nload = 0, bad = 0;
	for (int i = k + 1; i < eh->e_phnum; i++) {
		CHECK(ph[i].p_type == PT_LOAD, "phdr %d is not PT_LOAD", i);
		if (overlaps(ph[i].p_paddr, ph[i].p_memsz, LOW_START, LOW_END) ||
		    overlaps(ph[i].p_paddr, ph[i].p_memsz, HIGH_START, HIGH_END))
			bad++;
		total += ph[i].p_memsz;
		nload++;
	}
	CHECK(bad == 0, "%d RAM PT_LOADs hold a crash region (the low one left in?)", bad);
	/* range 2 loses its head to the low region, range 70 its middle */
	CHECK_INT(nload, NRAM + 1);
	CHECK(total == NRAM * RAM_SIZE - (LOW_END + 1 - LOW_START) - (HIGH_END + 1 - HIGH_START),
	      "RAM in the header is %#llx bytes", (unsigned long long)total);
	CHECK_INT(ld.nphdr, eh->e_phnum);
	/* segments and entry in crashk_res, the high region */
	for (int i = 0; i < 5; i++)
		CHECK(in_region(ld.segs[i].mem, ld.segs[i].memsz, HIGH_START, HIGH_END),
		      "segment %d at %#lx is not in the high crash region", i, ld.segs[i].mem);
	CHECK(in_region(ld.entry, 4, HIGH_START, HIGH_END), "entry %#lx outside crashk_res", ld.entry);
	CHECK(ld.flags == (KEXEC_ON_CRASH | KEXEC_ARCH_AARCH64), "flags %#lx without crash hotplug", ld.flags);
	/* the tree: the high region first (the cap), then the low one */
	uint32_t n = 0;
	const uint8_t *u = tree_prop(ld.dtb, "linux,usable-memory-range", &n);
	CHECK(u && n == 32, "linux,usable-memory-range is %u bytes, want two ranges of 2+2 cells", n);
	if (u && n == 32) {
		CHECK(cells64(u) == HIGH_START && cells64(u + 8) == HIGH_END + 1 - HIGH_START,
		      "first usable range %#llx+%#llx, want the high region", (unsigned long long)cells64(u),
		      (unsigned long long)cells64(u + 8));
		CHECK(cells64(u + 16) == LOW_START && cells64(u + 24) == LOW_END + 1 - LOW_START,
		      "second usable range %#llx+%#llx, want the low region", (unsigned long long)cells64(u + 16),
		      (unsigned long long)cells64(u + 24));
	}
	const uint8_t *h = tree_prop(ld.dtb, "linux,elfcorehdr", &n);
	CHECK(h && n == 16 && cells64(h) == ld.segs[3].mem && cells64(h + 8) == ld.segs[3].bufsz,
	      "linux,elfcorehdr does not name the header segment");
	arm64_load_free(&ld);
	free(in.fdt);
}

/* With one crash region there is no second usable range. */
static void t_one_region(void)
{
	struct inputs in;
	struct arm64_load ld;

	write_iomem(0, 1, 0);
	make_inputs(&in);
	int r = plan(&in, &ld);
	CHECK_INT(r, 0);
	if (!r) {
		uint32_t n = 0;
		const uint8_t *u = tree_prop(ld.dtb, "linux,usable-memory-range", &n);
		CHECK(u && n == 16 && cells64(u) == HIGH_START, "usable range: %u bytes", n);
		arm64_load_free(&ld);
	}
	free(in.fdt);
	write_iomem(0, 2, 0);
}

/* A kernel that rewrites headers on hotplug is asked to, and is given
 * the room it says it needs. */
static void t_hotplug_optin(void)
{
	struct inputs in;
	struct arm64_load ld;

	put_file("/sys/devices/system/memory/crash_hotplug", "0\n");
	put_file("/sys/kernel/crash_elfcorehdr_size", "917560\n");
	make_inputs(&in);
	int r = plan(&in, &ld);
	CHECK_INT(r, 0);
	if (!r) {
		CHECK((ld.flags & KEXEC_CRASH_HOTPLUG_SUPPORT) && (ld.flags & KEXEC_UPDATE_ELFCOREHDR),
		      "flags %#lx do not ask for hotplug updates", ld.flags);
		CHECK(ld.segs[3].memsz >= 917560 && ld.segs[3].memsz % 4096 == 0,
		      "header segment %zu bytes, the kernel asks for 917560", ld.segs[3].memsz);
		uint32_t n = 0;
		const uint8_t *h = tree_prop(ld.dtb, "linux,elfcorehdr", &n);
		CHECK(h && n == 16 && cells64(h + 8) == ld.segs[3].memsz,
		      "linux,elfcorehdr does not keep the whole room for the crash kernel");
		CHECK(ld.segs[4].mem >= ld.segs[3].mem + ld.segs[3].memsz, "purgatory inside the header's room");
		arm64_load_free(&ld);
	}
	free(in.fdt);
	rm_file("/sys/devices/system/memory/crash_hotplug");
	rm_file("/sys/kernel/crash_elfcorehdr_size");
}

/* Real limits fail loudly: a region the kernel cannot have, and more
 * program headers than ELF counts. */
static void t_limits(void)
{
	struct inputs in;
	struct arm64_load ld;

	make_inputs(&in);
	write_iomem(0, 3, 0);
	CHECK_INT(plan(&in, &ld), -E2BIG);
	write_iomem(65600, 2, 0);
	CHECK_INT(plan(&in, &ld), -E2BIG);
	/* just under: 130 notes and loads that fit */
	write_iomem(65534 - 2 - 128 - (NRAM + 1), 2, 0);
	int r = plan(&in, &ld);
	CHECK_INT(r, 0);
	if (!r) {
		CHECK_INT(ld.nphdr, 65534);
		arm64_load_free(&ld);
	}
	write_iomem(0, 2, 0);
	free(in.fdt);
}

/* The record: what the header was built from, and whether it still is. */
static void t_record(void)
{
	struct armed_state s, back;
	struct armed_header h;

	memset(&s, 0, sizeof s);
	snprintf(s.release, sizeof s.release, "6.1.0-50-arm64");
	snprintf(s.kernel, sizeof s.kernel, "/vmlinuz");
	snprintf(s.initramfs, sizeof s.initramfs, "/crash.img");
	snprintf(s.header, sizeof s.header, "own");
	CHECK_INT(armed_take_print(root, &s), 0);
	CHECK(s.have_print && s.print.cpus == 128 && s.print.ram_ranges == NRAM,
	      "fingerprint: %u CPUs, %u RAM ranges", s.print.cpus, s.print.ram_ranges);
	CHECK(s.hotplug_cpu == -1 && s.hotplug_mem == -1, "crash_hotplug read as %d/%d where there is none",
	      s.hotplug_cpu, s.hotplug_mem);
	CHECK_INT(armed_write(root, &s), 0);
	CHECK_INT(armed_read(root, &back), 0);
	CHECK(back.have_print && !memcmp(&back.print, &s.print, sizeof s.print) && !strcmp(back.header, "own") &&
	      back.hotplug_mem == -1, "the fingerprint did not survive the record");
	CHECK_INT(armed_header_current(root, &back, &h), 1);
	char now[400];
	armed_header_say(&back, &h, 1, now, sizeof now);
	CHECK_STR(now, "crash header: current (128 CPUs, 80 RAM ranges, built by own)");

	/* memory hot-added: stale, unless the kernel updates the header */
	write_iomem(1, 2, 0);
	CHECK_INT(armed_header_current(root, &back, &h), 0);
	CHECK(h.ram_changed && !h.cpus_changed && h.now.ram_ranges == NRAM + 1 && h.then.ram_ranges == NRAM,
	      "ram_changed %d cpus_changed %d, %u -> %u ranges", h.ram_changed, h.cpus_changed,
	      h.then.ram_ranges, h.now.ram_ranges);
	char line[400];
	armed_header_say(&back, &h, 0, line, sizeof line);
	CHECK(strstr(line, "crash header: stale: RAM changed") && strstr(line, "RAM ranges 80 -> 81") &&
	      strstr(line, "arm again"), "status line: %s", line);
	back.hotplug_mem = 1;
	CHECK_INT(armed_header_current(root, &back, &h), 1);
	CHECK(h.kernel_updated, "a change the kernel handles is not said");
	armed_header_say(&back, &h, 1, line, sizeof line);
	CHECK(strstr(line, "current: the kernel updated it"), "status line: %s", line);
	back.hotplug_mem = -1;
	write_iomem(0, 2, 0);

	/* a CPU's notes gone (hot-removed): stale */
	rm_file("/sys/devices/system/cpu/cpu7/crash_notes");
	CHECK_INT(armed_header_current(root, &back, &h), 0);
	CHECK(h.cpus_changed && h.now.cpus == 127, "cpus_changed %d, %u CPUs now", h.cpus_changed, h.now.cpus);
	put_file("/sys/devices/system/cpu/cpu7/crash_notes", "4100070000\n");
	CHECK_INT(armed_header_current(root, &back, &h), 1);

	/* CPUs going offline change nothing: their notes stay */
	put_file("/sys/devices/system/cpu/cpu8/online", "0\n");
	CHECK_INT(armed_header_current(root, &back, &h), 1);

	/* /proc/iomem as a non-root reader sees it: cannot tell */
	write_iomem(0, 2, 1);
	CHECK_INT(armed_header_current(root, &back, &h), -EACCES);
	write_iomem(0, 2, 0);

	/* a record from before the fingerprint */
	back.have_print = 0;
	CHECK_INT(armed_header_current(root, &back, &h), -ENODATA);
	armed_remove(root);
}

int main(void)
{
	make_root();
	if (!root[0]) {
		printf("FAIL arm64hdr.setup: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	RUN(t_big_server);
	RUN(t_one_region);
	RUN(t_hotplug_optin);
	RUN(t_limits);
	RUN(t_record);
	rm_root();
	return check_done();
}
