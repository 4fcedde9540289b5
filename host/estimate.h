/* kdumpinit estimate: the size of this machine's dump at each dump level,
 * the time to capture it, and the reservation and dump device to give it
 * (host/estimate.c, docs/CLI.md "estimate"). */
#ifndef KDI_ESTIMATE_H
#define KDI_ESTIMATE_H

int cmd_estimate(int argc, char **argv);

#endif
