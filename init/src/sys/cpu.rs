//! CPU affinity of the calling thread (`sched_setaffinity(2)` and
//! `sched_getaffinity(2)` with pid 0), and the machine's online CPUs: for
//! fio's `cpus_allowed`.

use std::io;

use bench_core::cpus::{format_cpu_list, parse_cpu_list, MAX_CPUS};

/// Bits in one word of a kernel CPU mask.
const WORD_BITS: u32 = libc::c_ulong::BITS;

/// The words of a mask able to hold every CPU below [`MAX_CPUS`].
fn mask_words() -> usize {
    usize::try_from(MAX_CPUS.div_ceil(WORD_BITS)).unwrap_or(1)
}

/// The online CPUs (`/sys/devices/system/cpu/online`).
pub fn online() -> io::Result<Vec<u32>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online")?;
    parse_cpu_list(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// Let the calling thread run on `cpus` only. EINVAL for an empty list or
/// a CPU at or above [`MAX_CPUS`]; the kernel's error otherwise (it keeps
/// only the CPUs that are online and allowed to this process, EINVAL if
/// that leaves none: see [`pin`] for a check of each).
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

/// Why a thread could not be pinned: the errno, and the reason in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinError {
    /// The positive errno.
    pub errno: i32,
    /// What failed, naming the CPUs.
    pub message: String,
}

/// Pin the calling thread to `cpus` (fio's `cpus_allowed`), checking what
/// `sched_setaffinity` silently drops: every CPU must be online, and after
/// the call the thread's affinity must be exactly `cpus` (a cpuset that
/// does not allow one of them is an error too). All errors are EINVAL but
/// the kernel's own.
pub fn pin(cpus: &[u32]) -> Result<(), PinError> {
    let mut want = cpus.to_vec();
    want.sort_unstable();
    want.dedup();
    let cpus = want.as_slice();
    let list = format_cpu_list(cpus);
    let online = online().map_err(|e| PinError {
        errno: e.raw_os_error().unwrap_or(libc::EIO),
        message: format!("cpus_allowed {list}: cannot read the online CPUs (/sys/devices/system/cpu/online): {e}"),
    })?;
    if let Some(c) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(PinError {
            errno: libc::EINVAL,
            message: format!(
                "cpus_allowed {list}: CPU {c} is not online on this machine (online: {}); errno {} (EINVAL)",
                format_cpu_list(&online),
                libc::EINVAL
            ),
        });
    }
    set_affinity(cpus).map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        PinError {
            errno,
            message: format!("cpus_allowed {list}: sched_setaffinity failed: {e} (errno {errno})"),
        }
    })?;
    let got = affinity().map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        PinError {
            errno,
            message: format!("cpus_allowed {list}: sched_getaffinity failed: {e} (errno {errno})"),
        }
    })?;
    if got != cpus {
        return Err(PinError {
            errno: libc::EINVAL,
            message: format!(
                "cpus_allowed {list}: the kernel let the thread run on {} only (a cpuset of this process \
                 excludes the others); errno {} (EINVAL)",
                format_cpu_list(&got),
                libc::EINVAL
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a thread of its own: pinning to one online CPU reads back as
    /// that CPU; an offline or absent CPU is refused, naming it, and the
    /// thread's affinity is left as it was.
    #[test]
    fn pins_the_calling_thread_and_refuses_absent_cpus() {
        std::thread::spawn(|| {
            let online = online().expect("online CPUs");
            let before = affinity().expect("affinity");
            assert!(!before.is_empty());
            let last = *online.last().expect("a CPU");
            pin(&[last]).expect("pin to an online CPU");
            assert_eq!(affinity().expect("affinity"), vec![last]);
            let absent = MAX_CPUS - 1;
            let e = pin(&[last, absent]).expect_err("an absent CPU");
            assert_eq!(e.errno, libc::EINVAL);
            assert!(
                e.message.contains(&format!("CPU {absent} is not online")),
                "{}",
                e.message
            );
            assert_eq!(affinity().expect("affinity"), vec![last], "unchanged by the refusal");
            assert_eq!(set_affinity(&[]).map_err(|e| e.raw_os_error()), Err(Some(libc::EINVAL)));
        })
        .join()
        .expect("pinned thread");
    }
}
