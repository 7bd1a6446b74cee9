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

/// An array of `n` all-zero elements whose pages are only mapped when first
/// touched (a sparse use stays small), advised to use huge pages when `huge`
/// (before any page is touched: an allocator that clears the memory itself,
/// as Rust's does for alignments over 16 bytes, leaves it on small pages).
///
/// # Safety
/// The all-zero bit pattern must be a valid `T`.
pub unsafe fn zeroed<T: Copy>(n: usize, huge: bool) -> Mapped<T> {
    let mut a = Mapped {
        huge,
        ..Mapped::default()
    };
    if n > 0 && std::mem::size_of::<T>() > 0 {
        a.set_capacity(n);
        // SAFETY: fresh memory reads as zeros, a valid T (the caller's promise)
        unsafe { system::clear_fresh(a.ptr as *mut u8, n * std::mem::size_of::<T>()) };
    }
    a.len = n;
    a
}

/// Huge pages are whole 2 MiB pages at 2 MiB boundaries.
const HUGE_PAGE: usize = 2 << 20;

/// A growable array of plain values in memory of its own, which grows and
/// shrinks without being copied: on Linux a range of address space reserved
/// at a huge-page boundary, whose pages cost memory once the array reaches
/// them and are given back as it shrinks; a range outgrown moves whole (its
/// pages, never its contents) to one twice as large. Elsewhere, a
/// reallocation. A vector that doubles copies itself and is held twice
/// meanwhile: for an array of gigabytes, that doubled the peak memory of a
/// run. And an array remapped to whatever address the kernel chose split its
/// huge pages: most of a 3 GB arena ended up on 4 KiB pages, a TLB miss
/// (a two-level page walk in a virtual machine) on nearly every access.
pub struct Mapped<T: Copy> {
    ptr: *mut T,
    len: usize,
    /// elements that fit in the usable memory
    cap: usize,
    /// bytes of address space held at `ptr`, the usable part first
    reserved: usize,
    /// whether the memory is advised to use huge pages
    huge: bool,
}

impl<T: Copy> Default for Mapped<T> {
    fn default() -> Self {
        Mapped {
            ptr: std::ptr::NonNull::dangling().as_ptr(),
            len: 0,
            cap: 0,
            reserved: 0,
            huge: true,
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
        let bytes = n.checked_mul(size).expect("array size fits memory");
        // huge-page multiples once huge pages are worth it, so that the last is whole
        let huge = self.huge && bytes >= HUGE;
        let new = bytes.next_multiple_of(if huge { HUGE_PAGE } else { 4096 });
        let base = self.ptr as *mut u8;
        // SAFETY: [base, base + reserved) is ours, its first `old` bytes usable
        unsafe {
            if new <= self.reserved {
                if new < old {
                    system::decommit(base.add(new), old - new);
                }
            } else {
                let reserve = new.max(2 * self.reserved);
                let to = system::reserve(reserve);
                if self.reserved > 0 {
                    system::relocate(base, old, self.reserved, to);
                }
                self.ptr = to as *mut T;
                self.reserved = reserve;
            }
            if huge && new > old {
                system::advise_huge(self.ptr as *mut u8, new);
            }
        }
        self.cap = new / size;
    }
}

impl<T: Copy> Drop for Mapped<T> {
    fn drop(&mut self) {
        if self.reserved > 0 {
            // SAFETY: the address space is ours and no longer used
            unsafe { system::release(self.ptr as *mut u8, self.reserved) };
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
    use super::HUGE_PAGE;
    const PROT_READ_WRITE: i32 = 0x1 | 0x2;
    const MAP_PRIVATE_ANONYMOUS_NORESERVE: i32 = 0x02 | 0x20 | 0x4000;
    const MREMAP_MAYMOVE_FIXED: i32 = 1 | 2;
    const MADV_DONTNEED: i32 = 4;
    const MADV_HUGEPAGE: i32 = 14;
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

    fn out_of_memory(bytes: usize) -> ! {
        let layout = std::alloc::Layout::from_size_align(bytes, 4096).expect("page multiple");
        std::alloc::handle_alloc_error(layout)
    }

    /// `bytes` of address space at a huge-page boundary, in one mapping whose
    /// pages cost memory only once touched. (Made usable piece by piece with
    /// `mprotect`, it became one mapping per piece, never merged, and a long
    /// run that shrinks and regrows its arena would near the kernel's limit
    /// of mappings.)
    pub unsafe fn reserve(bytes: usize) -> *mut u8 {
        let span = bytes + HUGE_PAGE;
        let p = mmap(
            std::ptr::null_mut(),
            span,
            PROT_READ_WRITE,
            MAP_PRIVATE_ANONYMOUS_NORESERVE,
            -1,
            0,
        );
        if p == FAILED {
            out_of_memory(bytes);
        }
        let start = (p as usize).next_multiple_of(HUGE_PAGE) as *mut u8;
        let head = start as usize - p as usize;
        if head > 0 {
            munmap(p, head);
        }
        munmap(start.add(bytes), span - head - bytes);
        start
    }

    /// Gives memory back, its range still reserved (it reads as zeros again).
    pub unsafe fn decommit(p: *mut u8, bytes: usize) {
        madvise(p as *mut std::ffi::c_void, bytes, MADV_DONTNEED);
    }

    /// Moves the first `used` bytes of the reservation at `from` (`reserved`
    /// bytes) to the reservation at `to`, their pages whole, and gives back
    /// the old range.
    pub unsafe fn relocate(from: *mut u8, used: usize, reserved: usize, to: *mut u8) {
        if used > 0 && mremap(from, used, used, MREMAP_MAYMOVE_FIXED, to) == FAILED {
            out_of_memory(used);
        }
        if reserved > used {
            munmap(from.add(used), reserved - used);
        }
    }

    pub unsafe fn release(p: *mut u8, bytes: usize) {
        munmap(p, bytes);
    }

    pub unsafe fn advise_huge(p: *mut u8, bytes: usize) {
        madvise(p as *mut std::ffi::c_void, bytes, MADV_HUGEPAGE);
    }

    /// Fresh anonymous memory reads as zeros already.
    pub unsafe fn clear_fresh(_p: *mut u8, _bytes: usize) {}
}

#[cfg(not(target_os = "linux"))]
mod system {
    use std::alloc::Layout;

    fn layout(bytes: usize) -> Layout {
        Layout::from_size_align(bytes, 4096).expect("page multiple")
    }

    pub unsafe fn reserve(bytes: usize) -> *mut u8 {
        let q = std::alloc::alloc(layout(bytes));
        if q.is_null() {
            std::alloc::handle_alloc_error(layout(bytes));
        }
        q
    }

    pub unsafe fn decommit(_p: *mut u8, _bytes: usize) {}

    pub unsafe fn relocate(from: *mut u8, used: usize, reserved: usize, to: *mut u8) {
        std::ptr::copy_nonoverlapping(from, to, used);
        std::alloc::dealloc(from, layout(reserved));
    }

    pub unsafe fn release(p: *mut u8, bytes: usize) {
        std::alloc::dealloc(p, layout(bytes));
    }

    pub unsafe fn advise_huge(_p: *mut u8, _bytes: usize) {}

    pub unsafe fn clear_fresh(p: *mut u8, bytes: usize) {
        std::ptr::write_bytes(p, 0, bytes);
    }
}

/// Advises the whole huge pages inside [start, start + bytes) (madvise needs
/// an aligned start), when the range is large enough to be worth it.
fn advise(start: usize, bytes: usize) {
    if bytes < HUGE {
        return;
    }
    let first = start.next_multiple_of(HUGE_PAGE);
    let last = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
    if last > first {
        // SAFETY: the range lies inside memory this process owns; advice
        // changes no content and its failure is harmless (the hint is ignored)
        unsafe { system::advise_huge(first as *mut u8, last - first) };
    }
}

#[cfg(test)]
mod tests {
    use super::Mapped;

    /// Growing (past its reserved range: the pages moved), cutting and
    /// shrinking keep the contents; a dropped array gives its memory back.
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
        // grown again from nothing, inside the range still reserved
        a.resize(5000, (3, 3));
        assert!(a.iter().all(|&v| v == (3, 3)));
    }

    /// A zeroed array reads as zeros everywhere and keeps what is written.
    #[test]
    fn a_zeroed_array_reads_zeros_and_keeps_what_is_written() {
        for (n, huge) in [
            (1usize, false),
            (1000, true),
            (3 << 20, true),
            (3 << 20, false),
        ] {
            // SAFETY: zero is a valid u64
            let mut a: Mapped<[u64; 8]> = unsafe { super::zeroed(n, huge) };
            assert_eq!(a.len(), n);
            assert!(a.iter().all(|v| *v == [0; 8]));
            a[n - 1][7] = 5;
            a[0][0] = 6;
            assert_eq!((a[0][0], a[n - 1][7]), (6, 5));
        }
    }

    /// The slots of a congested torus are a zeroed array of 64-byte records:
    /// asked for huge pages before anything touched them, they get them.
    /// (Rust's allocator clears memory of alignments over 16 bytes itself, so
    /// the slots used to be all on 4 KiB pages, and most of the link arena
    /// too, its huge pages split by remapping it to unaligned addresses.)
    #[cfg(target_os = "linux")]
    #[test]
    fn a_large_array_gets_huge_pages_where_the_kernel_has_them() {
        let enabled = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if !enabled.contains("[always]") && !enabled.contains("[madvise]") {
            eprintln!("transparent huge pages are off here: nothing to check");
            return;
        }
        let fallbacks = || {
            let stat = std::fs::read_to_string("/proc/vmstat").unwrap_or_default();
            stat.lines()
                .find_map(|l| l.strip_prefix("thp_fault_fallback "))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        let before = fallbacks();
        #[derive(Clone, Copy)]
        #[repr(align(64))]
        struct Record([u64; 8]);
        let records = 1 << 20; // 64 MiB
                               // SAFETY: zero is a valid Record
        let mut slots: Mapped<Record> = unsafe { super::zeroed(records, true) };
        let mut grown: Mapped<(u64, u64)> = Mapped::default();
        for i in 0..records {
            slots[i].0[0] = i as u64;
            grown.resize(i + 1, (i as u64, 0));
        }
        // KiB on huge pages in the mappings over [p, p + bytes)
        let huge_kib = |p: *const u8, bytes: usize| -> u64 {
            let span = p as usize..p as usize + bytes;
            let maps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
            let (mut inside, mut kib) = (false, 0);
            for line in maps.lines() {
                let range = line.split_once(' ').and_then(|(r, _)| r.split_once('-'));
                if let Some((lo, hi)) = range {
                    if let (Ok(lo), Ok(hi)) =
                        (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                    {
                        inside = lo < span.end && span.start < hi;
                        continue;
                    }
                }
                if let Some(v) = line.strip_prefix("AnonHugePages:").filter(|_| inside) {
                    kib += v.trim().trim_end_matches(" kB").parse::<u64>().unwrap_or(0);
                }
            }
            kib
        };
        let (slots_kib, grown_kib) = (
            huge_kib(slots.as_ptr() as *const u8, records * 64),
            huge_kib(grown.as_ptr() as *const u8, records * 16),
        );
        if fallbacks() > before {
            eprintln!("the kernel had no huge page to give: nothing to check");
            return;
        }
        assert!(
            slots_kib >= 32 << 10,
            "64 MiB of slots, {slots_kib} KiB on huge pages"
        );
        assert!(
            grown_kib >= 8 << 10,
            "16 MiB grown by doubling, {grown_kib} KiB on huge pages"
        );
    }
}
