#include "cc_timer.h"

enum { CC_CAL_READS = 20000, CC_CAL_TRIALS = 7 };

void cc_timer_calibrate(cc_timer_info *info)
{
    int64_t smallest = INT64_MAX;
    double best_cost = 1e300;
    for (int trial = 0; trial < CC_CAL_TRIALS; trial++) {
        int64_t start = cc_now_ns(), prev = start;
        for (int i = 0; i < CC_CAL_READS; i++) {
            int64_t now = cc_now_ns();
            if (now > prev && now - prev < smallest) smallest = now - prev;
            prev = now;
        }
        /* the loop above also compares; time bare reads for the cost */
        int64_t t0 = cc_now_ns();
        for (int i = 0; i < CC_CAL_READS; i++) (void)cc_now_ns();
        int64_t t1 = cc_now_ns();
        double cost = (double)(t1 - t0) / CC_CAL_READS;
        if (cost < best_cost) best_cost = cost; /* least disturbed trial */
    }
    info->resolution_ns = smallest == INT64_MAX ? 1.0 : (double)smallest;
    info->cost_ns = best_cost;
}

void cc_spin_ns(int64_t ns)
{
    int64_t end = cc_now_ns() + ns;
    while (cc_now_ns() < end) {
    }
}
