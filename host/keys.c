/* Key files: one line each, "kdumpinit-public-key HEX64" or
 * "kdumpinit-secret-key HEX64" (dump/seal.c parses them). */
#include "keys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "../dump/seal.h"
#include "../lib/cli.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

/* Every buffer that holds a secret key (or its file's text) is locked in
 * memory where the system lets us, with sodium_mlock (a failure is
 * silent: the key still works), and wiped when done with, by
 * sodium_munlock, which zeroes it before it unlocks, even a buffer it
 * could not lock. */

/* Why a file st describes may not hold a secret key, as one line
 * naming the fix (ssh's rules for an identity file), or 0. */
static int secret_file_refused(const struct stat *st, const char *path)
{
	if (st->st_uid != geteuid()) {
		err("%s: owned by uid %u, not by you (uid %u): run chown %u %s", path,
		    (unsigned)st->st_uid, (unsigned)geteuid(), (unsigned)geteuid(), path);
		return -EPERM;
	}
	if (st->st_mode & 077) {
		err("%s: %s group or others (mode %04o): run chmod 600 %s", path,
		    st->st_mode & 044 ? "readable by" : st->st_mode & 022 ? "writable by" : "open to",
		    (unsigned)(st->st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

int keyfile_read(const char *path, int secret, uint8_t key[32])
{
	char buf[256];
	struct stat st;
	const char *why;
	/* A secret key is never read through a link (a link there may be
	 * anyone's); no key is opened blocking (a FIFO would hang the
	 * command: status reads the public key the settings name). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (secret ? O_NOFOLLOW : 0));

	if (fd < 0) {
		int e = -errno;
		if (secret && e == -ELOOP)
			err("%s: a symbolic link: give the key file itself", path);
		else
			err("cannot open the %s key %s: %s", secret ? "secret" : "public", path,
			    strerror(-e));
		return e;
	}
	/* fstat of what was opened: the name may be another file by now. */
	int r = fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ? -EINVAL : 0;
	if (r < 0)
		err("%s is not a regular file: not a key", path);
	else if (secret)
		r = secret_file_refused(&st, path);
	if (r < 0) {
		close(fd);
		return r;
	}
	(void)sodium_mlock(buf, sizeof buf);
	ssize_t n = read_full_at(fd, buf, sizeof buf, 0);
	close(fd);
	if (n < 0) {
		(void)sodium_munlock(buf, sizeof buf);
		err("cannot read %s: %s", path, strerror((int)-n));
		return (int)n;
	}
	r = (size_t)n == sizeof buf ? -EINVAL : seal_parse_key(buf, (size_t)n, secret, key, &why);
	if ((size_t)n == sizeof buf)
		why = "longer than a key file";
	(void)sodium_munlock(buf, sizeof buf);
	if (r < 0)
		err("%s: %s", path, why);
	return r;
}

void key_id_hex(const uint8_t id[8], char out[17])
{
	hex_encode(id, 8, out);
}

void key_id_of_secret(const uint8_t sk[32], char out[17])
{
	uint8_t pk[32], id[SEAL_KEYID_BYTES];

	if (seal_public_key(sk, pk) < 0)
		memset(pk, 0, sizeof pk);
	seal_key_id(pk, id);
	key_id_hex(id, out);
}

/* A key file's one line: "PREFIX HEX64\n" into line (at least 128 bytes). */
static void key_line(char *line, const char *prefix, const uint8_t key[32])
{
	size_t n = strlen(prefix);

	memcpy(line, prefix, n);
	hex_encode(key, 32, line + n);
	memcpy(line + n + 64, "\n", 2);
}

static const char keygen_help[] =
	"usage: kdumpinit keygen SECRET-FILE PUBLIC-FILE\n"
	"\n"
	"Makes a key pair for sealed dumps. The public key goes to the capture\n"
	"(kdumpinit-mkinitramfs, kdumpinit.pubkey= or the firmware credential\n"
	"kdumpinit.pubkey); the secret key stays where dumps are read (kdumpinit save).\n"
	"Neither file may exist. The secret one is created mode 0600.\n"
	"Exit: 0 written, 2 usage or a file exists, 1 an error.\n";

/* Creates path new (never through a link), writes line, syncs. */
static int write_new(const char *path, const char *line, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	/* fchmod: the umask may not take bits from a public key, and a
	 * secret key gets 0600 whatever the umask adds. */
	int r = fchmod(fd, mode) < 0 ? -errno : write_full(fd, line, strlen(line));
	if (!r && fsync(fd) < 0)
		r = -errno;
	close(fd);
	if (r < 0)
		unlink(path);
	return r;
}

int cmd_keygen(int argc, char **argv)
{
	uint8_t pk[32], sk[32], id[SEAL_KEYID_BYTES];
	char line[128], hex[17];

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(keygen_help, stdout);
		return EXIT_OK;
	}
	if (argc > 1 && argv[1][0] == '-' && argv[1][1])
		return cli_fail("keygen", "unknown option '%s'", argv[1]);
	if (argc > 2 && argv[2][0] == '-' && argv[2][1])
		return cli_fail("keygen", "unknown option '%s'", argv[2]);
	if (argc != 3)
		return cli_fail("keygen", argc < 3 ? "give SECRET-FILE and PUBLIC-FILE" :
				"unexpected argument '%s'", argv[argc < 3 ? 0 : 3]);
	/* lstat: a link, even a dangling one, is something there. */
	for (int i = 1; i < 3; i++) {
		struct stat st;
		if (lstat(argv[i], &st) == 0 || errno != ENOENT) {
			err("%s exists: not overwriting a key", argv[i]);
			return EXIT_USAGE;
		}
	}
	(void)sodium_mlock(sk, sizeof sk);
	(void)sodium_mlock(line, sizeof line);
	int made = seal_keypair(pk, sk), r = 0;
	if (made == 0) {
		key_line(line, "kdumpinit-secret-key ", sk);
		r = write_new(argv[1], line, 0600);
	}
	(void)sodium_munlock(line, sizeof line);
	(void)sodium_munlock(sk, sizeof sk);
	if (made < 0) {
		err("could not make a key pair");
		return EXIT_SYSTEM;
	}
	if (r < 0) {
		err("cannot write %s: %s", argv[1], strerror(-r));
		return EXIT_SYSTEM;
	}
	key_line(line, "kdumpinit-public-key ", pk);
	r = write_new(argv[2], line, 0644);
	if (r < 0) {
		err("cannot write %s: %s (the secret key %s is removed)", argv[2], strerror(-r),
		    argv[1]);
		unlink(argv[1]);
		return EXIT_SYSTEM;
	}
	seal_key_id(pk, id);
	key_id_hex(id, hex);
	msg("key %s: secret key %s (keep it where dumps are read), public key %s (for the "
	    "capture)", hex, argv[1], argv[2]);
	return EXIT_OK;
}
