/* The dump source service: what `info`, `save`, `dmesg` and savecore
 * read a dump through. */
#ifndef KDI_SOURCE_H
#define KDI_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct target;
struct dumpfile;

/* Opens SOURCE (a path or a selector such as LABEL=) read-only and loads
 * its dump. Returns dumpfile_load's result with *code set to the exit
 * code for a failure, which it prints, once, with two exceptions that the
 * caller says as it decides: -ENOENT with *code EXIT_OK (empty), and a
 * dump whose header does not read (*code EXIT_INCOMPLETE, t open, d->why
 * says why): `info` reports that in its state line, the others with
 * dump_unreadable. */
int open_dump(const char *src, const uint8_t *sk, unsigned how, struct target *t,
	      struct dumpfile *d, int *code);
/* A device holds several dumps when a crash came before the dump of the
 * one before was saved (dump/chain.h). open_dump loads the one `save
 * --dir` takes next: the oldest not yet saved, else the newest.
 * open_dump_nth loads dump `which` (1 the oldest; 0 as open_dump); a
 * device with fewer is -ENOENT, said, *code EXIT_TARGET. */
int open_dump_nth(const char *src, unsigned which, const uint8_t *sk, unsigned how,
		  struct target *t, struct dumpfile *d, int *code);
/* HOW is dumpfile_load_how's: DUMPFILE_DEFER_PAGES for the commands that
 * read every page once (save), so that a sealed dump's pages are opened
 * once; 0 for those that vouch for the dump without reading its pages
 * (info). */
/* SK (32 bytes, or NULL) is the secret key for a sealed dump (dump/seal.h).
 * Without it, or with another key, a sealed dump loads `locked`: info
 * says what is in the clear; dump_locked says why the memory cannot be
 * read, once, for the commands that need it, and gives their exit code
 * (EXIT_OK when it can be read; a key given for a dump in the clear is a
 * warning). */
int dump_locked(const char *src, const struct dumpfile *d, const uint8_t *sk);
/* Says that t's dump header is unreadable; r is what open_dump returned. */
void dump_unreadable(const struct target *t, const struct dumpfile *d, int r);
/* The `info` text for what open_dump returned (r); info's exit code. */
int dump_report(FILE *f, const char *src, const struct target *t, const struct dumpfile *d, int r);
/* The same in JSON (docs/CLI.md, "Machine-readable output"): the
 * device's members (dump_json_head), then one object per dump, inside
 * the caller's "dumps" array; the same exit code as dump_report. */
struct json;
void dump_json_head(struct json *j, const char *src, const struct target *t);
int dump_report_json(struct json *j, const struct target *t, const struct dumpfile *d, int r);
/* The device's claim records this very dump as saved. */
int dump_saved(const struct target *t, const struct dumpfile *d);
/* Why d is incomplete, in a few words, for one line of a message: the
 * break in its stream, the parts lost (gaps), or what END says. */
const char *dump_incomplete_why(const struct dumpfile *d, char *buf, size_t sz);

/* The dump device the firmware names (the credential kdumpinit.dev, read
 * under root as the crash kernel reads it) into buf, its warnings printed.
 * Returns the source's name ("smbios", "fw_cfg", ...), or NULL when the
 * firmware names none (buf untouched). */
const char *firmware_device(const char *root, char *buf, size_t sz);

#endif
