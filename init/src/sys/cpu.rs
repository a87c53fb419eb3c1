//! CPU affinity of the calling thread (`sched_setaffinity(2)` and
//! `sched_getaffinity(2)` with pid 0), for fio's `cpus_allowed`; the CPU
//! it runs on (`getcpu(2)`) and the NUMA node its new memory comes from
//! (`set_mempolicy(2)`), for placement on a disk's node. Raw
//! system calls with a mask of [`MAX_CPUS`] bits: nix's `sched_setaffinity`
//! takes a `CpuSet`, the C library's fixed 1,024 CPUs, and bootbench
//! accepts CPU numbers up to 8,191. `run/engine/pin.rs` checks what the
//! kernel silently drops.

use std::io;

use bench_core::vocab::cpus::{MAX_CPUS, MAX_NODES};

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

/// The CPU the calling thread is running on now (`getcpu(2)`).
pub fn current() -> io::Result<u32> {
    let mut cpu: libc::c_uint = 0;
    // SAFETY: the kernel writes one c_uint into `cpu`, a live local; the
    // node and cache pointers are null, which getcpu(2) allows.
    let r = unsafe {
        libc::syscall(
            libc::SYS_getcpu,
            &mut cpu as *mut libc::c_uint,
            std::ptr::null_mut::<libc::c_uint>(),
            std::ptr::null_mut::<libc::c_void>(),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cpu)
}

/// `MPOL_PREFERRED` of `<linux/mempolicy.h>`.
const MPOL_PREFERRED: libc::c_int = 1;

/// Allocate the calling thread's new memory on NUMA node `node` while it
/// has free pages there, elsewhere when not (`set_mempolicy(2)` with
/// `MPOL_PREFERRED`: a full node slows the run, it never fails it). Pages
/// already touched stay where they are. EINVAL for a node at or above
/// [`MAX_NODES`]; the kernel's error otherwise (EINVAL for a node that is
/// not online or has no memory).
pub fn prefer_node(node: u32) -> io::Result<()> {
    if node >= MAX_NODES {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let words = usize::try_from(MAX_NODES.div_ceil(WORD_BITS)).unwrap_or(1);
    let mut mask = vec![0 as libc::c_ulong; words];
    mask[(node / WORD_BITS) as usize] |= 1 << (node % WORD_BITS);
    // One more than the mask's bits: the kernel reads maxnode - 1 bits
    // (mm/mempolicy.c `get_nodes`).
    let maxnode = libc::c_ulong::from(MAX_NODES) + 1;
    // SAFETY: the kernel reads (maxnode - 1) / 8 bytes, MAX_NODES bits,
    // from `mask`, a live Vec of exactly MAX_NODES / WORD_BITS words; the
    // policy applies to the calling thread only.
    let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, MPOL_PREFERRED, mask.as_ptr(), maxnode) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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

    /// The CPU the thread runs on is one it may run on; node 0 is
    /// preferred on any machine (every machine has a node 0 with memory,
    /// NUMA or not, when the kernel has NUMA); a node above the limit is
    /// EINVAL before any call.
    #[test]
    fn current_cpu_and_a_preferred_node() {
        std::thread::spawn(|| {
            let cpu = current().expect("getcpu");
            assert!(affinity().expect("affinity").contains(&cpu));
            match prefer_node(0) {
                Ok(()) => {}
                // A kernel built without NUMA has no set_mempolicy.
                Err(e) => assert_eq!(e.raw_os_error(), Some(libc::ENOSYS), "{e}"),
            }
            assert_eq!(
                prefer_node(MAX_NODES).map_err(|e| e.raw_os_error()),
                Err(Some(libc::EINVAL))
            );
        })
        .join()
        .expect("thread");
    }
}
