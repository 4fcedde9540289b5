/* kdumpinit rebuild: what the arming service does at boot, on demand. */
#ifndef KDI_REBUILD_H
#define KDI_REBUILD_H

int cmd_rebuild(int argc, char **argv);

#endif
