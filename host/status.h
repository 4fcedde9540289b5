/* kdumpinit status: is this machine ready to take a crash dump? */
#ifndef KDI_STATUS_H
#define KDI_STATUS_H

int cmd_status(int argc, char **argv);
/* The report of `kdumpinit status [--dev SEL] [--root DIR] [--json]` on
 * stdout, and its exit code (0 ready): what kdumpinit test checks first. */
int status_report(const char *root, const char *dev_arg, int js);

#endif
