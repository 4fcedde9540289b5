/* kdumpinit test: crash this machine on purpose, once it is ready, and
 * leave the marker the next boot's save reports (host/crashtest.c). */
#ifndef KDI_CRASHTEST_H
#define KDI_CRASHTEST_H

int cmd_test(int argc, char **argv);

#endif
