/* The host commands on dumps and dump devices: format, capture (of a
 * vmcore file), save, info, dmesg. Each takes its argv and returns an
 * exit code (lib/exitcode.h). */
#ifndef KDI_COMMANDS_H
#define KDI_COMMANDS_H

int cmd_capture(int argc, char **argv);
int cmd_save(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_format(int argc, char **argv);
int cmd_dmesg(int argc, char **argv);

#endif
