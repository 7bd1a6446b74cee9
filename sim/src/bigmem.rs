//! Large arrays backed by huge pages where the kernel offers them.
//!
//! A run of millions of ranks keeps per-rank records and queued events in
//! arrays of hundreds of megabytes, reached in an order that crosses pages
//! constantly. With 4 KiB pages every new page costs a fault (a third of a
//! 2^20-rank run's time was spent in the kernel zeroing pages) and every
//! access far from the last risks a TLB miss. Asking for transparent huge
//! pages (2 MiB) on such arrays divides both by 512. It is a hint: where the
//! kernel has no huge pages (or another system), nothing changes but speed.

/// Arrays smaller than this are left alone (a huge page would be mostly empty).
const HUGE: usize = 4 << 20;

/// A vector of `n` copies of `value`, its memory advised to use huge pages
/// before it is first written.
pub fn filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v = with_capacity(n);
    v.resize(n, value);
    v
}

/// An empty vector with room for `n` elements, advised as `filled` is.
pub fn with_capacity<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    advise(v.as_ptr() as usize, v.capacity() * std::mem::size_of::<T>());
    v
}

/// A vector of `n` all-zero elements whose pages are only mapped when first
/// touched (a sparse use stays small), advised to use huge pages when `huge`.
///
/// # Safety
/// The all-zero bit pattern must be a valid `T`.
pub unsafe fn zeroed<T>(n: usize, huge: bool) -> Vec<T> {
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Vec::new();
    }
    let layout = std::alloc::Layout::array::<T>(n).expect("array size fits memory");
    // SAFETY: the layout is not empty; zeroed memory is a valid T (the caller's promise)
    unsafe {
        let p = std::alloc::alloc_zeroed(layout) as *mut T;
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        if huge {
            advise(p as usize, layout.size());
        }
        Vec::from_raw_parts(p, n, n)
    }
}

#[cfg(target_os = "linux")]
fn advise(start: usize, bytes: usize) {
    const PAGE: usize = 2 << 20;
    const MADV_HUGEPAGE: i32 = 14;
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, length: usize, advice: i32) -> i32;
    }
    if bytes < HUGE {
        return;
    }
    // only whole huge pages inside the allocation (madvise needs an aligned start)
    let first = start.next_multiple_of(PAGE);
    let last = (start + bytes) / PAGE * PAGE;
    if last > first {
        // SAFETY: the range lies inside memory this process owns; advice
        // changes no content and its failure is harmless (the hint is ignored)
        unsafe {
            madvise(first as *mut std::ffi::c_void, last - first, MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_start: usize, _bytes: usize) {}
