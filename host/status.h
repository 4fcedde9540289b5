/* kdumpinit status: is this machine ready to take a crash dump? */
#ifndef KDI_STATUS_H
#define KDI_STATUS_H

int cmd_status(int argc, char **argv);

#endif
