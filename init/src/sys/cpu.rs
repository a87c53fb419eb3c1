//! CPU affinity of the calling thread (`sched_setaffinity(2)` and
//! `sched_getaffinity(2)` with pid 0), for fio's `cpus_allowed`. Raw
//! system calls with a mask of [`MAX_CPUS`] bits: nix's `sched_setaffinity`
//! takes a `CpuSet`, the C library's fixed 1,024 CPUs, and bootbench
//! accepts CPU numbers up to 8,191. `run/engine/pin.rs` checks what the
//! kernel silently drops.

use std::io;

use bench_core::vocab::cpus::MAX_CPUS;

/// Bits in one word of a kernel CPU mask.
const WORD_BITS: u32 = libc::c_ulong::BITS;

/// The words of a mask able to hold every CPU below [`MAX_CPUS`].
fn mask_words() -> usize {
    usize::try_from(MAX_CPUS.div_ceil(WORD_BITS)).unwrap_or(1)
}

/// Let the calling thread run on `cpus` only. EINVAL for an empty list or
/// a CPU at or above [`MAX_CPUS`]; the kernel's error otherwise (it keeps
/// only the CPUs that are online and allowed to this process, EINVAL if
/// that leaves none: `run/engine/pin.rs` checks each).
pub fn set_affinity(cpus: &[u32]) -> io::Result<()> {
    if cpus.is_empty() || cpus.iter().any(|&c| c >= MAX_CPUS) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut mask = vec![0 as libc::c_ulong; mask_words()];
    for &c in cpus {
        let (word, bit) = ((c / WORD_BITS) as usize, c % WORD_BITS);
        mask[word] |= 1 << bit;
    }
    let bytes = mask.len() * std::mem::size_of::<libc::c_ulong>();
    // SAFETY: the kernel reads `bytes` bytes from `mask`, a live Vec of
    // exactly that many bytes; pid 0 is the calling thread.
    let r = unsafe { libc::syscall(libc::SYS_sched_setaffinity, 0, bytes, mask.as_ptr()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the calling thread may run on, sorted.
pub fn affinity() -> io::Result<Vec<u32>> {
    let mut mask = vec![0 as libc::c_ulong; mask_words()];
    let bytes = mask.len() * std::mem::size_of::<libc::c_ulong>();
    // SAFETY: the kernel writes at most `bytes` bytes into `mask`, a live,
    // writable Vec of exactly that many bytes; pid 0 is the calling thread.
    let r = unsafe { libc::syscall(libc::SYS_sched_getaffinity, 0, bytes, mask.as_mut_ptr()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    for (w, word) in (0u32..).zip(&mask) {
        for bit in 0..WORD_BITS {
            if word & (1 << bit) != 0 {
                out.push(w * WORD_BITS + bit);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a thread of its own: the affinity set reads back; an empty list
    /// or a CPU at or above MAX_CPUS is EINVAL before any call.
    #[test]
    fn sets_and_reads_the_calling_threads_affinity() {
        std::thread::spawn(|| {
            let before = affinity().expect("affinity");
            assert!(!before.is_empty());
            let last = *before.last().expect("a CPU");
            set_affinity(&[last]).expect("set");
            assert_eq!(affinity().expect("affinity"), vec![last]);
            assert_eq!(set_affinity(&[]).map_err(|e| e.raw_os_error()), Err(Some(libc::EINVAL)));
            assert_eq!(
                set_affinity(&[MAX_CPUS]).map_err(|e| e.raw_os_error()),
                Err(Some(libc::EINVAL))
            );
        })
        .join()
        .expect("thread");
    }
}
