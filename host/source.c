/* The dump source: a claimed device or capture file opened read-only, its
 * dump loaded, and the `info` text about it. Each failure to open is
 * printed here, once; callers only choose what to do next. */
#include "source.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../config/config.h"
#include "../config/firmware.h"
#include "../config/target.h"
#include "../dump/chain.h"
#include "../dump/dumpfile.h"
#include "json.h"
#include "keys.h"
#include "../kernel/vmcoreinfo.h"
#include "../lib/exitcode.h"
#include "../lib/log.h"
#include "../lib/util.h"

/* SOURCE may name a device by selector, as kdumpinit.dev= does. */
static const char *resolve_source(const char *src, char *buf, size_t sz)
{
	struct selector sel;
	char bad[80];
	const struct sysroot root = { "/sys", "/dev" };

	if (src[0] == '/' || !strchr(src, '=') || selectors_parse(src, &sel, 1, bad, sizeof bad) != 1)
		return src;
	if (selector_find(&root, &sel, buf, sz) < 0) {
		err("no device matches %s", src);
		return NULL;
	}
	return buf;
}

/* The dump `which` of t's device (0: the next to save) into d, placed
 * among the others; dumpfile_load's result. */
static int load_chosen(const struct target *t, unsigned which, const uint8_t *sk,
		       unsigned how, struct dumpfile *d)
{
	struct chain c;

	if (chain_walk(t->fd, t->base, t->limit, &c) < 0 || !c.n)
		return which > 1 ? -ENOENT : dumpfile_load_how(d, t->fd, t->base, t->limit, sk, how);
	unsigned i = c.n - 1;
	if (which) {
		if (which > c.n)
			return -ENOENT;
		i = which - 1;
	} else {
		for (unsigned j = 0; j < c.n; j++)
			if (!chain_saved(&c, j, t->sb.saved_dump_id)) {
				i = j;
				break;
			}
	}
	/* A dump ends where the next one starts: the stale tail of a
	 * longer dump from an earlier round may lie past it. */
	int r = dumpfile_load_how(d, t->fd, c.d[i].at, i + 1 < c.n ? c.d[i + 1].at : t->limit,
				  sk, how);
	d->position = i + 1;
	d->ndumps = c.n;
	d->saved = chain_saved(&c, i, t->sb.saved_dump_id);
	return r;
}

int open_dump(const char *src, const uint8_t *sk, unsigned how, struct target *t,
	      struct dumpfile *d, int *code)
{
	return open_dump_nth(src, 0, sk, how, t, d, code);
}

int dump_locked(const char *src, const struct dumpfile *d, const uint8_t *sk)
{
	char want[17], have[17];

	/* A key given for a dump in the clear: said, in case the dump is not
	 * the one expected (anyone who can write the device can write one). */
	if (sk && !d->sealed && d->vmcoreinfo) {
		warn("%s: this dump is not sealed (written in the clear): the key was not needed, "
		     "and nothing in it is authenticated", src);
		return EXIT_OK;
	}
	if (!d->locked)
		return EXIT_OK;
	key_id_hex(d->seal.key_id, want);
	if (!sk)
		err("%s: the dump is sealed to key %s: its memory needs the secret key (--key FILE); "
		    "`save --dir` without one moves it off the device still sealed", src, want);
	else {
		key_id_of_secret(sk, have);
		err("%s: the dump is sealed to key %s, and the key given is %s: not its key (or "
		    "the dump's SEAL record was changed)", src, want, have);
	}
	return EXIT_USAGE;
}

int open_dump_nth(const char *src, unsigned which, const uint8_t *sk, unsigned how,
		  struct target *t, struct dumpfile *d, int *code)
{
	enum target_refusal why;
	char m[400], dev[300];

	memset(t, 0, sizeof *t);
	t->fd = -1;
	memset(d, 0, sizeof *d);
	src = resolve_source(src, dev, sizeof dev);
	if (!src) {
		*code = EXIT_TARGET;
		return -ENODEV;
	}
	int r = source_open(t, src, &why, m, sizeof m);

	if (r == -ENOENT && why != TGT_OK) {
		err("%s", m);
		*code = EXIT_TARGET;
		return r;
	}
	if (r < 0) {
		err("cannot open %s: %s", src, errstr(r));
		*code = r == -ENOENT ? EXIT_TARGET : EXIT_SYSTEM;
		return r;
	}
	r = load_chosen(t, which, sk, how, d);
	if (r == -ENOENT && which > 1) {
		err("%s holds no dump %u", src, which);
		target_close(t);
		*code = EXIT_TARGET;
		return r;
	}
	if (r == -ENOMEM) {
		err("out of memory reading %s", src);
		*code = EXIT_SYSTEM;
	} else if (r < 0 && r != -ENOENT) {
		*code = EXIT_INCOMPLETE;	/* not said here: see source.h */
	}
	return r;
}

void dump_unreadable(const struct target *t, const struct dumpfile *d, int r)
{
	err("%s: the dump's header is unreadable (%s)", t->path, d->why[0] ? d->why : errstr(r));
}

/* The SETTINGS chunk as the capture wrote it: read from the device, so
 * only printable bytes go out, on one line. */
static void print_settings(FILE *f, const char *text)
{
	fprintf(f, "%-12s ", "settings");
	for (const char *p = text; *p && p - text < 1024; p++)
		fputc(*p >= 0x20 && *p < 0x7f ? *p : '?', f);
	fputc('\n', f);
}

/* The STEPS chunk: the optional steps' lines as the capture said them,
 * each on its own line under "steps"; from the device, so printable
 * bytes only, and at most a few lines. */
static void print_steps(FILE *f, const struct dumpfile *d)
{
	const struct kdi_steps *s = &d->steps;
	const char *p = d->steps_text;
	int lines = 0;

	fprintf(f, "%-12s attempt %u%s%s%s\n", "steps", s->attempt,
		s->flags & KDI_STEPS_NONE ? ", none run (a second attempt after a stall)" : "",
		s->flags & KDI_STEPS_DROPPED ? ", one dropped (failed or past its budget)" : "",
		s->flags & KDI_STEPS_EARLY ? ", the debugger's pages first" : "");
	while (p && *p && lines < 8) {
		fprintf(f, "%-12s ", "");
		for (; *p && *p != '\n'; p++)
			fputc(*p >= 0x20 && *p < 0x7f ? *p : '?', f);
		fputc('\n', f);
		if (*p)
			p++;
		lines++;
	}
}

static void print_time(FILE *f, const char *label, uint64_t t)
{
	char b[64];
	time_t tt = (time_t)t;
	struct tm tm;

	if (t && gmtime_r(&tt, &tm) && strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S UTC", &tm))
		fprintf(f, "%-12s %s\n", label, b);
	else
		fprintf(f, "%-12s unknown\n", label);
}

/* Why END says the dump is incomplete: the reasons its status names,
 * joined by "; ". */
static const char *end_reasons(uint32_t status, char *buf, size_t sz)
{
	static const struct { uint32_t bit; const char *text; } reasons[] = {
		{ KDI_ST_DEVICE_FULL, "device was full" },
		{ KDI_ST_READ_ERRORS, "unreadable pages" },
		{ KDI_ST_INPUT_TRUNCATED, "vmcore was truncated" },
		{ KDI_ST_ABORTED, "capture aborted" },
		{ KDI_ST_WRITE_ERRORS, "write errors" },
	};
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(reasons); i++)
		if ((status & reasons[i].bit) && n < sz)
			n += snprintf(buf + n, sz - n, "%s%s", n ? "; " : "", reasons[i].text);
	if (!buf[0])
		snprintf(buf, sz, "marked incomplete at capture");
	return buf;
}

/* What the parts lost were lost to: write errors the capture went
 * around (GAP), bytes that cannot be read now, chunks damaged since. */
static const char *lost_to(const struct dumpfile *d, char *buf, size_t sz)
{
	uint32_t w = d->gaps - d->read_gaps - d->damaged;
	const char *k[3] = { w ? "write errors" : NULL, d->read_gaps ? "read errors" : NULL,
			     d->damaged ? "damage" : NULL };
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0, c = 0; i < 3; i++)
		if (k[i] && n < sz)
			n += snprintf(buf + n, sz - n, "%s%s", c++ ? " and " : "", k[i]);
	return buf;
}

/* One line per part lost: its chunks, where, and the pfns that lie
 * between the pages read on either side (what it held is among them). */
static void print_holes(FILE *f, const struct dumpfile *d)
{
	static const char *const how[] = { "lost", "lost to a write error", "unreadable",
					   "damaged" };
	for (uint32_t i = 0; i < d->nholes; i++) {
		const struct dump_hole *h = &d->holes[i];
		char pf[120] = "";
		if (h->block > 0 && h->block < d->nblocks) {
			const struct page_block *a = &d->blocks[h->block - 1], *b = &d->blocks[h->block];
			if (b->pfn > a->pfn + a->count)
				snprintf(pf, sizeof pf, ": pfns %#llx-%#llx not read",
					 (unsigned long long)(a->pfn + a->count),
					 (unsigned long long)(b->pfn - 1));
		}
		char sz[32];
		if (h->bytes < 1048576)
			snprintf(sz, sizeof sz, "%.1f KiB", h->bytes / 1024.0);
		else
			snprintf(sz, sizeof sz, "%.1f MiB", h->bytes / 1048576.0);
		if (h->seq_to == h->seq_from)
			fprintf(f, "%-12s %s of bytes not of this dump before chunk %llu, at offset "
				"%llu: no chunk lost\n", i ? "" : "lost", sz,
				(unsigned long long)h->seq_to, (unsigned long long)h->at);
		else if (h->seq_to - h->seq_from == 1)
			fprintf(f, "%-12s chunk %llu %s (%s at offset %llu)%s\n", i ? "" : "lost",
				(unsigned long long)h->seq_from, how[h->kind & 3], sz,
				(unsigned long long)h->at, pf);
		else
			fprintf(f, "%-12s chunks %llu-%llu %s (%s at offset %llu)%s\n",
				i ? "" : "lost", (unsigned long long)h->seq_from,
				(unsigned long long)h->seq_to - 1, how[h->kind & 3], sz,
				(unsigned long long)h->at, pf);
	}
	if (d->nholes < d->gaps)
		fprintf(f, "%-12s and %u more parts\n", "", d->gaps - d->nholes);
	if (d->have_end && d->end.pages_stored > d->pages_stored)
		fprintf(f, "%-12s %llu pages lost (END counts %llu stored, %llu read)\n", "",
			(unsigned long long)(d->end.pages_stored - d->pages_stored),
			(unsigned long long)d->end.pages_stored, (unsigned long long)d->pages_stored);
}

const char *dump_incomplete_why(const struct dumpfile *d, char *buf, size_t sz)
{
	if (d->why[0])
		snprintf(buf, sz, "%s", d->why);
	else if (d->gaps) {
		char k[64];
		snprintf(buf, sz, "%u part%s lost to %s, %.1f MiB", d->gaps, d->gaps == 1 ? "" : "s",
			 lost_to(d, k, sizeof k), d->gap_bytes / 1048576.0);
	}
	else if (!d->have_end)
		snprintf(buf, sz, "no END record");
	else
		end_reasons(d->end.status, buf, sz);
	return buf;
}

int dump_saved(const struct target *t, const struct dumpfile *d)
{
	if (d->ndumps)
		return d->saved;
	return t->sb.saved_dump_id && t->sb.saved_dump_id == d->dump_id;
}

/* How far a dump cut short got: whether the debugger's pages (the EARLY
 * pass, what crash and drgn need to open it) are whole, then how much of
 * the memory each pass after it covered. */
static void print_progress(FILE *f, const struct dumpfile *d)
{
	struct dump_progress p;
	char line[300];
	size_t n = 0;

	dumpfile_progress(d, &p);
	line[0] = 0;
	/* With a startup tier (format versions 8 and 9) it is what says
	 * whether crash and drgn open the dump; the rest of the EARLY pass
	 * is what their other commands read. */
	if (p.startup == 0)
		n += snprintf(line + n, sizeof line - n, "the debugger's startup pages: cut short: "
			      "crash and drgn may not open it");
	else if (p.startup == 1 && p.early == 1)
		n += snprintf(line + n, sizeof line - n, "the debugger's startup pages: complete; "
			      "its other pages: complete");
	else if (p.startup == 1)
		n += snprintf(line + n, sizeof line - n, "the debugger's startup pages: complete; "
			      "its other pages: cut short (up to pfn %#llx)",
			      (unsigned long long)p.early_last);
	else if (p.early == 1)
		n += snprintf(line + n, sizeof line - n, "the debugger's pages: complete");
	else if (p.early == 0 && d->have_dbg)
		n += snprintf(line + n, sizeof line - n,
			      "the debugger's pages: cut short (up to pfn %#llx of %#llx): crash and "
			      "drgn may not open it", (unsigned long long)p.early_last,
			      (unsigned long long)d->dbg.last_pfn);
	else if (p.early == 0)
		n += snprintf(line + n, sizeof line - n, "the debugger's pages: cut short");
	const char *sep = n ? "; " : "";
	/* The LATER pass holds the memory map's pages too (format version
	 * 4), and at level 31 nothing else. */
	int l31 = (d->start.dump_level & 30) == 30;
	int mm = (d->start.flags & KDI_START_MEMMAP_EXCLUDED) != 0;
	if (p.later_pct >= 0)
		n += snprintf(line + n, sizeof line - n, "%s%s: complete; %s: %d %% of the memory", sep,
			      l31 ? "the rest" : "the kernel's pages",
			      l31 ? "the memory map's pages" : mm ? "the rest and the memory map's pages" :
			      "the rest", p.later_pct);
	else if (p.first_pct >= 0)
		/* Below level 31 (some of bits 2-16 clear) the kernel's pages
		 * go first and the rest in a LATER pass. */
		n += snprintf(line + n, sizeof line - n, "%s%s: %d %% of the memory", sep,
			      (d->start.dump_level & 30) != 30 ? "the kernel's pages" :
			      p.early >= 0 ? "the rest" : "pages", p.first_pct);
	else if (p.early == 1)
		n += snprintf(line + n, sizeof line - n, "%sthe rest: not reached", sep);
	if (line[0])
		fprintf(f, "%-12s %s\n", "written", line);
}

/* What the key's holder can say of a sealed dump. From version 6 every
 * chunk is sealed or tagged (dump/format.h), so a stream that reads to
 * its END with nothing lost is authenticated as a whole; a version 5
 * dump's PAD and GAP records carry no tag. */
static void sealed_how(const struct dumpfile *d, int complete, char *out, size_t n)
{
	if (d->locked) {
		snprintf(out, n, "%s", d->wrong_key ? "the key given is not its key" :
			 "no key given (--key FILE)");
	} else if (!kdi_version_auth_all(d->start.format_version)) {
		snprintf(out, n, "opened, every sealed chunk's tag checked (format version %u: its "
			 "PAD and GAP records carry no tag)", d->start.format_version);
	} else if (complete) {
		snprintf(out, n, "opened; complete, authenticated (every chunk's tag checked)");
	} else {
		/* The chunks before the first one lost, or all that were read. */
		uint64_t upto = d->nholes ? d->holes[0].seq_from : d->nr_chunks;
		if (upto)
			snprintf(out, n, "opened; incomplete: authenticated up to chunk %llu%s",
				 (unsigned long long)upto - 1,
				 d->nholes ? ", then past what is lost (above)" : "");
		else
			snprintf(out, n, "opened; incomplete: nothing authenticated from chunk 0");
	}
}

/* What `info` prints, also written as info.txt by save --dir. r is what
 * open_dump returned. Returns the exit code info uses. */
/* The dump's state, as info says it to a reader and in JSON alike:
 * DS_EMPTY, DS_COMPLETE, or DS_INCOMPLETE with why. */
enum dump_state { DS_EMPTY, DS_COMPLETE, DS_INCOMPLETE };

static enum dump_state state_of(const struct dumpfile *d, int r, char *why, size_t sz)
{
	char w[160];

	why[0] = 0;
	if (r == -ENOENT)
		return DS_EMPTY;
	if (r < 0)
		snprintf(why, sz, "%s", d->why[0] ? d->why : errstr(r));
	else if (dumpfile_complete(d))
		return DS_COMPLETE;
	else if (d->have_end && d->gaps && !d->end_disagrees)
		snprintf(why, sz, "%s", dump_incomplete_why(d, w, sizeof w));
	else if (d->have_end)
		snprintf(why, sz, "%s", end_reasons(d->end.status, w, sizeof w));
	else if (d->end_disagrees)
		snprintf(why, sz, "the END record does not match the stream: %s", d->why);
	else
		snprintf(why, sz, "no END record: %s", d->why[0] ? d->why : "stream ends without one");
	return DS_INCOMPLETE;
}

int dump_report(FILE *f, const char *src, const struct target *t, const struct dumpfile *d, int r)
{
	char u[37], why[320];

	uuid_format(t->sb.uuid, u);
	fprintf(f, "%-12s %s\n", "source", src);
	/* The claim a dump was written under is START's, which SEAL's tag
	 * vouches for once the key opened it. A sealed copy (save --dir
	 * without the key) is a claimed file of its own: its claim says
	 * nothing of where the dump was taken. */
	if (d->sealed && !d->locked && memcmp(d->start.sb_uuid, t->sb.uuid, 16)) {
		char w[37];
		uuid_format(d->start.sb_uuid, w);
		fprintf(f, "%-12s %s (the dump's, authenticated); this file's: %s", "claim", w, u);
	} else {
		fprintf(f, "%-12s %s", "claim", u);
	}
	fprintf(f, "%s%s%s\n", t->sb.label[0] ? " (label " : "", t->sb.label, t->sb.label[0] ? ")" : "");
	fprintf(f, "%-12s %.1f MiB\n", "capacity", (t->limit - t->base) / 1048576.0);
	if (d->ndumps > 1)
		fprintf(f, "%-12s %u of %u on the device, oldest first\n", "dump", d->position,
			d->ndumps);
	enum dump_state ds = state_of(d, r, why, sizeof why);
	if (ds == DS_EMPTY) {
		fprintf(f, "%-12s empty\n", "state");
		return EXIT_TARGET;
	}
	if (r < 0) {
		fprintf(f, "%-12s incomplete (%s)\n", "state", why);
		return EXIT_INCOMPLETE;
	}
	int complete = ds == DS_COMPLETE;
	const char *saved = dump_saved(t, d) ? ", saved" : ", not saved yet";
	if (complete)
		fprintf(f, "%-12s complete%s\n", "state", saved);
	else
		fprintf(f, "%-12s incomplete (%s)%s\n", "state", why, saved);
	if (!complete)
		print_progress(f, d);
	if (d->gaps) {
		char k[64];
		fprintf(f, "%-12s %u region%s lost to %s (%.1f MiB, %llu chunks); the first: %s\n",
			"gaps", d->gaps, d->gaps == 1 ? "" : "s",
			lost_to(d, k, sizeof k), d->gap_bytes / 1048576.0,
			(unsigned long long)d->gap_chunks, d->gap_why);
		print_holes(f, d);
	}
	if (dump_saved(t, d))
		print_time(f, "saved at", t->sb.saved_time);
	if (d->sealed) {
		char id[17], how[160];
		key_id_hex(d->seal.key_id, id);
		sealed_how(d, complete, how, sizeof how);
		fprintf(f, "%-12s to key %s (X25519, %s): %s\n", "sealed", id,
			d->seal.scheme == KDI_SEAL_AEGIS256 ? "AEGIS-256" : "XChaCha20-Poly1305", how);
	}
	if (d->locked) {
		/* What is in the clear: SEAL, START, and END (its tag unchecked). */
		fprintf(f, "%-12s %s\n", "kernel", d->seal.release[0] ? d->seal.release : "unknown");
		print_time(f, "captured", d->start.start_time);
		fprintf(f, "%-12s %u\n", "dump level", d->start.dump_level);
		fprintf(f, "%-12s %u bytes\n", "page size", d->start.page_size);
		fprintf(f, "%-12s %llu chunks sealed (%.1f MiB of pages)\n", "content",
			(unsigned long long)d->sealed_chunks, d->sealed_pages_bytes / 1048576.0);
		if (d->have_end) {
			fprintf(f, "%-12s %llu of %llu pages scanned (END, not verified without the key)\n",
				"pages kept", (unsigned long long)d->end.pages_stored,
				(unsigned long long)d->end.pages_total);
			fprintf(f, "%-12s %.1f MiB on the device\n", "dump size", d->end.bytes_out / 1048576.0);
		} else {
			fprintf(f, "%-12s %.1f MiB on the device (intact part)\n", "dump size",
				(d->stream_end - d->base) / 1048576.0);
		}
		return complete ? EXIT_OK : EXIT_INCOMPLETE;
	}
	struct vmcoreinfo vi;
	vmcoreinfo_parse(&vi, d->vmcoreinfo);
	if (vi.have_osrelease)
		fprintf(f, "%-12s %s\n", "kernel", vi.osrelease);
	else
		fprintf(f, "%-12s unknown\n", "kernel");
	print_time(f, "crash time", vi_has(&vi, VI_CRASHTIME) ? vi_u(&vi, VI_CRASHTIME) : 0);
	print_time(f, "captured", d->start.start_time);
	if (d->start_lost && d->start.dump_level)
		fprintf(f, "%-12s %u or more (START lost: the classes END counts left out)\n",
			"dump level", d->start.dump_level);
	else if (d->start_lost)
		fprintf(f, "%-12s unknown (START lost)\n", "dump level");
	else
		fprintf(f, "%-12s %u\n", "dump level", d->start.dump_level);
	/* kdumpinit.memmap: what a reader finds of the struct pages. */
	fprintf(f, "%-12s %s\n", "memory map", d->start.flags & KDI_START_MEMMAP_EXCLUDED ?
		"the struct pages of pages left out are left out where a whole page of them is" :
		"whole");
	fprintf(f, "%-12s %u bytes\n", "page size", d->start.page_size);
	uint64_t mem = 0;
	for (uint32_t i = 0; i < d->nr_seg; i++)
		mem += d->seg[i].filesz;
	fprintf(f, "%-12s %.1f MiB in %u segments\n", "memory", mem / 1048576.0, d->nr_seg);
	fprintf(f, "%-12s %llu (%.1f MiB uncompressed, %.1f MiB stored)\n", "pages kept",
		(unsigned long long)d->pages_stored,
		(double)d->pages_stored * d->start.page_size / 1048576.0, d->bytes_stored / 1048576.0);
	fprintf(f, "%-12s %s\n", "kernel log", d->dmesg ? "yes" : "no");
	if (d->settings)
		print_settings(f, d->settings);
	if (d->have_steps)
		print_steps(f, d);
	if (d->have_end) {
		/* Like makedumpfile's --mem-usage table: pages per class. */
		const struct kdi_end *e = &d->end;
		fprintf(f, "%-12s %llu pages scanned\n", "scanned", (unsigned long long)e->pages_total);
		int first = 1;
		for (int c = 0; c < KDI_EX_NCLASSES; c++)
			if (e->excluded[c]) {
				fprintf(f, "%-12s %-14s %10llu pages\n", first ? "excluded" : "",
					kdi_class_name[c], (unsigned long long)e->excluded[c]);
				first = 0;
			}
		if (first)
			fprintf(f, "%-12s none\n", "excluded");
		fprintf(f, "%-12s %.1f MiB on the device\n", "dump size", e->bytes_out / 1048576.0);
	} else {
		fprintf(f, "%-12s %.1f MiB on the device (intact part)\n", "dump size",
			(d->stream_end - d->base) / 1048576.0);
	}
	return complete ? EXIT_OK : EXIT_INCOMPLETE;
}

/* A time as JSON: seconds since the epoch, or null when unknown (0). */
static void json_time(struct json *j, const char *key, uint64_t t)
{
	if (t)
		json_u64(j, key, t);
	else
		json_null(j, key);
}

void dump_json_head(struct json *j, const char *src, const struct target *t)
{
	char u[37];

	uuid_format(t->sb.uuid, u);
	json_str(j, "schema", "kdumpinit-info/1");
	json_str(j, "source", src);
	json_str(j, "claim", u);
	json_str(j, "label", t->sb.label[0] ? t->sb.label : NULL);
	json_u64(j, "capacity_bytes", t->limit - t->base);
}

int dump_report_json(struct json *j, const struct target *t, const struct dumpfile *d, int r)
{
	char why[320], id[17];
	enum dump_state ds = state_of(d, r, why, sizeof why);

	json_obj(j, NULL);
	json_u64(j, "number", d->position ? d->position : 1);
	json_u64(j, "of", d->ndumps ? d->ndumps : 1);
	json_str(j, "state", ds == DS_EMPTY ? "empty" : ds == DS_COMPLETE ? "complete" : "incomplete");
	json_str(j, "why", ds == DS_INCOMPLETE ? why : NULL);
	if (ds == DS_EMPTY || r < 0) {
		json_end(j, '}');
		return ds == DS_EMPTY ? EXIT_TARGET : EXIT_INCOMPLETE;
	}
	int saved = dump_saved(t, d);
	json_bool(j, "saved", saved);
	json_time(j, "saved_at", saved ? t->sb.saved_time : 0);
	json_bool(j, "sealed", d->sealed);
	json_bool(j, "locked", d->locked);
	if (d->sealed) {
		key_id_hex(d->seal.key_id, id);
		json_str(j, "key_id", id);
	} else {
		json_null(j, "key_id");
	}
	json_u64(j, "gaps", d->gaps);
	json_u64(j, "gap_bytes", d->gap_bytes);
	json_u64(j, "page_size", d->start.page_size);
	json_time(j, "captured", d->start.start_time);
	if (d->locked) {
		json_str(j, "kernel", d->seal.release[0] ? d->seal.release : NULL);
		json_u64(j, "dump_level", d->start.dump_level);
		json_u64(j, "sealed_chunks", d->sealed_chunks);
		json_u64(j, "sealed_page_bytes", d->sealed_pages_bytes);
	} else {
		struct vmcoreinfo vi;
		vmcoreinfo_parse(&vi, d->vmcoreinfo);
		json_str(j, "kernel", vi.have_osrelease ? vi.osrelease : NULL);
		json_time(j, "crash_time", vi_has(&vi, VI_CRASHTIME) ? vi_u(&vi, VI_CRASHTIME) : 0);
		if (d->start_lost && !d->start.dump_level)
			json_null(j, "dump_level");
		else
			json_u64(j, "dump_level", d->start.dump_level);
		json_bool(j, "memmap_excluded", !!(d->start.flags & KDI_START_MEMMAP_EXCLUDED));
		uint64_t mem = 0;
		for (uint32_t i = 0; i < d->nr_seg; i++)
			mem += d->seg[i].filesz;
		json_u64(j, "memory_bytes", mem);
		json_u64(j, "segments", d->nr_seg);
		json_u64(j, "pages_kept", d->pages_stored);
		json_u64(j, "bytes_stored", d->bytes_stored);
		json_bool(j, "kernel_log", d->dmesg != NULL);
	}
	if (d->have_end) {
		const struct kdi_end *e = &d->end;
		json_u64(j, "pages_scanned", e->pages_total);
		json_obj(j, "excluded");
		for (int c = 0; c < KDI_EX_NCLASSES; c++)
			if (e->excluded[c])
				json_u64(j, kdi_class_name[c], e->excluded[c]);
		json_end(j, '}');
		json_u64(j, "dump_bytes", e->bytes_out);
	} else {
		json_null(j, "pages_scanned");
		json_null(j, "excluded");
		json_u64(j, "dump_bytes", d->stream_end - d->base);
	}
	json_end(j, '}');
	return ds == DS_COMPLETE ? EXIT_OK : EXIT_INCOMPLETE;
}

const char *firmware_device(const char *root, char *buf, size_t sz)
{
	struct config cfg;

	config_defaults(&cfg);
	config_load_firmware(&cfg, root, FW_SRC_ALL);
	for (int i = 0; i < cfg.nwarn; i++)
		warn("%s", cfg.warn[i]);
	if (cfg.src[CFG_DEV] == CFG_SRC_DEFAULT || !cfg.dev[0])
		return NULL;
	snprintf(buf, sz, "%s", cfg.dev);
	return config_src_name(cfg.src[CFG_DEV]);
}
