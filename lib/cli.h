/* How every host command reads its options and says what is wrong with
 * them (lib/cli.c). getopt_long underneath, so "--opt value",
 * "--opt=value" and options after the operands all work alike; a wrong
 * command line is one line that names what is wrong and where the help
 * is, and exit code 2 (EXIT_USAGE), never the whole help. */
#ifndef KDI_CLI_H
#define KDI_CLI_H

#include <getopt.h>

/* getopt_long's next answer, or '?' once it has said, in one line, what
 * is wrong: an unknown option, one without its value, or a value given
 * to one that takes none. cmd names the command ("capture"). */
int cli_next(const char *cmd, int argc, char **argv, const char *shorts,
	     const struct option *longs);

/* "kdumpinit: error: CMD: WHAT (see 'kdumpinit CMD --help')" on stderr;
 * returns EXIT_USAGE. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cli_fail for an option's value: "--level: '40' is not WANT". */
int cli_bad_value(const char *cmd, const char *opt, const char *value, const char *want);

/* After the options: exactly n operands left (n 0 or 1), or said why
 * not. 0, or EXIT_USAGE. what names the operand ("SOURCE"). */
int cli_operands(const char *cmd, int argc, char **argv, int n, const char *what);

#endif
