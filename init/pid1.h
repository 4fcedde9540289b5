/* The crash kernel's init: mounts, configuration, the capture, the
 * watchdog and the final action. */
#ifndef KDI_PID1_H
#define KDI_PID1_H

/* Never returns. */
void pid1_main(void) __attribute__((noreturn));

#endif
