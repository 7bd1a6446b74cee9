//! A memory prefetch hint, for the places where the address needed next is
//! known well before its data: waiting for scattered memory in turn dominates
//! a large run's cost.

/// Asks the processor to bring `p`'s cache line in (a hint; no effect elsewhere).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
