//! The frame encoder's memory: streaming the frame of a document of
//! several hundred KiB takes a few small allocations (the header line),
//! never one the size of the document's base64, which is what PID 1 must
//! not hold. A test binary of its own, for its counting allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::convert::Infallible;

use bench_core::frame::{encode_to, Nonce};

/// The system allocator, counting what each thread holds from it.
struct Counting;

thread_local! {
    /// Bytes this thread holds now, and the most it held since [`held`]
    /// last reset it.
    static HELD: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

fn account(grow: usize, shrink: usize) {
    // try_with: nothing to count while the thread's locals are torn down.
    let _ = HELD.try_with(|h| {
        let (now, peak) = h.get();
        let now = (now + grow).saturating_sub(shrink);
        h.set((now, peak.max(now)));
    });
}

/// The most this thread held above what it held when `f` started, while `f` ran.
fn peak_growth(f: impl FnOnce()) -> usize {
    let start = HELD.with(|h| {
        let (now, _) = h.get();
        h.set((now, now));
        now
    });
    f();
    HELD.with(|h| h.get().1) - start
}

// SAFETY: every method hands its arguments unchanged to `System`, which
// meets GlobalAlloc's contract; the counting beside it allocates nothing
// (a const-initialised thread-local Cell) and never unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `layout` (non-zero size) are System's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            account(layout.size(), 0);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, that is from System, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        account(0, layout.size());
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A writer that only counts the bytes: it allocates nothing.
struct Count(usize);

impl embedded_io::ErrorType for Count {
    type Error = Infallible;
}

impl embedded_io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

#[test]
fn streaming_a_large_frame_holds_no_more_than_a_line() {
    let json: Vec<u8> = (0..600_u32 << 10)
        .map(|i| b"{\"x\":[1,2,3]}\n"[i as usize % 14])
        .collect();
    let base64 = json.len().div_ceil(3) * 4;
    let mut out = Count(0);
    let grown = peak_growth(|| {
        let Ok(()) = encode_to(&mut out, "big.json", &json, Nonce([7; 16]));
    });
    assert!(out.0 > base64, "{} bytes written", out.0);
    assert!(
        grown < 1024,
        "the encoder held {grown} bytes at once (the base64 is {base64})"
    );
}
