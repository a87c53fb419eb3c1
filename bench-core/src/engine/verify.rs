//! Verification of written data (fio's `verify`): what a verifying write
//! step writes at each offset, and the check of what is read back.
//!
//! Every 8-byte word holds a hash of the step's seed and the word's byte
//! offset on the target, so the contents depend only on (seed, offset): a
//! block written twice holds the same data, any job may write it, and a
//! read-back can recompute what it must find without keeping a copy. Data at
//! the wrong offset (a misdirected write), stale data (a lost write) and
//! corrupted data all differ from the expectation. Never all zeros.

/// The errno a failed verification reports: EILSEQ, as fio's verify does.
pub const VERIFY_ERRNO: i32 = 84;

/// The word at byte offset `offset` (a multiple of 8) for `seed`.
fn word(seed: u64, offset: u64) -> u64 {
    let mut s = seed ^ offset.rotate_left(17);
    let w = crate::vocab::rng::splitmix64(&mut s);
    // A zero word would look like an unwritten sector; the hash is zero
    // for one input in 2^64, map it away.
    if w == 0 {
        1
    } else {
        w
    }
}

/// The bytes that `buf.len()` bytes at `offset` hold when written with `seed`.
/// `offset` need not be word-aligned.
pub fn fill(seed: u64, offset: u64, buf: &mut [u8]) {
    // The bytes before the first whole word, one word's part at a time.
    let head = usize::try_from(offset.wrapping_neg() & 7).unwrap_or(0).min(buf.len());
    let (first, rest) = buf.split_at_mut(head);
    fill_part(seed, offset, first);
    // Whole words: a store each (a copy of a variable length per word
    // would be a call to memcpy, most of the time of a verifying step).
    let mut at = offset + head as u64;
    let mut words = rest.chunks_exact_mut(8);
    for w in &mut words {
        w.copy_from_slice(&word(seed, at).to_le_bytes());
        at += 8;
    }
    fill_part(seed, at, words.into_remainder());
}

/// [`fill`] of fewer bytes than a word, or of any bytes, a word's part at
/// a time.
fn fill_part(seed: u64, offset: u64, buf: &mut [u8]) {
    let mut pos = offset;
    let mut i = 0;
    while i < buf.len() {
        let base = pos & !7;
        let bytes = word(seed, base).to_le_bytes();
        let skip = usize::try_from(pos - base).unwrap_or(0);
        let n = (8 - skip).min(buf.len() - i);
        buf[i..i + n].copy_from_slice(&bytes[skip..skip + n]);
        i += n;
        pos += n as u64;
    }
}

/// The index of the first byte of `data` (read at `offset`) that differs
/// from what [`fill`] writes there with `seed`, or `None` if all match.
pub fn first_mismatch(seed: u64, offset: u64, data: &[u8]) -> Option<usize> {
    let head = usize::try_from(offset.wrapping_neg() & 7).unwrap_or(0).min(data.len());
    let mut expect = [0u8; 8];
    let mut part = |at: u64, bytes: &[u8], base: usize| {
        let e = &mut expect[..bytes.len()];
        fill_part(seed, at, e);
        bytes.iter().zip(e.iter()).position(|(a, b)| a != b).map(|j| base + j)
    };
    if let Some(i) = part(offset, &data[..head], 0) {
        return Some(i);
    }
    // Whole words compared as words; the first that differs, byte by byte.
    let mut at = offset + head as u64;
    let mut i = head;
    let mut words = data[head..].chunks_exact(8);
    for w in &mut words {
        let want = word(seed, at).to_le_bytes();
        if w != want {
            return w.iter().zip(want.iter()).position(|(a, b)| a != b).map(|j| i + j);
        }
        at += 8;
        i += 8;
    }
    part(at, words.remainder(), i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_depend_on_seed_and_offset_only() {
        let mut a = [0u8; 4096];
        let mut b = [0u8; 4096];
        fill(7, 8192, &mut a);
        fill(7, 8192, &mut b);
        assert_eq!(a, b, "same seed and offset: same bytes");
        fill(7, 12288, &mut b);
        assert_ne!(a, b, "another offset: other bytes");
        fill(8, 8192, &mut b);
        assert_ne!(a, b, "another seed: other bytes");
        assert!(a.chunks(8).all(|w| w != [0u8; 8]), "no zero word");
    }

    /// A request that covers part of another gets the same bytes there,
    /// including at unaligned starts.
    #[test]
    fn sub_ranges_match_the_whole() {
        let mut whole = [0u8; 1024];
        fill(3, 1000, &mut whole);
        for (start, len) in [(0usize, 1024usize), (1, 7), (5, 20), (512, 512), (1023, 1)] {
            let mut part = vec![0u8; len];
            fill(3, 1000 + start as u64, &mut part);
            assert_eq!(part[..], whole[start..start + len], "bytes {start}..+{len}");
        }
    }

    /// At every alignment of the start and the end (the parts before and
    /// after the whole words), a changed byte is found where it is.
    #[test]
    fn first_mismatch_at_every_alignment() {
        for offset in 4000..4017u64 {
            for len in 0..41usize {
                let mut data = vec![0u8; len];
                fill(5, offset, &mut data);
                assert_eq!(first_mismatch(5, offset, &data), None, "{offset}+{len}");
                for at in 0..len {
                    let mut bad = data.clone();
                    bad[at] ^= 0x10;
                    assert_eq!(first_mismatch(5, offset, &bad), Some(at), "{offset}+{len}: {at}");
                }
            }
        }
    }

    #[test]
    fn first_mismatch_finds_the_first_wrong_byte() {
        let mut data = vec![0u8; 3000];
        fill(11, 4096, &mut data);
        assert_eq!(first_mismatch(11, 4096, &data), None);
        data[2049] ^= 0x40;
        data[2500] ^= 1;
        assert_eq!(first_mismatch(11, 4096, &data), Some(2049));
        // Correct data read from the wrong place does not pass.
        let mut moved = vec![0u8; 512];
        fill(11, 4096 + 512, &mut moved);
        assert_eq!(first_mismatch(11, 4096, &moved), Some(0));
        // Nor does another seed's (an earlier run's) data.
        fill(12, 4096, &mut moved);
        assert!(first_mismatch(11, 4096, &moved).is_some());
    }
}
