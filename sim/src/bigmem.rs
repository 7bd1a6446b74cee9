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

/// A growable array of plain values in memory of its own, which grows and
/// shrinks in place: on Linux a mapping that is remapped (its pages move, none
/// is copied), elsewhere a reallocation. A vector that doubles copies itself
/// and is held twice meanwhile: for an array of gigabytes, that doubled the
/// peak memory of a run.
pub struct Mapped<T: Copy> {
    ptr: *mut T,
    len: usize,
    /// elements that fit in the memory held
    cap: usize,
}

impl<T: Copy> Default for Mapped<T> {
    fn default() -> Self {
        Mapped {
            ptr: std::ptr::NonNull::dangling().as_ptr(),
            len: 0,
            cap: 0,
        }
    }
}

impl<T: Copy> Mapped<T> {
    pub fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// Grows or cuts the array to `n` elements, new ones set to `value`;
    /// the memory at least doubles when it grows.
    pub fn resize(&mut self, n: usize, value: T) {
        if n > self.cap {
            self.set_capacity(n.max(2 * self.cap));
        }
        for i in self.len..n {
            // SAFETY: i < n <= cap, inside the memory held
            unsafe { self.ptr.add(i).write(value) };
        }
        self.len = n;
    }

    /// Gives back the memory beyond `n` elements (at least the current length).
    pub fn shrink_to(&mut self, n: usize) {
        let n = n.max(self.len);
        if n < self.cap {
            self.set_capacity(n);
        }
    }

    fn set_capacity(&mut self, n: usize) {
        let size = std::mem::size_of::<T>().max(1);
        let old = self.cap * size;
        let new = (n * size).next_multiple_of(4096);
        self.ptr = if new == 0 {
            // SAFETY: the memory of `old` bytes is ours
            unsafe { system::unmap(self.ptr as *mut u8, old) };
            std::ptr::NonNull::dangling().as_ptr()
        } else {
            // SAFETY: as above; `new` is not 0
            unsafe { system::remap(self.ptr as *mut u8, old, new) as *mut T }
        };
        if new > old && new >= HUGE {
            // SAFETY: the mapping is ours, `new` bytes long
            unsafe { system::advise_all(self.ptr as *mut u8, new) };
        }
        self.cap = new / size;
    }
}

impl<T: Copy> Drop for Mapped<T> {
    fn drop(&mut self) {
        if self.cap > 0 {
            // SAFETY: the memory is ours and no longer used
            unsafe {
                system::unmap(
                    self.ptr as *mut u8,
                    self.cap * std::mem::size_of::<T>().max(1),
                )
            };
        }
    }
}

impl<T: Copy> std::ops::Deref for Mapped<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the first len elements are written and inside the memory held
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Copy> std::ops::DerefMut for Mapped<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for deref, and the array is borrowed mutably
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

#[cfg(target_os = "linux")]
mod system {
    const PROT_READ_WRITE: i32 = 0x1 | 0x2;
    const MAP_PRIVATE_ANONYMOUS: i32 = 0x02 | 0x20;
    const MREMAP_MAYMOVE: i32 = 1;
    const FAILED: *mut u8 = !0 as *mut u8;
    extern "C" {
        fn mmap(
            addr: *mut u8,
            length: usize,
            prot: i32,
            flags: i32,
            fd: i32,
            offset: i64,
        ) -> *mut u8;
        fn mremap(old: *mut u8, old_size: usize, new_size: usize, flags: i32, ...) -> *mut u8;
        fn munmap(addr: *mut u8, length: usize) -> i32;
        fn madvise(addr: *mut std::ffi::c_void, length: usize, advice: i32) -> i32;
    }

    /// Advises huge pages for the whole mapping: advice on part of it would
    /// split it, and a mapping in parts can no longer be remapped.
    pub unsafe fn advise_all(p: *mut u8, bytes: usize) {
        const MADV_HUGEPAGE: i32 = 14;
        madvise(p as *mut std::ffi::c_void, bytes, MADV_HUGEPAGE);
    }

    /// Memory of `new` bytes (a multiple of the page) holding the first of
    /// the `old` bytes at `p` (0: none, `p` unused).
    pub unsafe fn remap(p: *mut u8, old: usize, new: usize) -> *mut u8 {
        let q = if old == 0 {
            mmap(
                std::ptr::null_mut(),
                new,
                PROT_READ_WRITE,
                MAP_PRIVATE_ANONYMOUS,
                -1,
                0,
            )
        } else {
            mremap(p, old, new, MREMAP_MAYMOVE)
        };
        if q == FAILED {
            let layout = std::alloc::Layout::from_size_align(new, 4096).expect("page multiple");
            std::alloc::handle_alloc_error(layout);
        }
        q
    }

    pub unsafe fn unmap(p: *mut u8, bytes: usize) {
        munmap(p, bytes);
    }
}

#[cfg(not(target_os = "linux"))]
mod system {
    use std::alloc::Layout;

    fn layout(bytes: usize) -> Layout {
        Layout::from_size_align(bytes, 4096).expect("page multiple")
    }

    pub unsafe fn remap(p: *mut u8, old: usize, new: usize) -> *mut u8 {
        let q = if old == 0 {
            std::alloc::alloc(layout(new))
        } else {
            std::alloc::realloc(p, layout(old), new)
        };
        if q.is_null() {
            std::alloc::handle_alloc_error(layout(new));
        }
        q
    }

    pub unsafe fn unmap(p: *mut u8, bytes: usize) {
        std::alloc::dealloc(p, layout(bytes));
    }

    pub unsafe fn advise_all(_p: *mut u8, _bytes: usize) {}
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

#[cfg(test)]
mod tests {
    use super::Mapped;

    /// Growing (remapped, the pages moved), cutting and shrinking keep the
    /// contents; a dropped array gives its memory back.
    #[test]
    fn a_mapped_array_keeps_its_contents_as_it_grows_and_shrinks() {
        let mut a: Mapped<(u64, u64)> = Mapped::default();
        assert!(a.is_empty());
        for n in [1usize, 300, 5000, 300_000, 1 << 20] {
            let before = a.len();
            a.resize(n, (7, 7));
            for i in before..n {
                a[i] = (i as u64, 2 * i as u64);
            }
        }
        assert!(a
            .iter()
            .enumerate()
            .all(|(i, &v)| v == (i as u64, 2 * i as u64)));
        // sizes of several huge pages, shrunk then grown again (the mapping
        // must stay one piece for the kernel to remap it)
        for n in [300_000usize, 1000] {
            a.resize(n, (0, 0));
            a.shrink_to(n);
            a.resize(3 * n, (9, 9));
            assert_eq!(a[n - 1], (n as u64 - 1, 2 * n as u64 - 2));
            assert_eq!(a[n], (9, 9));
            a.resize(n, (0, 0));
        }
        a.resize(0, (0, 0));
        a.shrink_to(0);
        assert!(a.is_empty());
    }
}
