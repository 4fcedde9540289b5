/* Unit tests for config/dmtable.c: the kdumpinit.dm= word, parsed,
 * checked and written back (one spelling per table), and the words it
 * must refuse. */
#define CHECK_PREFIX "dmtable"
#include "check.h"

#include <errno.h>

#include "../../config/dmtable.h"

static const char *const good[] = {
	"2097152:linear:PARTUUID=6c1e0f0a-8a4b-4e7c-9d2f-0123456789ab+2048",
	"8:linear:SERIAL=kdump-dump+0",
	"1024:linear:PARTUUID=1a2b3c4d-01+2048,4096:linear:PARTUUID=1a2b3c4d-02+0",
	"1024:striped:128:SERIAL=a+0:SERIAL=b+2048",
	"3072:striped:8:PARTUUID=x1+2048:PARTUUID=x2+2048:PARTUUID=x3+2048,2048:linear:SERIAL=c+4503599627370495",
	"128:striped:128:SERIAL=one+0",
	"8:linear:WWN=3600a0b80001234+0,8:linear:WWN=nvme.8086-4d6f-00000001+2048",
};

static void round_trips(void)
{
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		struct dm_table t;
		char why[200] = "", out[DMT_WORD_MAX + 1];
		int r = dmtable_parse(good[i], &t, why, sizeof why);
		CHECK(r == 0, "'%s': %d (%s)", good[i], r, why);
		if (r)
			continue;
		CHECK_INT(dmtable_format(&t, out, sizeof out, why, sizeof why), 0);
		CHECK_STR(out, good[i]);
	}
	struct dm_table t;
	char why[200];
	CHECK_INT(dmtable_parse(good[2], &t, why, sizeof why), 0);
	CHECK_INT(t.ntargets, 2);
	CHECK_INT(t.ndevs, 2);
	CHECK(dmtable_sectors(&t) == 5120, "sectors %llu", (unsigned long long)dmtable_sectors(&t));
	CHECK(t.dev[0].sel.type == SEL_PARTUUID && !strcmp(t.dev[0].sel.value, "1a2b3c4d-01") &&
	      t.dev[0].offset == 2048, "first device");
	CHECK_INT(dmtable_parse(good[4], &t, why, sizeof why), 0);
	CHECK(t.t[0].type == DMT_STRIPED && t.t[0].chunk == 8 && t.t[0].ndev == 3 &&
	      t.t[1].first == 3 && t.dev[3].sel.type == SEL_SERIAL, "striped then linear");
}

static void refused(void)
{
	static const struct { const char *word, *says; } c[] = {
		{ "", "empty" },
		{ "0:linear:SERIAL=a+0", "bad length" },
		{ "01:linear:SERIAL=a+0", "LEN:TYPE" },
		{ "+1:linear:SERIAL=a+0", "LEN:TYPE" },
		{ "-1:linear:SERIAL=a+0", "LEN:TYPE" },
		{ "4503599627370496:linear:SERIAL=a+0", "LEN:TYPE" },	/* 2^52 */
		{ "99999999999999999999:linear:SERIAL=a+0", "LEN:TYPE" },
		{ "8:linear:SERIAL=a+01", "offset" },
		{ "8:linear:SERIAL=a+", "offset" },
		{ "8:linear:SERIAL=a", "no +OFFSET" },
		{ "8:linear:SERIAL=+0", "not PARTUUID" },
		{ "8:linear:LABEL=dump+0", "not PARTUUID" },
		{ "8:linear:UUID=x+0", "not PARTUUID" },
		{ "8:linear:/dev/sda1+0", "not PARTUUID" },
		{ "8:linear:SERIAL=a b+0", "bad device name" },
		{ "8:linear:SERIAL=a\"b+0", "bad device name" },
		{ "8:linear:SERIAL=a+b+0", "bad offset" },
		{ "8:linear:SERIAL=a+0:SERIAL=b+0", "one device" },
		{ "8:linear", "LEN:TYPE" },
		{ "8:mirror:SERIAL=a+0", "type not linear" },
		{ "8:Linear:SERIAL=a+0", "type" },
		{ "8:striped:0:SERIAL=a+0", "CHUNK" },
		{ "8:striped:4", "CHUNK" },
		{ "9:striped:4:SERIAL=a+0:SERIAL=b+0", "whole chunks" },
		{ "12:striped:4:SERIAL=a+0:SERIAL=b+0", "whole chunks" },
		{ "8:linear:SERIAL=a+0,", "LEN:TYPE" },
		{ ",8:linear:SERIAL=a+0", "LEN:TYPE" },
		{ "8:linear:SERIAL=a+0,,8:linear:SERIAL=b+0", "LEN:TYPE" },
		{ "8:linear:SERIAL=a+0 ", "bad offset" },
		{ "1:linear:SERIAL=a+0,1:linear:SERIAL=a+0,1:linear:SERIAL=a+0,1:linear:SERIAL=a+0,"
		  "1:linear:SERIAL=a+0,1:linear:SERIAL=a+0,1:linear:SERIAL=a+0,1:linear:SERIAL=a+0,"
		  "1:linear:SERIAL=a+0", "more than 8 segments" },
		{ "17:striped:1:SERIAL=a+0:SERIAL=a+0:SERIAL=a+0:SERIAL=a+0:SERIAL=a+0:SERIAL=a+0:"
		  "SERIAL=a+0:SERIAL=a+0:SERIAL=a+0:SERIAL=a+0:SERIAL=a+0:SERIAL=a+0:SERIAL=a+0:"
		  "SERIAL=a+0:SERIAL=a+0:SERIAL=a+0:SERIAL=a+0", "too many fields" },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct dm_table t;
		char why[200] = "";
		int r = dmtable_parse(c[i].word, &t, why, sizeof why);
		CHECK(r == -EINVAL, "'%s': %d, want -EINVAL", c[i].word, r);
		CHECK(check_mentions(why, c[i].says), "'%s' said '%s', want '%s'", c[i].word, why,
		      c[i].says);
	}
	/* longer than DMT_WORD_MAX */
	char big[DMT_WORD_MAX + 40];
	snprintf(big, sizeof big, "8:linear:SERIAL=");
	size_t n = strlen(big);
	memset(big + n, 'x', sizeof big - n - 1);
	big[sizeof big - 1] = 0;
	struct dm_table t;
	char why[200];
	CHECK_INT(dmtable_parse(big, &t, why, sizeof why), -EINVAL);
	CHECK(check_mentions(why, "longer than"), "said '%s'", why);
}

/* What format refuses: tables the parser would not give back. */
static void format_refuses(void)
{
	struct dm_table t;
	char why[200], out[DMT_WORD_MAX + 1], small[30];

	CHECK_INT(dmtable_parse(good[0], &t, why, sizeof why), 0);
	CHECK_INT(dmtable_format(&t, small, sizeof small, why, sizeof why), -ENAMETOOLONG);
	CHECK_STR(small, "");
	struct dm_table u = t;
	u.dev[0].sel.type = SEL_LABEL;
	CHECK_INT(dmtable_format(&u, out, sizeof out, why, sizeof why), -EINVAL);
	u = t;
	snprintf(u.dev[0].sel.value, sizeof u.dev[0].sel.value, "a:b");
	CHECK_INT(dmtable_format(&u, out, sizeof out, why, sizeof why), -EINVAL);
	u = t;
	u.t[0].ndev = 2;
	CHECK_INT(dmtable_format(&u, out, sizeof out, why, sizeof why), -EINVAL);
	u = t;
	u.ntargets = 0;
	CHECK_INT(dmtable_format(&u, out, sizeof out, why, sizeof why), -EINVAL);
	u = t;
	u.dev[0].offset = DMT_SECTORS_MAX;
	CHECK_INT(dmtable_format(&u, out, sizeof out, why, sizeof why), -EINVAL);
	/* 16 devices of 127-character serials do not fit the word */
	memset(&u, 0, sizeof u);
	u.ntargets = 1;
	u.ndevs = DMT_MAX_DEVS;
	u.t[0] = (struct dmt_target){ .type = DMT_STRIPED, .len = 16, .chunk = 1, .ndev = DMT_MAX_DEVS };
	for (int i = 0; i < DMT_MAX_DEVS; i++) {
		u.dev[i].sel.type = SEL_SERIAL;
		memset(u.dev[i].sel.value, 'a' + i, 127);
	}
	CHECK_INT(dmtable_format(&u, out, sizeof out, why, sizeof why), -ENAMETOOLONG);
}

int main(void)
{
	RUN(round_trips);
	RUN(refused);
	RUN(format_refuses);
	return check_done();
}
