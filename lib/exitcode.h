/* The exit codes every command shares, documented in docs/CLI.md. */
#ifndef KDI_EXITCODE_H
#define KDI_EXITCODE_H

enum {
	EXIT_OK = 0,
	EXIT_SYSTEM = 1,
	EXIT_USAGE = 2,
	EXIT_INPUT = 3,
	EXIT_TARGET = 4,
	EXIT_INCOMPLETE = 5,
	/* kdumpinit status, for monitoring (host/status.c) */
	EXIT_NOT_ARMED = 6,
	EXIT_STALE = 7,
	EXIT_UNSAVED = 8,
	/* kdumpinit arm: the image is unsigned and the kernel locked down */
	EXIT_LOCKDOWN = 9,
	/* kdumpinit arm --dev: the dedicated kernel lacks a driver the dump
	 * device needs here (arm/reach.c) */
	EXIT_NO_DRIVER = 10,
};

#endif
