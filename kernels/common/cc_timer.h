/* The kernel's one timer.  cc_now_ns is inline because it is the only code,
 * besides the MPI calls, inside a timed region. */
#ifndef CC_TIMER_H
#define CC_TIMER_H

#include <stdint.h>
#include <time.h>

#define CC_TIMER_NAME "clock_gettime(CLOCK_MONOTONIC)"

static inline int64_t cc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

typedef struct cc_timer_info {
    double resolution_ns; /* smallest positive difference of consecutive reads */
    double cost_ns;       /* time of one read */
} cc_timer_info;

void cc_timer_calibrate(cc_timer_info *info);

/* busy-wait: a sleep would add the scheduler's wake-up jitter to the delay */
void cc_spin_ns(int64_t ns);

#endif
