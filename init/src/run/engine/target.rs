//! The target: a block device or a regular file, opened once (read-only,
//! or through its write permit's claim), whose queues reopen that one
//! descriptor.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::sync::Arc;
use std::time::Duration;

use bench_core::io::{Access, Geometry, IoError, IoReq, Op, OpenSpec, Target};
use bench_core::spec::IoEngine;
use bench_core::vocab::rng::Rng;
use bench_core::vocab::units::Nanos;
use nix::errno::Errno;
use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};

use super::queue::{CmdQueue, DevQueue, SyncQueue, UringQueue, WriteMark};
use super::{errno_of, EngineError};
use crate::disks::file;
use crate::disks::identity::{FILE_LOGICAL_BLOCK, FILE_PHYSICAL_BLOCK};
use crate::safety::{self, WritePermit};
use crate::sys::blk;
use crate::sys::buf::AlignedBuf;
use crate::sys::uring::{Ring, RingOpts};
use crate::sys::uring_cmd::CmdRing;

/// What a [`DevTarget`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// A block device: geometry from ioctls, caches dropped with BLKFLSBUF.
    Block,
    /// A regular file: geometry from its length, caches dropped with fadvise.
    File,
}

/// A block device or a regular file to benchmark.
///
/// # Invariants
/// - `ro` is the one descriptor opened by path: read-only; for a writable
///   target it is the claim's (O_EXCL for a block device, so a device that
///   is mounted or part of an array is never written, and checked to be the
///   device the grant was made for). It serves ioctls and cache drops;
///   every queue reopens *it* (`/proc/self/fd/N`, [`safety::reopen_path`]),
///   never the path, so every request reaches the device `ro` has open.
/// - Queues that write are opened only if the target was opened with a
///   permit (`writable`).
/// - `wrote` is set when the first write request of any of its queues is
///   handed to the kernel (just before `pwrite`; as it enters io_uring's
///   submission queue), and never cleared: false means no write of this
///   target's reached the device.
#[derive(Debug)]
pub struct DevTarget {
    kind: TargetKind,
    geometry: Geometry,
    ro: File,
    writable: bool,
    wrote: Arc<WriteMark>,
}

fn ioctl_err<'p>(path: &'p str, request: &'static str) -> impl Fn(Errno) -> EngineError + 'p {
    move |errno| EngineError::Ioctl {
        path: path.to_string(),
        request,
        source: io::Error::from(errno),
    }
}

impl DevTarget {
    /// Open `path` (read-only) and read its geometry. With a permit (which
    /// must be for this exact path), its claimed descriptor is the target's
    /// and queues may later be opened for writing.
    pub fn open(path: &str, permit: Option<WritePermit>) -> Result<DevTarget, EngineError> {
        if let Some(p) = &permit {
            if p.path() != path {
                return Err(EngineError::PermitMismatch {
                    path: path.to_string(),
                    permitted: p.path().to_string(),
                });
            }
        }
        let writable = permit.is_some();
        let ro = match permit {
            Some(p) => p.into_file(),
            None => file::open(path, false, false).map_err(|source| EngineError::Open {
                path: path.to_string(),
                source,
            })?,
        };
        let meta = ro.metadata().map_err(|source| EngineError::Stat {
            path: path.to_string(),
            source,
        })?;
        // `file::open` (the claim's too) opens nothing else.
        let kind = if meta.file_type().is_block_device() {
            TargetKind::Block
        } else {
            TargetKind::File
        };
        let geometry = match kind {
            TargetKind::Block => Geometry {
                size: blk::size_bytes(&ro).map_err(ioctl_err(path, "BLKGETSIZE64"))?,
                logical_block: blk::logical_block(&ro).map_err(ioctl_err(path, "BLKSSZGET"))?,
                physical_block: blk::physical_block(&ro).map_err(ioctl_err(path, "BLKPBSZGET"))?,
            },
            TargetKind::File => Geometry {
                size: meta.len(),
                logical_block: FILE_LOGICAL_BLOCK,
                physical_block: FILE_PHYSICAL_BLOCK,
            },
        };
        Ok(DevTarget {
            kind,
            geometry,
            ro,
            writable,
            wrote: Arc::default(),
        })
    }

    /// True if queues may be opened for writing.
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// True once a queue of this target handed a write to the kernel: the
    /// device may have changed. A target claimed for writing whose writes
    /// never ran (skipped, interrupted before them) stays false.
    pub fn wrote(&self) -> bool {
        self.wrote.get()
    }

    /// The target's one descriptor (see the invariants).
    pub fn file(&self) -> &File {
        &self.ro
    }

    /// Run `erase` (a command that erases the device: NVMe Format NVM or
    /// Sanitize, ATA SANITIZE) on the target's descriptor, if the target
    /// was claimed for writing; the target counts as written from then on.
    /// Refused otherwise: nothing is sent.
    pub fn erase_with<R>(&self, erase: impl FnOnce(&File) -> R) -> Result<R, String> {
        if !self.writable {
            return Err(String::from("the disk was not claimed for writing: nothing is erased"));
        }
        self.wrote.mark();
        Ok(erase(&self.ro))
    }

    /// Reset the write pointers of the zones covering `len` bytes from byte
    /// `start` (BLKRESETZONE, through a descriptor reopened for writing from
    /// the claimed one, as a write queue is), if the target was claimed for
    /// writing; the target counts as written from then on. Refused
    /// otherwise (EBADF): nothing is sent. Zone boundaries, in bytes.
    pub fn reset_zones(&self, start: u64, len: u64) -> io::Result<()> {
        if !self.writable {
            return Err(io::Error::from(Errno::EBADF));
        }
        let f = file::open(&safety::reopen_path(&self.ro), true, false)?;
        self.wrote.mark();
        blk::reset_zones(&f, start / 512, len / 512).map_err(io::Error::from)
    }
}

impl DevTarget {
    /// A passthrough queue (fio's `io_uring_cmd`) on the generic character
    /// device of the NVMe namespace this target's descriptor has open: the
    /// namespace found from that descriptor's device number (never from a
    /// path given), its `/dev/ngXnY` opened read-only, or read-write only
    /// for a target claimed for writing (the claim's O_EXCL on the block
    /// device stays held while the queue writes, so the namespace is not
    /// mounted or in an array meanwhile), and checked to be that namespace:
    /// a character device whose number sysfs gives for `ngXnY` and whose
    /// NVMe namespace ID (NVME_IOCTL_ID) is the block device's. LBAs are the
    /// block device's logical block size. The errno of what failed.
    fn open_passthrough(
        &self,
        spec: &OpenSpec,
        buf_len: usize,
        wrote: Option<Arc<WriteMark>>,
    ) -> Result<DevQueue, i32> {
        use std::os::unix::fs::MetadataExt;
        if self.kind != TargetKind::Block {
            return Err(libc::ENODEV);
        }
        let sys = crate::sysfs::root();
        let meta = self.ro.metadata().map_err(|e| errno_of(&e))?;
        let dir = crate::sysfs::block_dir(sys, meta.rdev()).map_err(|e| errno_of(&e))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ng = super::fast::generic_of(sys, &name).map_err(|_| libc::ENODEV)?;
        let want =
            std::fs::read_to_string(sys.join("class/nvme-generic").join(&ng).join("dev")).map_err(|e| errno_of(&e))?;
        let path = format!("/dev/{ng}");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(spec.write)
            .open(&path)
            .map_err(|e| errno_of(&e))?;
        let fm = f.metadata().map_err(|e| errno_of(&e))?;
        let (major, minor) = (nix::sys::stat::major(fm.rdev()), nix::sys::stat::minor(fm.rdev()));
        if !fm.file_type().is_char_device() || want.trim() != format!("{major}:{minor}") {
            return Err(libc::ENODEV);
        }
        let nsid = crate::sys::nvme::namespace_id(&self.ro).map_err(|e| e as i32)?;
        if crate::sys::nvme::namespace_id(&f).map_err(|e| e as i32)? != nsid {
            return Err(libc::ENODEV);
        }
        let opts = RingOpts {
            depth: spec.depth,
            buf_len,
            write_bufs: spec.write,
            hipri: spec.hipri,
            sqthread_poll: spec.sqthread_poll,
            sqthread_poll_cpu: spec.sqthread_poll_cpu,
            sq_thread_idle_ms: spec.sq_thread_idle_ms,
        };
        let mut ring = CmdRing::new(f, nsid, self.geometry.logical_block, &opts).map_err(|e| errno_of(&e))?;
        if spec.write {
            let mut rng = Rng::new(spec.seed);
            for slot in 0..ring.depth() {
                if let Some(w) = ring.write_buf_mut(slot) {
                    rng.fill(w);
                }
            }
        }
        Ok(DevQueue::Cmd(Box::new(CmdQueue {
            ring,
            char_device: path,
            sq_thread_idle_ms: spec.sq_thread_idle_ms,
            last: no_req(Op::Read),
            wrote,
        })))
    }
}

/// The request to blame when something fails outside any request.
pub(super) fn no_req(op: Op) -> IoReq {
    IoReq { op, offset: 0, len: 0 }
}

impl Target for DevTarget {
    type Queue = DevQueue;

    fn geometry(&self) -> Geometry {
        self.geometry
    }

    fn open(&self, spec: &OpenSpec) -> Result<DevQueue, IoError> {
        let fail = |errno| IoError {
            errno,
            req: no_req(if spec.write { Op::Write } else { Op::Read }),
        };
        if spec.write && !self.writable() {
            return Err(fail(libc::EPERM));
        }
        let buf_len = usize::try_from(spec.max_len).map_err(|_| fail(libc::EINVAL))?;
        if spec.depth == 0 {
            return Err(fail(libc::EINVAL));
        }
        let wrote = spec.write.then(|| Arc::clone(&self.wrote));
        if spec.ioengine == Some(IoEngine::IoUringCmd) {
            return self.open_passthrough(spec, buf_len, wrote).map_err(fail);
        }
        let f = file::open(
            &safety::reopen_path(&self.ro),
            spec.write,
            spec.access == Access::Direct,
        )
        .map_err(|e| fail(errno_of(&e)))?;
        let mut rng = Rng::new(spec.seed);
        // fio's io_uring options keep the ring at depth 1 (fio's
        // ioengine=io_uring at iodepth=1); plain depth 1 is psync, and so
        // is `ioengine` psync (which the plan allows at depth 1 only).
        let psync = match spec.ioengine {
            Some(IoEngine::Psync) => true,
            Some(_) => false,
            None => spec.depth == 1 && !spec.hipri && !spec.sqthread_poll,
        };
        if psync {
            let rbuf = AlignedBuf::new(buf_len).ok_or_else(|| fail(libc::ENOMEM))?;
            let wbuf = if spec.write {
                let mut w = AlignedBuf::new(buf_len).ok_or_else(|| fail(libc::ENOMEM))?;
                rng.fill(w.as_mut_slice());
                Some(w)
            } else {
                None
            };
            Ok(DevQueue::Sync(SyncQueue {
                file: f,
                rbuf,
                wbuf,
                done: None,
                range_sync: None,
                wrote,
            }))
        } else {
            let opts = RingOpts {
                depth: spec.depth,
                buf_len,
                write_bufs: spec.write,
                hipri: spec.hipri,
                sqthread_poll: spec.sqthread_poll,
                sqthread_poll_cpu: spec.sqthread_poll_cpu,
                sq_thread_idle_ms: spec.sq_thread_idle_ms,
            };
            let mut ring = Ring::new(f, &opts).map_err(|e| fail(errno_of(&e)))?;
            if spec.write {
                for slot in 0..ring.depth() {
                    if let Some(w) = ring.write_buf_mut(slot) {
                        rng.fill(w);
                    }
                }
            }
            let last = no_req(Op::Read);
            Ok(DevQueue::Uring(Box::new(UringQueue { ring, last, wrote })))
        }
    }

    /// A zoned test's reset before each pass ([`DevTarget::reset_zones`]):
    /// refused with EPERM, nothing sent, unless the target was claimed for
    /// writing.
    fn reset_zones(&self, start: u64, len: u64) -> Result<(), IoError> {
        let fail = |errno| IoError {
            errno,
            req: IoReq {
                op: Op::Write,
                offset: start,
                len: u32::try_from(len).unwrap_or(u32::MAX),
            },
        };
        if !self.writable {
            return Err(fail(libc::EPERM));
        }
        DevTarget::reset_zones(self, start, len).map_err(|e| fail(errno_of(&e)))
    }

    fn drop_caches(&self) -> Result<(), IoError> {
        let fail = |errno| IoError {
            errno,
            req: no_req(Op::Flush),
        };
        // Dirty pages are not dropped: write them back first. The calls are
        // hdparm's flush_buffer_cache (9.58+), one for one, so the device
        // sees the same requests (each fsync and fdatasync of a block
        // device sends it a flush): sync(), fsync, fdatasync, sync(),
        // BLKFLSBUF, sync().
        global_sync();
        self.ro.sync_all().map_err(|e| fail(errno_of(&e)))?;
        self.ro.sync_data().map_err(|e| fail(errno_of(&e)))?;
        global_sync();
        match self.kind {
            TargetKind::Block => blk::flush_buffers(&self.ro),
            // Drop the file's clean cached pages (its dirty ones were written above).
            TargetKind::File => posix_fadvise(self.ro.as_raw_fd(), 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED),
        }
        .map_err(|e| fail(e as i32))?;
        global_sync();
        Ok(())
    }

    /// hdparm's `prepare_timing_buf`: `sync(); sleep(n)`.
    fn settle(&self, for_: Nanos) -> Result<(), IoError> {
        global_sync();
        std::thread::sleep(Duration::from_nanos(for_.0));
        Ok(())
    }
}

/// sync(2): every filesystem's and block device's dirty pages written
/// back. Under test it waits while a test that needs dirty pages to stay
/// dirty holds `GLOBAL_SYNC` for writing.
fn global_sync() {
    #[cfg(test)]
    let _sync = super::testkit::GLOBAL_SYNC
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    nix::unistd::sync();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::engine::testkit::*;

    #[test]
    fn loop_geometry_from_ioctls() {
        let Some(lo) = LoopDev::new("geom") else { return };
        let t = lo.target(false);
        let g = t.geometry();
        assert_eq!(t.kind, TargetKind::Block);
        assert_eq!(g.size, LOOP_SIZE);
        assert_eq!(g.logical_block, 512);
        assert!(
            g.physical_block >= g.logical_block && g.physical_block.is_power_of_two(),
            "{g:?}"
        );
        assert!(!t.writable());
    }

    #[test]
    fn regular_file_geometry_and_buffered_read() {
        let path = std::env::temp_dir().join(format!("bootbench-engine-file-{}", std::process::id()));
        std::fs::write(&path, pattern(0, 3 * 4096 + 100)).expect("write");
        let p = path.to_str().expect("utf8").to_string();
        let t = DevTarget::open(&p, None).expect("open");
        let g = t.geometry();
        let mut q = t.open(&spec(Access::Buffered, false, 1, 4096)).expect("queue");
        let done = run_batch(&mut q, &[req(Op::Read, 4096, 4096)]);
        let read_ok = q.read_buf(0, 4096).expect("read buffer")[..] == pattern(4096, 4096)[..];
        let dropped = t.drop_caches();
        std::fs::remove_file(&path).ok();
        assert_eq!(
            (t.kind, g.size, g.logical_block, g.physical_block),
            (TargetKind::File, 3 * 4096 + 100, 512, 4096)
        );
        assert_eq!(
            done,
            vec![Completion {
                slot: 0,
                result: Ok(4096)
            }]
        );
        assert!(read_ok, "read back the file's bytes");
        assert_eq!(dropped, Ok(()));
    }

    #[test]
    fn not_a_target_and_missing_paths_are_errors() {
        let e = DevTarget::open("/dev/null", None).expect_err("not a target");
        assert_eq!(
            e.to_string(),
            "/dev/null: cannot open: a character device, not a block device or a regular file"
        );
        let e = DevTarget::open("/nonexistent/bootbench", None).expect_err("missing");
        assert!(matches!(&e, EngineError::Open { source, .. } if source.raw_os_error() == Some(libc::ENOENT)));
        assert!(e.to_string().starts_with("/nonexistent/bootbench: cannot open"), "{e}");
    }

    #[test]
    fn write_without_permit_is_eperm_and_changes_nothing() {
        let Some(lo) = LoopDev::new("eperm") else { return };
        let before = lo.contents();
        let t = lo.target(false);
        let fds = fds_on(&lo.dev);
        for depth in [1, 32] {
            for access in [Access::Direct, Access::Buffered] {
                let e = t.open(&spec(access, true, depth, 4096)).expect_err("must refuse");
                assert_eq!(e.errno, libc::EPERM);
                assert_eq!(fds_on(&lo.dev), fds, "no descriptor was opened");
            }
        }
        // A read-only queue cannot write either: the kernel's EBADF.
        let mut q = t.open(&spec(Access::Direct, false, 1, 4096)).expect("read-only queue");
        assert_eq!(
            run_batch(&mut q, &[req(Op::Write, 0, 4096)])[0].result,
            Err(libc::EBADF)
        );
        let mut q = t.open(&spec(Access::Direct, false, 2, 4096)).expect("read-only ring");
        assert_eq!(
            run_batch(&mut q, &[req(Op::Write, 0, 4096)])[0].result,
            Err(libc::EBADF)
        );
        drop(q);
        // A writable block target holds the device's exclusive claim: a
        // second exclusive open of the same device (like a mount) is EBUSY.
        let claim = lo.target(true);
        let second = file::open_exclusive(&lo.dev);
        assert_eq!(second.map_err(|e| e.raw_os_error()).err(), Some(Some(libc::EBUSY)));
        drop(claim);
        // A permit for another target is refused outright.
        let elsewhere = crate::testutil::TempDir::new("eperm-other");
        let other_path = elsewhere.0.join("other");
        std::fs::write(&other_path, [0u8; 4096]).expect("write");
        let other = DevTarget::open(&lo.dev, Some(WritePermit::for_tests(other_path.to_str().unwrap())));
        assert!(matches!(other, Err(EngineError::PermitMismatch { .. })));
        assert!(lo.contents() == before, "backing file unchanged");
    }

    /// Queues reopen the target's one descriptor, never its path: a file
    /// put in the path's place after the target was opened is not touched,
    /// and the writes reach the file that was opened.
    #[test]
    fn queues_reopen_the_descriptor_not_the_path() {
        let t = crate::testutil::TempDir::new("reopen");
        let path = t.0.join("target");
        let path_s = path.to_str().unwrap();
        std::fs::write(&path, vec![0u8; 1 << 20]).expect("write");
        let dev = DevTarget::open(path_s, Some(WritePermit::for_tests(path_s))).expect("open");
        // Another file takes the path: the original is now only reachable
        // through the descriptor.
        let opened = t.0.join("opened-one");
        std::fs::rename(&path, &opened).expect("rename");
        std::fs::write(&path, vec![7u8; 1 << 20]).expect("write the newcomer");
        for depth in [1, 4] {
            let mut q = dev
                .open(&spec(Access::Buffered, true, depth, 4096))
                .expect("write queue");
            for r in [req(Op::Write, 0, 4096), req(Op::Flush, 0, 0)] {
                let done = run_batch_one(&mut q, 0, r);
                assert!(done.result.is_ok(), "{done:?}");
            }
        }
        assert_eq!(
            std::fs::read(&path).expect("read"),
            vec![7u8; 1 << 20],
            "the newcomer is untouched"
        );
        assert!(
            std::fs::read(&opened).expect("read")[..4096].iter().any(|&b| b != 0),
            "the writes reached the file that was opened"
        );
    }

    #[test]
    fn drop_caches_on_a_loop_device() {
        let Some(lo) = LoopDev::new("drop") else { return };
        let t = lo.target(false);
        let mut q = t.open(&spec(Access::Buffered, false, 1, 4096)).expect("queue");
        assert_eq!(run_batch(&mut q, &[req(Op::Read, 0, 4096)])[0].result, Ok(4096));
        let flushes = device_flushes(&lo.dev);
        assert_eq!(t.drop_caches(), Ok(()));
        // hdparm's flush_buffer_cache sends the device two flushes (its
        // fsync and its fdatasync): so does the twin, and no more.
        assert_eq!(device_flushes(&lo.dev) - flushes, 2, "flushes sent by drop_caches");
        // Still readable after the cache was dropped.
        assert_eq!(run_batch(&mut q, &[req(Op::Read, 0, 4096)])[0].result, Ok(4096));
        assert_eq!(q.read_buf(0, 4096).expect("read buffer")[..], pattern(0, 4096)[..]);
    }

    /// dd's close (`end_close`) on a loop device: the pages its buffered
    /// reads cached, and those its readahead was still reading past them,
    /// all dropped, on either engine; the queue still reads afterwards.
    #[test]
    fn end_close_leaves_nothing_of_the_device_cached() {
        let Some(lo) = LoopDev::new("end-close") else { return };
        let t = lo.target(false);
        for depth in [1u32, 2] {
            let mut q = t.open(&spec(Access::Buffered, false, depth, 1 << 20)).expect("queue");
            assert_eq!(run_batch(&mut q, &[req(Op::Read, 0, 1 << 20)])[0].result, Ok(1 << 20));
            let Ok(before) = crate::sys::blk::cached_pages(t.file()) else {
                eprintln!("skipped: no cachestat(2) (Linux 6.5+)");
                return;
            };
            assert!(
                before >= 256,
                "depth {depth}: {before} pages cached after a read of 1 MiB"
            );
            assert_eq!(q.end_close(), Ok(()));
            assert_eq!(crate::sys::blk::cached_pages(t.file()), Ok(0), "depth {depth}");
            assert_eq!(run_batch(&mut q, &[req(Op::Read, 4096, 4096)])[0].result, Ok(4096));
            assert_eq!(q.read_buf(0, 4096).expect("read buffer")[..], pattern(4096, 4096)[..]);
        }
    }

    /// This thread in a cgroup v1 blkio throttle of `bps` reads a second
    /// on `dev` while it lives (the reads it submits, its readahead
    /// included, held to that rate); `None` without the v1 hierarchy,
    /// whose `tasks` moves a single thread.
    struct ThreadThrottle {
        dir: std::path::PathBuf,
    }

    impl ThreadThrottle {
        fn new(dev: &str, bps: u64) -> Option<ThreadThrottle> {
            let root = std::path::Path::new("/sys/fs/cgroup/blkio");
            if !root.join("blkio.throttle.read_bps_device").exists() {
                eprintln!("skipped: no cgroup v1 blkio throttle");
                return None;
            }
            let name = dev.rsplit('/').next().expect("a device name");
            let mm = std::fs::read_to_string(format!("/sys/block/{name}/dev")).expect("its numbers");
            let dir = root.join(format!("bootbench-test-{}", nix::unistd::gettid()));
            std::fs::create_dir(&dir).expect("cgroup");
            let t = ThreadThrottle { dir };
            std::fs::write(
                t.dir.join("blkio.throttle.read_bps_device"),
                format!("{} {bps}\n", mm.trim()),
            )
            .expect("read_bps");
            std::fs::write(t.dir.join("tasks"), nix::unistd::gettid().to_string()).expect("join");
            Some(t)
        }
    }

    impl Drop for ThreadThrottle {
        fn drop(&mut self) {
            let root = self.dir.parent().expect("the hierarchy");
            let _ = std::fs::write(root.join("tasks"), nix::unistd::gettid().to_string());
            let _ = std::fs::remove_dir(&self.dir);
        }
    }

    /// A block device's `queue/read_ahead_kb` set for a test, the value
    /// before put back when dropped.
    struct ReadAhead {
        file: std::path::PathBuf,
        before: String,
    }

    impl ReadAhead {
        fn set(dev: &str, kb: u32) -> ReadAhead {
            let name = dev.rsplit('/').next().expect("a device name");
            let file = std::path::PathBuf::from(format!("/sys/block/{name}/queue/read_ahead_kb"));
            let before = std::fs::read_to_string(&file).expect("read_ahead_kb");
            std::fs::write(&file, format!("{kb}\n")).expect("set read_ahead_kb");
            ReadAhead { file, before }
        }
    }

    impl Drop for ReadAhead {
        fn drop(&mut self) {
            let _ = std::fs::write(&self.file, &self.before);
        }
    }

    /// dd's close waits for the readahead still in flight, as the last
    /// close of the device does (`kill_bdev`): with this thread's reads
    /// held to 256 KiB/s, the readahead a 64 KiB read starts past itself is
    /// still being read when `end_close` is called, and is neither left
    /// behind nor cached afterwards (a drop alone, BLKFLSBUF, skips the
    /// pages being read: they would stay cached).
    #[test]
    fn end_close_waits_for_the_readahead_in_flight() {
        let Some(lo) = LoopDev::new("end-close-ra") else { return };
        // The kernel's default readahead (128 KiB windows, half a second
        // each at this throttle, within end_close's 1 s wait for a page to
        // leave): a loop device keeps the read_ahead_kb its last user set
        // (2560 KiB here after other runs: a window of 10 s, which
        // end_close rightly gives up on). Set before the queue opens its
        // file, whose readahead state starts from it; put back after.
        let _ra = ReadAhead::set(&lo.dev, 128);
        let t = lo.target(false);
        if crate::sys::blk::cached_pages(t.file()).is_err() {
            eprintln!("skipped: no cachestat(2) (Linux 6.5+)");
            return;
        }
        let mut q = t.open(&spec(Access::Buffered, false, 1, 64 << 10)).expect("queue");
        let Some(_held) = ThreadThrottle::new(&lo.dev, 256 << 10) else {
            return;
        };
        for off in [0, 64 << 10] {
            assert_eq!(
                run_batch(&mut q, &[req(Op::Read, off, 64 << 10)])[0].result,
                Ok(64 << 10)
            );
        }
        assert_eq!(q.end_close(), Ok(()));
        assert_eq!(crate::sys::blk::cached_pages(t.file()), Ok(0));
    }

    /// A target claimed for writing records whether a write reached it:
    /// reads alone leave [`DevTarget::wrote`] false, on either engine; the
    /// first write sets it, on the pread/pwrite queue and on io_uring.
    #[test]
    fn a_writable_target_knows_whether_it_was_written() {
        let Some(lo) = LoopDev::new("wrote") else { return };
        for (iodepth, jobs) in [(1u32, 1u32), (8, 2)] {
            let rw = Arc::new(lo.target(true));
            ThreadedRunner::new(Arc::clone(&rw))
                .run_step(&rand_step(100, iodepth, jobs, 50), &Stop::new(), &mut |_| {})
                .expect("reads");
            assert!(rw.writable() && !rw.wrote(), "QD{iodepth}: reads only");
            ThreadedRunner::new(Arc::clone(&rw))
                .run_step(&rand_step(0, iodepth, jobs, 50), &Stop::new(), &mut |_| {})
                .expect("writes");
            assert!(rw.wrote(), "QD{iodepth}: written");
        }
    }
}
