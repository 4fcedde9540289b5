/* The kernel's random pool, which a sealed dump's one-time key is drawn
 * from (dump/seal.c, through libsodium's getrandom). getrandom(2) blocks
 * until the pool is ready, with no bound: PID 1 waits for it here with
 * one, and when it does not come credits the pool itself (init/pid1.c
 * says with what). */
#ifndef KDI_RNG_H
#define KDI_RNG_H

#include <stddef.h>

/* 0 once getrandom(2) no longer blocks, -ETIMEDOUT after timeout_ms, or
 * -errno (-ENOSYS: a kernel without getrandom). */
int rng_wait(unsigned timeout_ms);
/* Adds buf[0, n) to the kernel's pool, credited as bits of entropy
 * (ioctl RNDADDENTROPY on /dev/urandom; root only). 0 or -errno. */
int rng_credit(const void *buf, size_t n, unsigned bits);

#endif
