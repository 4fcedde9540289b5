/* Key files for sealed dumps (dump/seal.h): `kdumpinit keygen` makes a
 * pair, the capture takes the public key, save/dmesg/info the secret one. */
#ifndef KDI_KEYS_H
#define KDI_KEYS_H

#include <stdint.h>

/* Reads a key file, public (secret 0) or secret, into key (32 bytes).
 * Any failure is said here, once, naming the fix: 0 or -errno. A secret
 * key file is refused, as ssh refuses one, when it is a link, not a
 * regular file, open to group or others (-EPERM), or not owned by the
 * user running the command (-EPERM). */
int keyfile_read(const char *path, int secret, uint8_t key[32]);
/* A key id (8 bytes) as 16 hex digits. */
void key_id_hex(const uint8_t id[8], char out[17]);
/* The id of the public key that goes with secret key sk. */
void key_id_of_secret(const uint8_t sk[32], char out[17]);
int cmd_keygen(int argc, char **argv);

#endif
