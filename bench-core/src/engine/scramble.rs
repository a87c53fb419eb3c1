//! Per-write variation of the write buffers, as fio's default
//! `scramble_buffers=1` (io_u.c, `small_content_scramble`).
//!
//! A slot's buffer is filled with random data once, when the queue is
//! opened; without this, every write from a slot would carry the same bytes,
//! and a device that deduplicates or compresses would store one block for
//! many and look faster than it is. Before each write, fio stamps every
//! 512-byte block of the buffer: the block's byte offset on the target into
//! the first 8 bytes of one of its eight 64-byte lines (which line: the
//! request's start time in ns XOR its offset, modulo 8), and the request's
//! start time (seconds, then nanoseconds) into bytes 48..64 of the block.
//! So no two blocks of one run are alike, at the cost of three stores per
//! 512 bytes. A buffer shorter than 512 bytes is left as it is (as fio).

use crate::vocab::units::Nanos;

/// Bytes per scrambled block: the smallest sector a device may have.
const BLOCK: usize = 512;

/// Stamp `buf`, about to be written at byte `offset`, with `offset` and the
/// request's start time `at`, as fio's `small_content_scramble` does
/// (little-endian words, as fio's native stores on x86).
pub fn scramble(buf: &mut [u8], offset: u64, at: Nanos) {
    let (sec, nsec) = (at.0 / 1_000_000_000, at.0 % 1_000_000_000);
    // 0..8, the 64-byte line of each block that holds its offset.
    let line = usize::try_from((nsec ^ offset) & 7).unwrap_or(0);
    let mut boffset = offset;
    for block in buf.chunks_exact_mut(BLOCK) {
        block[line * 64..line * 64 + 8].copy_from_slice(&boffset.to_le_bytes());
        block[48..56].copy_from_slice(&sec.to_le_bytes());
        block[56..64].copy_from_slice(&nsec.to_le_bytes());
        boffset += BLOCK as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_each_block_as_fio() {
        let mut buf = vec![0xAA_u8; 1024 + 100];
        // 3 s + 5 ns; 5 ^ 4096 = 4101, & 7 = 5: line 5 (bytes 320..328).
        scramble(&mut buf, 4096, Nanos(3_000_000_005));
        for (i, block) in buf.chunks_exact(BLOCK).enumerate() {
            let off = 4096 + 512 * i as u64;
            assert_eq!(block[320..328], off.to_le_bytes(), "block {i}");
            assert_eq!(block[48..56], 3_u64.to_le_bytes());
            assert_eq!(block[56..64], 5_u64.to_le_bytes());
            let untouched = block
                .iter()
                .enumerate()
                .filter(|&(j, _)| !(48..64).contains(&j) && !(320..328).contains(&j));
            assert!(untouched.clone().all(|(_, &b)| b == 0xAA));
            assert_eq!(untouched.count(), 512 - 24);
        }
        // The tail shorter than a block is left alone.
        assert!(buf[1024..].iter().all(|&b| b == 0xAA));
        // Line 0: the offset sits in bytes 0..8, the time still in 48..64.
        let mut b = vec![0_u8; 512];
        scramble(&mut b, 0, Nanos(8));
        assert_eq!((&b[0..8], &b[56..64]), (&[0_u8; 8][..], &8_u64.to_le_bytes()[..]));
    }

    #[test]
    fn short_buffer_is_left_alone() {
        let mut b = vec![7_u8; 511];
        scramble(&mut b, 0, Nanos(123));
        assert!(b.iter().all(|&x| x == 7));
    }
}
