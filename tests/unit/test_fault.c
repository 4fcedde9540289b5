/* Unit tests for the capture pipeline's read faults (capture/pipeline.c):
 * the vmcore file is cut short after it was opened, so the mmap window
 * reaches past its end and touching those pages raises SIGBUS, as a bad
 * page of /proc/vmcore does. The capture must survive, retry the page
 * with pread, count the pages it cannot read, keep every page before the
 * cut, and write the same dump whether it read through mmap or pread and
 * with one thread or two. */
#define CHECK_PREFIX "fault"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "../../dump/dumpfile.h"
#include "../../capture/pipeline.h"
#include "../../kernel/vmcore.h"

#define PS 4096u
#define NPAGES 600u		/* more than two 256-page blocks */
#define CUT 300u		/* pages left after the cut: mid-block */
#define BASE 4096u

static char dir[] = "/tmp/kdi-fault-XXXXXX";
static char vpath[200];

/* Every page distinct and compressible; every 7th page all zero. */
static void page_of(uint32_t pfn, uint8_t *p)
{
	memset(p, 0, PS);
	if (pfn % 7 == 3)
		return;
	for (uint32_t i = 0; i < PS; i += 8) {
		uint64_t v = (uint64_t)pfn << 32 | (i / 64);
		memcpy(p + i, &v, 8);
	}
}

static int make_input(void)
{
	uint8_t page[PS];
	int fd = open(vpath, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	for (uint32_t pfn = 0; pfn < NPAGES; pfn++) {
		page_of(pfn, page);
		if (pwrite(fd, page, PS, (off_t)pfn * PS) != PS) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* A vmcore by hand: one segment of NPAGES at file offset 0 (the pipeline
 * reads only these fields), then the file cut to CUT pages, as a device
 * that goes bad under a running capture. */
static int capture(int threads, int no_mmap, const char *out, struct capture_result *res)
{
	struct kdi_segment seg = { .paddr = 0, .vaddr = 0, .memsz = NPAGES * PS,
				   .filesz = NPAGES * PS };
	uint64_t seg_off = 0;
	static char vi[] = "OSRELEASE=6.1.0-unit\nPAGESIZE=4096\n";
	struct vmcore vc = { .file_size = NPAGES * PS, .e_machine = 62, .page_size = PS,
			     .seg = &seg, .seg_offset = &seg_off, .nr_seg = 1,
			     .vmcoreinfo = vi, .vmcoreinfo_len = sizeof vi - 1 };
	const struct capture_req rq = { .level = 1, .threads = threads, .window = 1u << 20,
					.read_mode = no_mmap ? READ_PREAD : READ_MMAP };
	const struct capture_plan pl = { .threads = threads, .window = 1u << 20, .pread = no_mmap };
	struct capture_in in = { .base = BASE, .limit = 1ull << 40, .no_direct = 1 };

	vc.fd = make_input();
	if (vc.fd < 0 || ftruncate(vc.fd, (off_t)CUT * PS) < 0)
		return -errno;
	int ofd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (ofd < 0)
		return -errno;
	in.fd = ofd;
	int r = capture_dump(&vc, &rq, &pl, &in, NULL, res);
	close(ofd);
	close(vc.fd);
	return r;
}

static void check_dump(const char *out, const char *what)
{
	struct dumpfile d;
	struct dump_cursor c;
	uint8_t want[PS], got[PS];
	int fd = open(out, O_RDONLY);
	int bad = 0;

	CHECK(fd >= 0, "%s: open %s", what, out);
	if (fd < 0)
		return;
	CHECK_INT(dumpfile_load(&d, fd, BASE, 1ull << 40), 0);
	cursor_init(&c, &d);
	for (uint32_t pfn = 0; pfn < NPAGES && !bad; pfn++) {
		int r = dumpfile_page(&c, pfn, got);
		page_of(pfn, want);
		if (pfn >= CUT || pfn % 7 == 3) {
			if (r != -ENOENT) {
				CHECK(0, "%s: pfn %u read %d, want -ENOENT", what, pfn, r);
				bad = 1;
			}
		} else if (r != 0 || memcmp(got, want, PS)) {
			CHECK(0, "%s: pfn %u read %d or differs", what, pfn, r);
			bad = 1;
		}
	}
	CHECK(!bad, "%s: every page as expected", what);
	cursor_fini(&c);
	dumpfile_free(&d);
	close(fd);
}

static uint32_t zeros_below(uint32_t n)
{
	uint32_t z = 0;
	for (uint32_t p = 0; p < n; p++)
		z += p % 7 == 3;
	return z;
}

static void cut_under_capture(void)
{
	static const struct { int threads, no_mmap; const char *name; } runs[] = {
		{ 1, 0, "mmap-t1" }, { 2, 0, "mmap-t2" }, { 1, 1, "pread-t1" },
	};
	char first[240] = "";

	for (unsigned k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		char out[240];
		struct capture_result res;
		snprintf(out, sizeof out, "%s/%s.dump", dir, runs[k].name);
		int r = capture(runs[k].threads, runs[k].no_mmap, out, &res);
		CHECK(r == 0, "%s: capture_dump %d", runs[k].name, r);
		CHECK_INT(res.end.excluded[KDI_EX_UNREADABLE], NPAGES - CUT);
		CHECK_INT(res.end.excluded[KDI_EX_ZERO], zeros_below(CUT));
		CHECK_INT(res.end.pages_stored, CUT - zeros_below(CUT));
		CHECK(res.end.status & KDI_ST_READ_ERRORS, "%s: READ_ERRORS set", runs[k].name);
		CHECK(res.end.status & KDI_ST_INCOMPLETE, "%s: INCOMPLETE set", runs[k].name);
		check_dump(out, runs[k].name);
		if (!k) {
			snprintf(first, sizeof first, "%s", out);
			continue;
		}
		/* Same chunks, whatever the read path or thread count: the
		 * stream differs only in its random dump id and times, so
		 * compare the PAGES payloads through the reader. */
		struct dumpfile a, b;
		int fa = open(first, O_RDONLY), fb = open(out, O_RDONLY);
		int same = fa >= 0 && fb >= 0 && !dumpfile_load(&a, fa, BASE, 1ull << 40) &&
			   !dumpfile_load(&b, fb, BASE, 1ull << 40) && a.nblocks == b.nblocks;
		for (size_t i = 0; same && i < a.nblocks; i++) {
			const struct page_block *x = &a.blocks[i], *y = &b.blocks[i];
			same = x->pfn == y->pfn && x->payload_len == y->payload_len;
			uint8_t *px = malloc(x->payload_len), *py = malloc(x->payload_len);
			same = same && px && py &&
			       pread(fa, px, x->payload_len, x->payload_off) == x->payload_len &&
			       pread(fb, py, y->payload_len, y->payload_off) == y->payload_len &&
			       !memcmp(px, py, x->payload_len);
			free(px);
			free(py);
		}
		CHECK(same, "%s: the same PAGES payloads as %s", runs[k].name, runs[0].name);
		if (fa >= 0) { dumpfile_free(&a); close(fa); }
		if (fb >= 0) { dumpfile_free(&b); close(fb); }
	}
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(vpath, sizeof vpath, "%s/vmcore", dir);
	RUN(cut_under_capture);
	char cmd[300];
	snprintf(cmd, sizeof cmd, getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_done();
}
