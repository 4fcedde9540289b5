/* fuzz_dmesg: reading the crashed kernel's printk ring buffer
 * (kernel/dmesg.c through kernel/kmem.c) from a fake vmcore built in memory;
 * the input layout is in fuzz_vmcore_mem.h (the level byte is unused).
 * As `kdumpinit dmesg VMCORE` does: kmem_init, dmesg_read. FZ_VERBOSE=1 in
 * the environment prints the result. */
#include "fuzz_vmcore_mem.h"

#include <assert.h>
#include <errno.h>

#include "../../kernel/dmesg.h"
#include "../../kernel/kmem.h"

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_vmcore f;
	if (fz_vmcore_build(&f, &memfd, data, size) < 0)
		return 0;
	static struct kmem km;
	char *text = NULL;
	size_t len = 0;
	struct dmesg_stat st;
	int r = kmem_init(&km, &f.vc, arch_lookup(f.vc.e_machine));
	assert(r == 0 || r == -ENOMEM);
	if (r == 0) {
		r = dmesg_read(&km, 64u << 20, &text, &len, &st);
		assert(r == 0 || r == -ENOENT || r == -EFAULT || r == -EIO || r == -EBADMSG ||
		       r == -ENOMEM || r == -EFBIG || r == -ENODATA);
		if (getenv("FZ_VERBOSE"))
			fprintf(stderr, "dmesg_read: %d, %u records%s\n%s", r, st.records,
				st.salvaged ? " (salvaged)" : "", text ? text : "");
		if (r == 0) {
			assert(text && strlen(text) == len);
			assert(st.records <= len);
			/* A salvaged log says so on its first line. */
			assert(!st.salvaged || !strncmp(text, "kdumpinit: salvaged log:", 24));
			assert(st.salvaged || st.records > 0);
		} else {
			assert(!text);
		}
	}
	free(text);
	kmem_fini(&km);
	fz_vmcore_free(&f);
	return 0;
}
