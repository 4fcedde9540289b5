/* fuzz_config: configuration and device identification on arbitrary bytes.
 *
 * Input layout:
 *   byte 0    sector size for gpt_parse: 512 << (b & 7)
 *   bytes 1-2 partition number for gpt_parse (little-endian)
 *   byte 3    max for selectors_parse: 1 + b % SEL_MAX
 *   then four NUL-terminated texts:
 *     the kernel command line       (config_load_cmdline)
 *     /etc/kdumpinit.conf           (config_load_file, through a memfd)
 *     one "key=value"               (config_set)
 *     a selector list               (selectors_parse)
 *   then the rest, binary: a disk's first bytes (gpt_parse) and a device
 *   head/tail (probe_buffer, with probe_fd's head and tail rules).
 *
 * The configuration is loaded the way pid1_main does it (defaults, file,
 * command line) and its dev= list parsed as wait_for_target does. */
#include "fuzz_common.h"

#include <assert.h>
#include <errno.h>

#include "../../config/config.h"
#include "../../config/gpt.h"
#include "../../config/probe.h"
#include "../../config/target.h"

static int filefd = -1;

/* The next NUL-terminated piece of in (or all of it), as a heap string. */
static char *next_text(struct fz_in *in)
{
	const uint8_t *nul = memchr(in->p, 0, in->n);
	size_t l = nul ? (size_t)(nul - in->p) : in->n;
	char *s = fz_strndup(in->p, l);
	in->p += l + (nul ? 1 : 0);
	in->n -= l + (nul ? 1 : 0);
	return s;
}

static void check_config(const struct config *c)
{
	assert(c->nwarn >= 0 && c->nwarn <= CONFIG_MAX_WARN);
	for (int i = 0; i < c->nwarn; i++)
		assert(memchr(c->warn[i], 0, sizeof c->warn[i]));
	assert(memchr(c->dev, 0, sizeof c->dev));
	assert(c->level <= 31 && c->threads <= 256 && c->wait_s <= 86400);
	assert(c->stall_s >= 1 && c->stall_s <= 86400 && c->verbose <= 9);
	assert(c->final == FINAL_REBOOT || c->final == FINAL_POWEROFF || c->final == FINAL_HALT);
	(void)final_action_name(c->final);
}

static void check_selectors(const char *list, int max)
{
	struct selector sel[SEL_MAX];
	char bad[80];

	memset(bad, 0x55, sizeof bad);
	int n = selectors_parse(list, sel, max, bad, sizeof bad);
	if (n < 0) {
		assert(n == -EINVAL);
		assert(memchr(bad, 0, sizeof bad));
		return;
	}
	assert(n >= 1 && n <= max);
	for (int i = 0; i < n; i++) {
		assert(memchr(sel[i].value, 0, sizeof sel[i].value));
		assert(sel[i].value[0]);
		(void)selector_name(sel[i].type);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	struct fz_in in = { data, size };
	unsigned sector = 512u << (fz_take(&in, 1) & 7);
	unsigned partno = fz_take(&in, 2);
	int max = 1 + (int)(fz_take(&in, 1) % SEL_MAX);
	char *cmdline = next_text(&in);
	char *file = next_text(&in);
	char *kv = next_text(&in);
	char *list = next_text(&in);

	/* pid1_main's order: defaults, the file, then the command line. */
	static struct config c;
	config_defaults(&c);
	int fd = fz_memfd(&filefd, "fuzz_config_file");
	fz_pwrite(fd, file, strlen(file), 0);
	int r = config_load_file(&c, fz_fdpath(fd));
	assert(r == 0);
	check_config(&c);
	config_load_cmdline(&c, cmdline);
	check_config(&c);
	char *eq = strchr(kv, '=');
	if (eq) {
		*eq = 0;
		config_set(&c, kv, eq + 1, "fuzz");
		check_config(&c);
	}
	if (c.dev[0])
		check_selectors(c.dev, SEL_MAX);
	check_selectors(list, max);

	/* The binary rest: a partition table and a probe. The buffer is an
	 * exact-size heap copy so that ASan sees reads past its end. */
	uint8_t *blob = malloc(in.n ? in.n : 1);
	if (!blob)
		abort();
	memcpy(blob, in.p, in.n);
	struct gpt_part gp;
	r = gpt_parse(blob, in.n, sector, partno, &gp);
	assert(r == 0 || r == -ENOENT);
	if (r == 0) {
		assert(memchr(gp.uuid, 0, sizeof gp.uuid) && memchr(gp.name, 0, sizeof gp.name));
		assert(gp.uuid[0]);
	}
	struct probe p;
	size_t hl = in.n < PROBE_HEAD ? in.n : PROBE_HEAD;
	const uint8_t *tail = in.n >= 8192 ? blob + in.n - 4096 : NULL;
	probe_buffer(&p, blob, hl, tail, tail ? 4096 : 0, in.n);
	assert(!(p.claimed && p.claim_damaged));
	(void)probe_describe(&p);
	free(blob);

	free(cmdline);
	free(file);
	free(kv);
	free(list);
	return 0;
}
