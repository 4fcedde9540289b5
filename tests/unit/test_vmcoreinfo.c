/* Unit tests for kernel/vmcoreinfo.c and vmcoreinfo_get (kernel/vmcore.c) on
 * hand-written note text. */
#define CHECK_PREFIX "vmcoreinfo"
#include "check.h"

#include <errno.h>
#include <stdint.h>

#include "../../kernel/vmcore.h"
#include "../../kernel/vmcoreinfo.h"

static void values_by_base(void)
{
	struct vmcoreinfo vi;

	vmcoreinfo_parse(&vi, "OSRELEASE=6.1.0-57-amd64\nPAGESIZE=4096\n"
			 "SYMBOL(mem_section)=ffffffff82d5a040\nNUMBER(phys_base)=-2097152\n"
			 "NUMBER(SECTION_SIZE_BITS)=0x1b\nUNKNOWN(key)=zz\n");
	CHECK_STR(vi.osrelease, "6.1.0-57-amd64");
	CHECK_INT(vi_u(&vi, VI_PAGESIZE), 4096);
	CHECK(vi_u(&vi, VI_SYM_MEM_SECTION) == 0xffffffff82d5a040ull, "mem_section %llx",
	      (unsigned long long)vi_u(&vi, VI_SYM_MEM_SECTION));
	CHECK_INT((int64_t)vi_u(&vi, VI_NUM_PHYS_BASE), -2097152);
	CHECK_INT(vi_u(&vi, VI_NUM_SECTION_SIZE_BITS), 27);
	CHECK_INT(vi.bad_lines, 0);
	CHECK(!vi_has(&vi, VI_KERNELOFFSET), "KERNELOFFSET absent");
}

/* The crashed kernel's memory can hold anything: a second copy of a key
 * must not override the first, or parse and get would disagree. */
static void duplicates_keep_first(void)
{
	const char *t = "PAGESIZE=4096\nOSRELEASE=first\nPAGESIZE=65536\nOSRELEASE=second\n"
			"SIZE(page)=zz\nSIZE(page)=64\n";
	struct vmcoreinfo vi;
	char v[32];

	vmcoreinfo_parse(&vi, t);
	CHECK_INT(vi_u(&vi, VI_PAGESIZE), 4096);
	CHECK_STR(vi.osrelease, "first");
	CHECK(!vi_has(&vi, VI_SIZE_PAGE), "a bad first SIZE(page) stays absent");
	CHECK_INT(vi.bad_lines, 1);
	CHECK_INT(vmcoreinfo_get(t, "PAGESIZE", v, sizeof v), 0);
	CHECK_STR(v, "4096");
	CHECK_INT(vmcoreinfo_get(t, "SIZE(page)", v, sizeof v), 0);
	CHECK_STR(v, "zz");
}

static void malformed_values(void)
{
	struct vmcoreinfo vi;

	vmcoreinfo_parse(&vi, "PAGESIZE=\nCRASHTIME=12x\nKERNELOFFSET= 1000\n"
			 "SIZE(page)=+64\nLENGTH(mem_section)=99999999999999999999999\n");
	CHECK_INT(vi.bad_lines, 5);
	CHECK(!vi_has(&vi, VI_PAGESIZE) && !vi_has(&vi, VI_CRASHTIME) &&
	      !vi_has(&vi, VI_KERNELOFFSET) && !vi_has(&vi, VI_SIZE_PAGE) &&
	      !vi_has(&vi, VI_LEN_MEM_SECTION), "no malformed value is kept");
}

static void get_bounds(void)
{
	char v[4] = "xyz";

	CHECK_INT(vmcoreinfo_get("PAGESIZE=4096\n", "PAGESIZE", v, 0), -EINVAL);
	CHECK_STR(v, "xyz");
	CHECK_INT(vmcoreinfo_get("PAGESIZE=4096\n", "PAGESIZE", v, sizeof v), 0);
	CHECK_STR(v, "409");
	CHECK_INT(vmcoreinfo_get("PAGESIZE4096\nPAGESIZ=1\n", "PAGESIZE", v, sizeof v), -ENOENT);
}

/* The release's numbers, which the filter's warning and the debugger's
 * pages (module code before 6.4) go by. */
static void release_numbers(void)
{
	struct vmcoreinfo vi;
	unsigned maj = 0, min = 0;

	vmcoreinfo_parse(&vi, "OSRELEASE=6.12.117+deb13-amd64\n");
	CHECK_INT(vmcoreinfo_release(&vi, &maj, &min), 0);
	CHECK_INT(maj, 6);
	CHECK_INT(min, 12);
	vmcoreinfo_parse(&vi, "OSRELEASE=7\n");
	CHECK_INT(vmcoreinfo_release(&vi, &maj, &min), -ENOENT);
	vmcoreinfo_parse(&vi, "OSRELEASE=linux\n");
	CHECK_INT(vmcoreinfo_release(&vi, &maj, &min), -ENOENT);
	vmcoreinfo_parse(&vi, "PAGESIZE=4096\n");
	CHECK_INT(vmcoreinfo_release(&vi, &maj, &min), -ENOENT);
}

int main(void)
{
	RUN(values_by_base);
	RUN(duplicates_keep_first);
	RUN(malformed_values);
	RUN(get_bounds);
	RUN(release_numbers);
	return check_done();
}
