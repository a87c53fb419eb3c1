//! Heap buffers aligned for O_DIRECT.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// The alignment and length granule of every [`AlignedBuf`]: the largest
/// logical block size in use (4Kn disks), so any O_DIRECT transfer from the
/// start of the buffer is aligned for memory.
pub const ALIGN: usize = 4096;

/// A zero-initialised heap buffer whose address is a multiple of [`ALIGN`] and
/// whose length is a non-zero multiple of [`ALIGN`].
///
/// # Invariants
/// - `ptr` points to an allocation made with `layout` by the global
///   allocator, owned by this value alone, freed exactly once in `Drop`.
/// - `layout.size() == len`, `len > 0`, `len % ALIGN == 0`,
///   `layout.align() == ALIGN`; every byte is initialised (allocated zeroed).
#[derive(Debug)]
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuf uniquely owns its allocation (no aliasing pointer is kept
// anywhere else, see the struct invariants), exactly like a `Box<[u8]>`, so
// moving it to another thread moves the sole access to the bytes with it.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared references only hand out `&[u8]` (`as_slice`, `as_ptr` for
// reading), and mutation needs `&mut self`; as for `Box<[u8]>`, `&AlignedBuf`
// across threads allows only concurrent reads.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of at least `min_len` bytes (rounded up to a multiple
    /// of [`ALIGN`], at least one granule). `None` if the size overflows or
    /// the allocator fails.
    pub fn new(min_len: usize) -> Option<AlignedBuf> {
        let len = min_len.max(1).checked_next_multiple_of(ALIGN)?;
        let layout = Layout::from_size_align(len, ALIGN).ok()?;
        // SAFETY: `layout` has a non-zero size (len >= ALIGN > 0), which is
        // the only precondition of `alloc_zeroed`.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw)?;
        Some(AlignedBuf { ptr, layout })
    }

    /// Length in bytes (a multiple of [`ALIGN`]).
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Never: a buffer holds at least [`ALIGN`] bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: by the invariants, `ptr` is valid for `len` initialised
        // bytes for as long as `self` lives, and `&self` excludes writers.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len()) }
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: by the invariants, `ptr` is valid for `len` initialised
        // bytes owned by `self`; `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len()) }
    }

    /// The start address, for the kernel to read from or write into
    /// (io_uring). The caller keeps the buffer alive and unaliased by Rust
    /// references for as long as the kernel uses it.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` was returned by `alloc_zeroed(layout)` with this very
        // `layout` and, being uniquely owned, has not been freed before.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_up_and_aligns() {
        for (ask, want) in [(0, 4096), (1, 4096), (4096, 4096), (4097, 8192), (1 << 20, 1 << 20)] {
            let mut b = AlignedBuf::new(ask).expect("alloc");
            assert_eq!(b.len(), want, "asked {ask}");
            assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0, "asked {ask}");
            assert!(b.as_slice().iter().all(|&x| x == 0), "zeroed");
        }
    }

    #[test]
    fn writes_are_visible() {
        let mut b = AlignedBuf::new(8192).expect("alloc");
        b.as_mut_slice()[8191] = 7;
        b.as_mut_slice()[0] = 3;
        assert_eq!((b.as_slice()[0], b.as_slice()[8191]), (3, 7));
    }

    #[test]
    fn overflow_is_none() {
        assert!(AlignedBuf::new(usize::MAX).is_none());
    }
}
