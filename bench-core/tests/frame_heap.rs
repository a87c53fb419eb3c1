//! The frame encoder's memory: streaming the frame of a document of
//! several hundred KiB holds its DEFLATE stream and the compressor's state,
//! never anything the size of the document's base64, which is what PID 1
//! must not hold. A test binary of its own, for its counting allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::convert::Infallible;

use bench_core::document::frame::{deflate, encode_to, Nonce};

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

/// A document of `kib` KiB: a short JSON record repeated.
fn document(kib: u32) -> Vec<u8> {
    (0..kib << 10).map(|i| b"{\"x\":[1,2,3]}\n"[i as usize % 14]).collect()
}

/// The most the encoder holds at once framing `json`, and the frame's length.
fn framing(json: &[u8]) -> (usize, usize) {
    let mut out = Count(0);
    let grown = peak_growth(|| {
        let Ok(()) = encode_to(&mut out, "big.json", json, Nonce([7; 16]));
    });
    (grown, out.0)
}

#[test]
fn streaming_a_large_frame_holds_its_deflate_stream_not_its_base64() {
    let (small, big) = (document(600), document(2400));
    let (held_small, len_small) = framing(&small);
    let (held_big, len_big) = framing(&big);
    eprintln!(
        "held {held_small} B for {} B, {held_big} B for {} B",
        small.len(),
        big.len()
    );
    // The document's base64 would be 800 KiB and 3.2 MiB.
    let base64 = small.len().div_ceil(3) * 4;
    assert!(len_small > 1000, "{len_small} bytes written");
    assert!(
        held_small < base64 / 2,
        "the encoder held {held_small} bytes at once (the base64 is {base64})"
    );
    // Beyond the compressor's fixed state, what it holds grows with the
    // DEFLATE stream (up to three times it while its Vec doubles: the old
    // buffer and the new one), not the document.
    let stream = deflate(&big).expect("deflated").len();
    assert!(
        held_big <= held_small + 3 * stream + 1024,
        "{held_small} B held for {} B, {held_big} B for {} B (a DEFLATE stream of {stream} B)",
        small.len(),
        big.len()
    );
    assert!(len_big > len_small);
}
