/* Both parts of the crash reservation, from sysfs and the command line. */
#include "reserve.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/io.h"
#include "../lib/util.h"
#include "root.h"

/* "%08llx-%08llx\n" a range, inclusive (kernel/kexec_core.c). */
static int parse_ranges(char *text, struct crash_reserve *r)
{
	char *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *dash = strchr(l, '-');
		uint64_t a, b;
		if (!dash)
			return -1;
		*dash = 0;
		/* Inclusive ends: a whole 2^64 range, or a sum past 2^64,
		 * is not a reservation. */
		if (parse_u64(l, 16, &a) < 0 || parse_u64(dash + 1, 16, &b) < 0 || b < a ||
		    b - a == UINT64_MAX || r->cma + (b - a + 1) < r->cma ||
		    r->cma_ranges >= RESERVE_CMA_RANGES_MAX * 4)
			return -1;
		r->cma += b - a + 1;
		r->cma_ranges++;
	}
	return 0;
}

/* crashkernel=SIZE,cma: the last such word wins, as in the kernel's
 * parser (it takes the last crashkernel= of each suffix). */
static uint64_t cma_asked(const char *cmdline)
{
	uint64_t asked = 0;
	char w[128];

	for (const char *p = cmdline; *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		size_t n = strcspn(p, " \t\n");
		if (n < sizeof w && !strncmp(p, "crashkernel=", 12)) {
			memcpy(w, p + 12, n - 12);
			w[n - 12] = 0;
			char *comma = strchr(w, ',');
			uint64_t v;
			if (comma && !strcmp(comma, ",cma")) {
				*comma = 0;
				if (parse_size(w, &v) == 0)
					asked = v;
			}
		}
		p += n;
	}
	return asked;
}

void crash_reserve_read(const char *root, struct crash_reserve *r)
{
	char path[512], v[64], cl[4096];
	size_t len;

	memset(r, 0, sizeof *r);
	if (read_text_file(root_path(root, "/sys/kernel/kexec_crash_size", path, sizeof path), v,
			   sizeof v) < 0 || parse_u64(v, 10, &r->fixed) < 0)
		r->fixed = 0;
	char *text = read_all_file(root_path(root, "/sys/kernel/kexec_crash_cma_ranges", path,
					     sizeof path), 0, &len);
	if (text) {
		r->cma_known = 1;
		if (parse_ranges(text, r) < 0) {
			r->cma = 0;
			r->cma_ranges = 0;
			r->cma_bad = 1;
		}
		free(text);
	}
	if (read_text_file(root_path(root, "/proc/cmdline", path, sizeof path), cl, sizeof cl) >= 0)
		r->cma_asked = cma_asked(cl);
}

const char *crash_reserve_problem(const struct crash_reserve *r, char *buf, unsigned sz)
{
	if (r->cma_bad)
		snprintf(buf, sz, "/sys/kernel/kexec_crash_cma_ranges cannot be parsed: its CMA is "
			 "not counted");
	else if (r->cma_asked && !r->cma_known)
		snprintf(buf, sz, "crashkernel=%" PRIu64 "M,cma is on the command line, but this kernel "
			 "has no crash CMA (it needs 6.17+ built with CONFIG_CMA): only the fixed part "
			 "counts", r->cma_asked >> 20);
	else if (r->cma_asked && r->cma < r->cma_asked)
		snprintf(buf, sz, "crashkernel=%" PRIu64 "M,cma asked, %" PRIu64 " MiB reserved "
			 "(the kernel log says why: \"crashkernel CMA reservation failed\")",
			 r->cma_asked >> 20, r->cma >> 20);
	else
		return NULL;
	return buf;
}

const char *crash_reserve_say(const struct crash_reserve *r, char *buf, unsigned sz)
{
	if (!r->cma)
		snprintf(buf, sz, "%.1f MiB fixed (crashkernel=)", r->fixed / 1048576.0);
	else
		snprintf(buf, sz, "%.1f MiB fixed (crashkernel=) + %.1f MiB CMA (crashkernel=,cma; "
			 "%u range%s): %.1f MiB for the crash kernel", r->fixed / 1048576.0,
			 r->cma / 1048576.0, r->cma_ranges, r->cma_ranges == 1 ? "" : "s",
			 (r->fixed + r->cma) / 1048576.0);
	return buf;
}
