//! Pinning a job's thread to its CPUs (fio's `cpus_allowed`), with the
//! checks `sched_setaffinity(2)` does not make: every CPU online, and the
//! thread's affinity afterwards exactly what was asked.

use std::io;
use std::path::Path;

use bench_core::vocab::cpus::{format_cpu_list, parse_cpu_list};
use nix::errno::Errno;

use crate::sys::cpu;

/// The errno of an I/O error (EIO if it did not come from the OS).
fn errno_of(e: &io::Error) -> Errno {
    Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))
}

/// Where the online CPUs are listed, under a sysfs root.
const ONLINE: &str = "devices/system/cpu/online";

/// The online CPUs (`devices/system/cpu/online` under the sysfs root `sys`).
pub fn online(sys: &Path) -> io::Result<Vec<u32>> {
    let text = std::fs::read_to_string(sys.join(ONLINE))?;
    parse_cpu_list(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// Why a thread could not be pinned: the errno, and the reason in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinError {
    /// The errno.
    pub errno: Errno,
    /// What failed, naming the CPUs.
    pub message: String,
}

/// Pin the calling thread to `cpus` (fio's `cpus_allowed`), checking what
/// `sched_setaffinity` silently drops: every CPU must be online (as the
/// sysfs root `sys` lists them), and after
/// the call the thread's affinity must be exactly `cpus` (a cpuset that
/// does not allow one of them is an error too). All errors are EINVAL but
/// the kernel's own.
pub fn pin(sys: &Path, cpus: &[u32]) -> Result<(), PinError> {
    let mut want = cpus.to_vec();
    want.sort_unstable();
    want.dedup();
    let cpus = want.as_slice();
    let list = format_cpu_list(cpus);
    let online = online(sys).map_err(|e| PinError {
        errno: errno_of(&e),
        message: format!(
            "cpus_allowed {list}: cannot read the online CPUs ({}): {e}",
            sys.join(ONLINE).display()
        ),
    })?;
    if let Some(c) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(PinError {
            errno: Errno::EINVAL,
            message: format!(
                "cpus_allowed {list}: CPU {c} is not online on this machine (online: {}); errno {} (EINVAL)",
                format_cpu_list(&online),
                libc::EINVAL
            ),
        });
    }
    cpu::set_affinity(cpus).map_err(|e| {
        let errno = errno_of(&e);
        PinError {
            errno,
            message: format!(
                "cpus_allowed {list}: sched_setaffinity failed: {e} (errno {})",
                errno as i32
            ),
        }
    })?;
    let got = cpu::affinity().map_err(|e| {
        let errno = errno_of(&e);
        PinError {
            errno,
            message: format!(
                "cpus_allowed {list}: sched_getaffinity failed: {e} (errno {})",
                errno as i32
            ),
        }
    })?;
    if got != cpus {
        return Err(PinError {
            errno: Errno::EINVAL,
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
    use crate::sysfs;
    use bench_core::vocab::cpus::MAX_CPUS;

    /// A fixture's list of online CPUs is read from under its root.
    #[test]
    fn online_cpus_come_from_the_sysfs_root() {
        let t = crate::testutil::TempDir::new("online-cpus");
        std::fs::create_dir_all(t.0.join("devices/system/cpu")).unwrap();
        std::fs::write(t.0.join(ONLINE), "0-2,5\n").unwrap();
        assert_eq!(online(&t.0).expect("read"), [0, 1, 2, 5]);
        let e = pin(&t.0, &[3]).expect_err("CPU 3 is not online there");
        assert!(e.message.contains("CPU 3 is not online"), "{}", e.message);
        let gone = t.0.join("gone");
        let e = pin(&gone, &[0]).expect_err("no list");
        assert_eq!(e.errno, Errno::ENOENT);
        assert!(e.message.contains("gone/devices/system/cpu/online"), "{}", e.message);
    }

    /// On a thread of its own: pinning to one online CPU reads back as
    /// that CPU; an offline or absent CPU is refused, naming it, and the
    /// thread's affinity is left as it was.
    #[test]
    fn pins_the_calling_thread_and_refuses_absent_cpus() {
        std::thread::spawn(|| {
            let online = online(sysfs::root()).expect("online CPUs");
            let before = cpu::affinity().expect("affinity");
            assert!(!before.is_empty());
            let last = *online.last().expect("a CPU");
            pin(sysfs::root(), &[last]).expect("pin to an online CPU");
            assert_eq!(cpu::affinity().expect("affinity"), vec![last]);
            let absent = MAX_CPUS - 1;
            let e = pin(sysfs::root(), &[last, absent]).expect_err("an absent CPU");
            assert_eq!(e.errno, Errno::EINVAL);
            assert!(
                e.message.contains(&format!("CPU {absent} is not online")),
                "{}",
                e.message
            );
            assert_eq!(
                cpu::affinity().expect("affinity"),
                vec![last],
                "unchanged by the refusal"
            );
        })
        .join()
        .expect("pinned thread");
    }
}
