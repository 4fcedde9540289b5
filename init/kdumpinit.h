/* The front doors: PID-1 mode and the host commands, and the exit codes
 * they share. The services behind them have their own headers:
 * run_capture.h, savecore.h, source.h. */
#ifndef KDI_INIT_H
#define KDI_INIT_H

/* Exit codes, documented in docs/CLI.md. */
enum {
	EXIT_OK = 0,
	EXIT_SYSTEM = 1,
	EXIT_USAGE = 2,
	EXIT_INPUT = 3,
	EXIT_TARGET = 4,
	EXIT_INCOMPLETE = 5,
	/* kdumpinit status, for monitoring (init/status.c) */
	EXIT_NOT_ARMED = 6,
	EXIT_STALE = 7,
	EXIT_UNSAVED = 8,
};

int cmd_capture(int argc, char **argv);
int cmd_save(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_format(int argc, char **argv);
int cmd_arm(int argc, char **argv);
int cmd_dmesg(int argc, char **argv);

/* Never returns. */
void pid1_main(void) __attribute__((noreturn));

#endif
