//! "No signature" does not mean blank: the second member of a striped set,
//! or the disk of a LUKS or VeraCrypt volume whose header is kept
//! elsewhere, carries none. So before a write the target is also sampled,
//! and a sample that is not all zeros means it holds data.

use std::fs::File;
use std::io;

use super::read_region;
use bench_core::device::signatures::{merge, ALIGN};

/// Bytes sampled at each end of the target.
pub const EDGE: u64 = 1 << 20;
/// Samples spread evenly over the target between the ends.
pub const SAMPLES: u64 = 64;
/// Bytes in each of those samples.
pub const SAMPLE: u64 = 64 << 10;

/// The ranges (`start`, `len`) [`sample_data`] reads on a target of `size`
/// bytes: the first and the last [`EDGE`] bytes and [`SAMPLES`] ranges of
/// [`SAMPLE`] bytes at `i * size / SAMPLES` (i = 0..SAMPLES), every start a
/// multiple of [`ALIGN`] (so a descriptor opened with O_DIRECT reads them
/// too), clamped to the target, sorted, overlaps merged. A small target is
/// read whole.
pub fn sample_plan(size: u64) -> Vec<(u64, u64)> {
    let align_down = |x: u64| x & !(ALIGN - 1);
    let clamp = |start: u64, len: u64| (start, len.min(size.saturating_sub(start)));
    let mut ranges = vec![clamp(0, EDGE)];
    let tail = align_down(size.saturating_sub(EDGE));
    ranges.push(clamp(tail, EDGE + ALIGN));
    let step = size / SAMPLES;
    for i in 0..SAMPLES {
        ranges.push(clamp(align_down(step * i), SAMPLE));
    }
    merge(ranges)
}

/// The offset of the first non-zero byte of `bytes`, which start at `start`.
pub fn first_nonzero(start: u64, bytes: &[u8]) -> Option<u64> {
    let i = bytes.iter().position(|&b| b != 0)?;
    Some(start + u64::try_from(i).ok()?)
}

/// Sample the target behind `f` (of `size` bytes) as [`sample_plan`] says,
/// with positioned reads only: the offset of the first non-zero byte found,
/// or `None` if every sample is zeros.
pub fn sample_data(f: &File, size: u64) -> io::Result<Option<u64>> {
    for (start, len) in sample_plan(size) {
        let bytes = read_region(f, start, len)?;
        if let Some(at) = first_nonzero(start, &bytes) {
            return Ok(Some(at));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn the_plan_covers_both_ends_and_64_places_aligned() {
        let size = 10 << 30;
        let plan = sample_plan(size);
        assert_eq!(plan.first(), Some(&(0, EDGE)));
        let last = plan.last().unwrap();
        assert_eq!(last.0 + last.1, size);
        assert!(last.1 >= EDGE);
        // 64 places, the first inside the head: 63 separate ranges + the two ends.
        assert_eq!(plan.len(), 65);
        let total: u64 = plan.iter().map(|r| r.1).sum();
        assert!(total <= 2 * EDGE + ALIGN + SAMPLES * SAMPLE, "{total}");
        for &(s, l) in &plan {
            assert_eq!(s % ALIGN, 0);
            assert!(s + l <= size);
        }
        for i in 1..SAMPLES {
            let at = (size / SAMPLES * i) & !(ALIGN - 1);
            assert!(plan.iter().any(|&(s, l)| s == at && l == SAMPLE), "sample {i} at {at}");
        }
    }

    #[test]
    fn small_targets_are_read_whole_and_odd_sizes_to_the_end() {
        for size in [0, 1, 4095, 64 << 10, MIB, 2 * MIB, 2 * MIB + 12345, 5 * MIB + 511] {
            let plan = sample_plan(size);
            if size <= 2 * MIB {
                let want = if size == 0 { vec![] } else { vec![(0, size)] };
                assert_eq!(plan, want, "{size}");
            }
            let last = plan.last().copied().unwrap_or((0, 0));
            assert_eq!(last.0 + last.1, size, "{size}: {plan:?}");
            for &(s, l) in &plan {
                assert_eq!(s % ALIGN, 0, "{size}");
                assert!(l > 0 && s + l <= size, "{size}: {plan:?}");
            }
        }
    }

    #[test]
    fn first_nonzero_finds_the_byte() {
        assert_eq!(first_nonzero(100, &[0, 0, 7, 0]), Some(102));
        assert_eq!(first_nonzero(100, &[0; 4096]), None);
        assert_eq!(first_nonzero(0, &[]), None);
    }
}
