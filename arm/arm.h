/* kdumpinit arm: load (or unload) the crash kernel. */
#ifndef KDI_ARM_H
#define KDI_ARM_H

int cmd_arm(int argc, char **argv);

#endif
