/* kdumpinit modules: the kernel modules a dump device needs here. */
#ifndef KDI_MODULES_H
#define KDI_MODULES_H

int cmd_modules(int argc, char **argv);

#endif
