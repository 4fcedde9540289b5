/* fuzz_vmcore: opening an ELF vmcore (kernel/vmcore.c: vmcore_open, the
 * PT_NOTE walk that finds VMCOREINFO, vmcoreinfo_get), the input side of
 * `kdumpinit capture`. Input: the vmcore file, written to a memfd.
 * Every segment it keeps passes segment_valid, so that the dump's reader
 * accepts what the capture writes (it used to keep PT_LOADs that made
 * the whole dump unreadable, regress-vmcore-segment-*).
 * Links Debian's (glibc) libelf, which is not instrumented: this target
 * checks kdumpinit's use of it, not libelf itself. */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>

#include "../../kernel/vmcore.h"

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fz_memfd(&memfd, "fuzz_vmcore");
	if (size)
		fz_pwrite(fd, data, size, 0);

	struct vmcore vc;
	enum vmcore_err why;
	int r = vmcore_open(&vc, fz_fdpath(fd), &why);
	(void)vmcore_strerror(why);
	if (r < 0)
		return 0;
	assert(vc.vmcoreinfo && vc.nr_seg >= 1 && vc.nr_seg <= KDI_MAX_SEGMENTS);
	assert(strlen(vc.vmcoreinfo) == vc.vmcoreinfo_len);
	assert(vc.notes_len <= KDI_NOTES_MAX);	/* NOTES is one chunk */
	assert(vc.page_size >= 4096 && vc.page_size <= 65536 && !(vc.page_size & (vc.page_size - 1)));
	for (uint32_t i = 0; i < vc.nr_seg; i++) {
		const struct kdi_segment *s = &vc.seg[i];
		/* What the capture writes, the dump's reader accepts: the
		 * one segment rule (format.h), not a copy of it. */
		assert(segment_valid(s));
		/* What the pipeline then reads must lie inside the file. */
		if (s->filesz)
			assert(vc.seg_offset[i] < vc.file_size &&
			       s->filesz <= vc.file_size - vc.seg_offset[i]);
	}
	char v[80];
	if (vmcoreinfo_get(vc.vmcoreinfo, "OSRELEASE", v, sizeof v) == 0)
		assert(memchr(v, 0, sizeof v));
	vmcore_close(&vc);
	return 0;
}
