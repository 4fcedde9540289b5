#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <sodium.h>

int sha256_file(const char *path, char hex[65])
{
	crypto_hash_sha256_state st;
	uint8_t buf[65536], d[crypto_hash_sha256_BYTES];
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	crypto_hash_sha256_init(&st);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		if (n <= 0)
			break;
		crypto_hash_sha256_update(&st, buf, (unsigned long long)n);
	}
	close(fd);
	if (r < 0)
		return r;
	crypto_hash_sha256_final(&st, d);
	for (unsigned i = 0; i < crypto_hash_sha256_BYTES; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return 0;
}
