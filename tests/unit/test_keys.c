/* Unit tests for the VMCOREINFO key table (kernel/vmcoreinfo.h): a key
 * renamed by a kernel is one key under either name, and every key the
 * filter reads says what its absence means. */
#define CHECK_PREFIX "keys"
#include "check.h"

#include <stdint.h>

#include "../../kernel/vmcoreinfo.h"

/* 7.1 renamed OFFSET(page.compound_head) to OFFSET(page.compound_info):
 * both read into the same key. */
static void renamed_key_either_name(void)
{
	struct vmcoreinfo a, b;

	vmcoreinfo_parse(&a, "OFFSET(page.compound_head)=8\n");
	vmcoreinfo_parse(&b, "OFFSET(page.compound_info)=8\n");
	CHECK(vi_has(&a, VI_OFF_PAGE_COMPOUND_HEAD) && vi_has(&b, VI_OFF_PAGE_COMPOUND_HEAD),
	      "the tail marker under either name");
	CHECK_INT(vi_u(&a, VI_OFF_PAGE_COMPOUND_HEAD), 8);
	CHECK_INT(vi_u(&b, VI_OFF_PAGE_COMPOUND_HEAD), 8);
	CHECK_STR(vi_name(VI_OFF_PAGE_COMPOUND_HEAD), "OFFSET(page.compound_info)");
	CHECK_STR(vi_alias(VI_OFF_PAGE_COMPOUND_HEAD), "OFFSET(page.compound_head)");
	CHECK_INT(vi_lookup("OFFSET(page.compound_head)"), VI_OFF_PAGE_COMPOUND_HEAD);
	CHECK_INT(vi_lookup("OFFSET(page.compound_info)"), VI_OFF_PAGE_COMPOUND_HEAD);
	CHECK_INT(vi_lookup("oFFSET(page.compound_info)"), VI_NKEYS);
}

/* Both names in one note are one key given twice: the first line wins,
 * as it does for any key. */
static void renamed_key_first_line_wins(void)
{
	struct vmcoreinfo vi;
	uint64_t v;

	vmcoreinfo_parse(&vi, "OFFSET(page.compound_info)=16\nOFFSET(page.compound_head)=8\n");
	CHECK_INT(vi_u(&vi, VI_OFF_PAGE_COMPOUND_HEAD), 16);
	CHECK_INT(vmcoreinfo_number(&vi, NULL, "OFFSET(page.compound_head)", &v), 0);
	CHECK_INT(v, 16);
}

/* A key flipped to lower case (keys.sh's way of making it unknown) is
 * not the key. */
static void flipped_key_unknown(void)
{
	struct vmcoreinfo vi;

	vmcoreinfo_parse(&vi, "oFFSET(page._mapcount)=48\nnUMBER(PAGE_SLAB_MAPCOUNT_VALUE)=-184549376\n");
	CHECK(!vi_has(&vi, VI_OFF_PAGE_MAPCOUNT) && !vi_has(&vi, VI_NUM_SLAB_MAPCOUNT),
	      "flipped keys read as absent");
	CHECK_INT(vi.bad_lines, 0);
}

/* The table's contract: a key the filter reads says what its absence
 * means; one it does not read says nothing; names are unique. */
static void table_complete(void)
{
	int filter_keys = 0;

	for (int k = 0; k < VI_NKEYS; k++) {
		enum vi_key key = (enum vi_key)k;
		enum vi_policy p = vi_policy(key);
		CHECK((p == VI_P_NONE) == (vi_miss(key) == NULL), "%s: policy %d, miss %s",
		      vi_name(key), p, vi_miss(key) ? vi_miss(key) : "(none)");
		CHECK_INT(vi_lookup(vi_name(key)), k);
		if (vi_alias(key))
			CHECK_INT(vi_lookup(vi_alias(key)), k);
		filter_keys += p != VI_P_NONE;
	}
	CHECK(filter_keys >= 30, "only %d filter keys", filter_keys);
	CHECK_INT(vi_policy(VI_NUM_UNACCEPTED_MAPCOUNT), VI_P_QUIET);
	CHECK_INT(vi_policy(VI_NUM_PHYS_BASE), VI_P_DERIVED);
	CHECK_INT(vi_policy(VI_OFF_PAGE_MAPCOUNT), VI_P_KEEP);
	CHECK_INT(vi_policy(VI_SYM_PRB), VI_P_NONE);
	CHECK_STR(vi_name(VI_NKEYS), "?");
	CHECK(vi_alias(VI_NKEYS) == NULL && vi_miss(VI_NKEYS) == NULL, "out of range");
}

int main(void)
{
	RUN(renamed_key_either_name);
	RUN(renamed_key_first_line_wins);
	RUN(flipped_key_unknown);
	RUN(table_complete);
	return check_done();
}
