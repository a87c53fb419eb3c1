//! Verification of written data (fio's `verify`): what a verifying write
//! step writes at each offset, and the check of what is read back.
//!
//! Every 8-byte word holds a hash of the step's seed and the word's byte
//! offset on the target, so the contents depend only on (seed, offset): a
//! block written twice holds the same data, any job may write it, and a
//! read-back can recompute what it must find without keeping a copy. Data at
//! the wrong offset (a misdirected write), stale data (a lost write) and
//! corrupted data all differ from the expectation. No sector is all zeros.
//!
//! The hash is two-level, so that a whole request costs little more than
//! a copy: each 4 KiB block of the target has a key, splitmix64 of the seed
//! and the block's number; the word at index `i` of the block is the key
//! plus `i` times the golden ratio, scrambled by three xorshifts (a
//! bijection: the 512 words of a block all differ). Adds, shifts and xors
//! only, which the compiler turns into vector code on any x86-64 (a 64-bit
//! multiply per word, as splitmix64 needs, has no SSE2 or AVX2 instruction:
//! per word it cost three 32-bit multiplies and was a fifth of a random
//! burn-in's CPU time).

use crate::vocab::rng::splitmix64;

/// The errno a failed verification reports: EILSEQ, as fio's verify does.
pub const VERIFY_ERRNO: i32 = 84;

/// Bytes per block of one key.
const BLOCK: u64 = 4096;
/// The step between the words of a block before they are scrambled.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The key of the block at byte offset `block_start` (a multiple of [`BLOCK`]).
fn key(seed: u64, block_start: u64) -> u64 {
    let mut s = seed ^ (block_start / BLOCK).rotate_left(17);
    splitmix64(&mut s)
}

/// The word of index `i` of a block of key `key`.
fn word_in(key: u64, i: u64) -> u64 {
    scramble(key.wrapping_add(i.wrapping_mul(GOLDEN)))
}

/// xorshift64's three steps (13, 7, 17): a bijection of the 64-bit words.
/// The words of a block go in as distinct values, so they come out
/// distinct: at most one of a block's words is zero, and no sector is
/// ever all zeros (what an unwritten one holds).
#[inline(always)]
fn scramble(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// The word at byte offset `offset` (a multiple of 8) for `seed`.
fn word(seed: u64, offset: u64) -> u64 {
    let start = offset - offset % BLOCK;
    word_in(key(seed, start), (offset - start) / 8)
}

/// The bytes that `buf.len()` bytes at `offset` hold when written with `seed`.
/// `offset` need not be word-aligned.
pub fn fill(seed: u64, offset: u64, buf: &mut [u8]) {
    // The bytes before the first whole word, one word's part at a time.
    let head = usize::try_from(offset.wrapping_neg() & 7).unwrap_or(0).min(buf.len());
    let (first, rest) = buf.split_at_mut(head);
    fill_part(seed, offset, first);
    // Whole words, a block's run at a time: one key per block, a store per
    // word (a copy of a variable length per word would be a call to memcpy).
    let mut at = offset + head as u64;
    let mut rest = rest;
    while rest.len() >= 8 {
        let start = at - at % BLOCK;
        let k = key(seed, start);
        let first_word = (at - start) / 8;
        let words = usize::try_from((start + BLOCK - at) / 8)
            .unwrap_or(usize::MAX)
            .min(rest.len() / 8);
        let (run, tail) = rest.split_at_mut(words * 8);
        // The words' inputs step by GOLDEN: an add per word, not a multiply.
        let mut x = k.wrapping_add(first_word.wrapping_mul(GOLDEN));
        for w in run.chunks_exact_mut(8) {
            w.copy_from_slice(&scramble(x).to_le_bytes());
            x = x.wrapping_add(GOLDEN);
        }
        at += (words * 8) as u64;
        rest = tail;
    }
    fill_part(seed, at, rest);
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
    // Whole words, a block's run at a time: the words' differences folded
    // without a branch (vector code), one test per run; the first word that
    // differs then found, and in it the byte.
    let mut at = offset + head as u64;
    let mut i = head;
    while data.len() - i >= 8 {
        let start = at - at % BLOCK;
        let k = key(seed, start);
        let first_word = (at - start) / 8;
        let words = usize::try_from((start + BLOCK - at) / 8)
            .unwrap_or(usize::MAX)
            .min((data.len() - i) / 8);
        let run = &data[i..i + words * 8];
        let x0 = k.wrapping_add(first_word.wrapping_mul(GOLDEN));
        let (differs, _) = run.chunks_exact(8).fold((0u64, x0), |(acc, x), w| {
            let got = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            (acc | (got ^ scramble(x)), x.wrapping_add(GOLDEN))
        });
        if differs != 0 {
            for (j, w) in run.chunks_exact(8).enumerate() {
                let want = word_in(k, first_word + j as u64).to_le_bytes();
                if w != want {
                    return w
                        .iter()
                        .zip(want.iter())
                        .position(|(a, b)| a != b)
                        .map(|b| i + j * 8 + b);
                }
            }
        }
        at += (words * 8) as u64;
        i += words * 8;
    }
    part(at, &data[i..], i)
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
        assert!(a.chunks(512).all(|w| w.iter().any(|&b| b != 0)), "no zero sector");
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

    /// The 512 words of a block all differ, and so do the same words of
    /// two neighbouring blocks; a request across a block boundary is the
    /// two blocks' words.
    #[test]
    fn words_differ_within_and_across_blocks() {
        let mut two = vec![0u8; 8192];
        fill(21, 4096, &mut two);
        let words: Vec<u64> = two
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
            .collect();
        let mut sorted = words.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), words.len(), "every word of both blocks differs");
        for (j, w) in words.iter().enumerate() {
            assert_eq!(*w, word(21, 4096 + 8 * j as u64), "word {j}");
        }
        let mut across = vec![0u8; 24];
        fill(21, 4096 + 4096 - 12, &mut across);
        assert_eq!(across[..], two[4096 - 12..4096 + 12]);
        // Each byte value about as often as any other (no compressible
        // pattern): 16 KiB, 64 of each expected.
        let mut big = vec![0u8; 16384];
        fill(3, 0, &mut big);
        let mut counts = [0u32; 256];
        for b in &big {
            counts[usize::from(*b)] += 1;
        }
        assert!(counts.iter().all(|&c| (25..=110).contains(&c)), "{counts:?}");
    }
}
