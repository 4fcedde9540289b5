/* Settings from firmware: systemd-style credentials in SMBIOS Type 11 OEM
 * strings and QEMU fw_cfg, a config text in the device tree's /chosen.
 * They only add to struct config (config.h); nothing here writes to a
 * device, and a dev= from firmware only selects one: the claim gate still
 * decides what may be written.
 *
 * Precedence, highest first:
 *   kernel command line > fw_cfg > SMBIOS > device tree > EFI > embedded
 *   file > defaults
 * It is enforced per key by rank (enum config_src, config_set_src), not by
 * call order: PID 1 may call config_load_file, config_load_firmware and
 * config_load_cmdline in any order after config_defaults and gets the same
 * result (the natural order is defaults, file, firmware, command line).
 * Within one firmware source the first value of a key wins and a repeat
 * warns (fw_cfg files are taken in name order, SMBIOS strings in table
 * order; a kdumpinit.conf credential counts as part of its source).
 *
 * Credentials (systemd's convention, docs/CREDENTIALS.md there):
 *   SMBIOS:  io.systemd.credential:NAME=VALUE
 *            io.systemd.credential.binary:NAME=BASE64   (strict RFC 4648)
 *   fw_cfg:  opt/io.systemd.credentials/NAME            (size, then raw)
 * A name is 1..255 printable ASCII characters without ':' or '/'. Names
 * not starting "kdumpinit." belong to others and are skipped silently.
 * "kdumpinit.conf" holds a whole config file (config_load_text);
 * "kdumpinit.KEY" is one setting (one trailing newline dropped). A value
 * is at most FW_CRED_MAX bytes, all of ours together FW_TOTAL_MAX, and
 * must be text: valid UTF-8, no NUL, no control character but \t \n \r.
 * Anything malformed adds one warning to c->warn and is skipped: a typo
 * must not cost the dump. But what may hold the key to seal the dump with
 * (kdumpinit.pubkey, kdumpinit.conf, the device tree's and the EFI
 * variable's config, an SMBIOS entry not read whole) and cannot be read
 * whole counts as a key that does not parse (config_seal_unreadable): no
 * dump then, unless a higher source gives a key. */
#ifndef KDI_FIRMWARE_H
#define KDI_FIRMWARE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#define FW_CRED_MAX (64u * 1024)
#define FW_TOTAL_MAX (1024u * 1024)
#define FW_NAME_MAX 255

/* Sources for config_load_firmware. */
#define FW_SRC_FWCFG 1u
#define FW_SRC_SMBIOS 2u
#define FW_SRC_DT 4u
#define FW_SRC_EFI 8u
#define FW_SRC_ALL (FW_SRC_FWCFG | FW_SRC_SMBIOS | FW_SRC_DT | FW_SRC_EFI)

/* Reads the firmware sources in mask under root ("/" or NULL in
 * production; a fake tree in tests) into c, each with its rank. Sources
 * that are absent are skipped silently (fw_cfg needs the qemu_fw_cfg
 * module loaded first). Returns the number of settings applied (0 if
 * none; a key not read whole is not one); problems are warnings in
 * c->warn, never a failure. */
int config_load_firmware(struct config *c, const char *root, unsigned mask);

/* The pieces, for tests and the fuzzer. */

/* One SMBIOS structure as /sys/firmware/dmi/entries/11-N/raw holds it:
 * type 11, length (>= 5), handle (2 bytes), string count, then
 * NUL-terminated strings and a final NUL. Calls fn for each string (s is
 * NUL-terminated, n its length). Returns the number of strings, or
 * -EBADMSG for a bad header. *problems gets FW_SMB_TRUNCATED (a string or
 * the final NUL missing: the strings before it still count) and
 * FW_SMB_COUNT (the count byte disagrees). */
#define FW_SMB_TRUNCATED 1u
#define FW_SMB_COUNT 2u
int smbios11_parse(const uint8_t *raw, size_t len,
		   void (*fn)(void *ctx, const char *s, size_t n), void *ctx, unsigned *problems);

/* Strict base64 (RFC 4648 alphabet, '=' padding to a multiple of 4, no
 * whitespace, unused bits zero). Returns the decoded length, -EINVAL if
 * malformed, -E2BIG if it does not fit in size. */
ssize_t fw_base64_decode(const char *in, size_t n, uint8_t *out, size_t size);
/* 1 if name[0..n) is a valid credential name, else 0. */
int fw_cred_name_ok(const char *name, size_t n);
/* 1 if v[0..n) is text as a credential value must be, else 0. */
int fw_cred_text_ok(const uint8_t *v, size_t n);

/* One credential as a source delivers it; p is set up by
 * config_load_firmware (or fw_pass_init for tests and the fuzzer). */
struct fw_pass {
	struct config *c;
	enum config_src src;
	const char *what;		/* "smbios", "fw_cfg": for warnings */
	unsigned seen;			/* keys set by this source (first wins) */
	size_t *total;			/* bytes of our credentials so far */
	int applied;
};
void fw_pass_init(struct fw_pass *p, struct config *c, enum config_src src, const char *what,
		  size_t *total);
void fw_credential(struct fw_pass *p, const char *name, size_t nlen, const uint8_t *v, size_t vlen);
/* One SMBIOS OEM string: a credential (text or binary) or ignored. */
void fw_smbios_string(struct fw_pass *p, const char *s, size_t n);

#endif
