//! NVMe passthrough through io_uring: fio's `io_uring_cmd` engine with
//! `cmd_type=nvme` (`engines/io_uring.c`, `fio_ioring_cmd_prep` and
//! `engines/nvme.c`, `fio_nvme_uring_cmd_prep`). Each request is an NVMe
//! Read, Write or Flush command, built here, handed to the namespace's
//! generic character device (`/dev/ngXnY`) as IORING_OP_URING_CMD with
//! `cmd_op` NVME_URING_CMD_IO; the ring has 128-byte submission entries
//! and 32-byte completions (IORING_SETUP_SQE128 | CQE32), as the command
//! (`struct nvme_uring_cmd`, 72 bytes) lives in the entry. The block layer's
//! request queue still carries the command (and polls it with IOPOLL), but
//! no bio, no page cache, no partition and no I/O scheduler is in between.
//!
//! A completion's `res` is 0 on success, the NVMe status (> 0) when the
//! drive failed the command (given back as EIO), or a negated errno.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use nix::errno::Errno;

use super::buf::AlignedBuf;
use super::uring::{setup, RingOp, RingOpts};

/// `NVME_URING_CMD_IO` = `_IOWR('N', 0x80, struct nvme_uring_cmd)`
/// (include/uapi/linux/nvme_ioctl.h): read/write direction (3 << 30), the
/// struct's 72 bytes (<< 16), type `'N'` (<< 8), number 0x80.
pub const NVME_URING_CMD_IO: u32 = (3 << 30) | (72 << 16) | ((b'N' as u32) << 8) | 0x80;

/// NVM command set opcodes (NVM Command Set Specification, figure 17).
pub mod nvm {
    /// Flush: the volatile write cache to media.
    pub const FLUSH: u8 = 0x00;
    /// Write.
    pub const WRITE: u8 = 0x01;
    /// Read.
    pub const READ: u8 = 0x02;
}

/// The most logical blocks one Read or Write moves: NLB is a 0's-based
/// 16-bit field (CDW12 bits 15:0).
pub const MAX_NLB: u64 = 1 << 16;

/// `struct nvme_uring_cmd` (include/uapi/linux/nvme_ioctl.h), 72 bytes,
/// the first 72 of the entry's 80 command bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NvmeUringCmd {
    /// Command opcode ([`nvm`]).
    pub opcode: u8,
    /// Namespace ID.
    pub nsid: u32,
    /// The data buffer's address.
    pub addr: u64,
    /// The data buffer's length, bytes.
    pub data_len: u32,
    /// Command dwords 10 to 15 (Read/Write: SLBA low, SLBA high, NLB - 1).
    pub cdw: [u32; 6],
    /// 0: the driver's default I/O timeout.
    pub timeout_ms: u32,
}

impl NvmeUringCmd {
    /// A Read or Write of `len` bytes at byte `offset` of namespace
    /// `nsid`, whose LBAs are `lba` bytes, to or from `addr` (fio's
    /// `fio_nvme_uring_cmd_prep`: SLBA = offset / LBA size in CDW10-11,
    /// NLB - 1 in CDW12). EINVAL if the offset or length is not a whole
    /// number of LBAs, the length is 0 or more than [`MAX_NLB`] LBAs.
    pub fn rw(write: bool, nsid: u32, lba: u32, offset: u64, len: u32, addr: u64) -> Result<NvmeUringCmd, Errno> {
        let lba = u64::from(lba);
        if lba == 0 || offset % lba != 0 || u64::from(len) % lba != 0 {
            return Err(Errno::EINVAL);
        }
        let slba = offset / lba;
        let nlb = u64::from(len) / lba;
        if nlb == 0 || nlb > MAX_NLB {
            return Err(Errno::EINVAL);
        }
        let (lo, hi) = (slba & 0xffff_ffff, slba >> 32);
        Ok(NvmeUringCmd {
            opcode: if write { nvm::WRITE } else { nvm::READ },
            nsid,
            addr,
            data_len: len,
            cdw: [
                u32::try_from(lo).map_err(|_| Errno::EINVAL)?,
                u32::try_from(hi).map_err(|_| Errno::EINVAL)?,
                u32::try_from(nlb - 1).map_err(|_| Errno::EINVAL)?,
                0,
                0,
                0,
            ],
            timeout_ms: 0,
        })
    }

    /// A Flush of namespace `nsid` (no data).
    pub fn flush(nsid: u32) -> NvmeUringCmd {
        NvmeUringCmd {
            opcode: nvm::FLUSH,
            nsid,
            ..NvmeUringCmd::default()
        }
    }

    /// The entry's 80 command bytes: the struct's layout, little-endian
    /// (x86's), the rest zero: opcode (0), flags (1), rsvd1 (2-3), nsid
    /// (4-7), cdw2 (8), cdw3 (12), metadata (16), addr (24), metadata_len
    /// (32), data_len (36), cdw10-15 (40-63), timeout_ms (64), rsvd2 (68).
    pub fn to_bytes(&self) -> [u8; 80] {
        let mut b = [0u8; 80];
        b[0] = self.opcode;
        b[4..8].copy_from_slice(&self.nsid.to_le_bytes());
        b[24..32].copy_from_slice(&self.addr.to_le_bytes());
        b[36..40].copy_from_slice(&self.data_len.to_le_bytes());
        for (i, d) in self.cdw.iter().enumerate() {
            b[40 + 4 * i..44 + 4 * i].copy_from_slice(&d.to_le_bytes());
        }
        b[64..68].copy_from_slice(&self.timeout_ms.to_le_bytes());
        b
    }
}

/// A passthrough ring of `depth` slots over a generic character device,
/// each slot owning one aligned buffer (and, when writing, a write buffer).
///
/// # Invariants
/// - `busy.len() == lens.len() == depth`; `bufs` holds the read buffers
///   (index = slot), then, when opened for writing, the write buffers
///   (`depth + slot`); it is never resized after `new`, and each buffer's
///   bytes live on the heap, so the addresses in the commands stay valid.
/// - `busy[s]` is true from the push of a command in slot `s` until its
///   completion is handed out by [`CmdRing::wait`]; meanwhile the kernel may
///   access that slot's buffers and no reference to them is handed out.
/// - `kernel` counts the commands pushed whose completion has not been
///   taken from the completion queue; `ready` holds those taken and not yet
///   handed out; busy slots are exactly `kernel + ready.len()`.
/// - `ring` is declared before `bufs` (dropped first); `Drop` waits for
///   every command in flight before either goes.
pub struct CmdRing {
    ring: IoUring<squeue::Entry128, cqueue::Entry32>,
    bufs: Vec<AlignedBuf>,
    busy: Vec<bool>,
    lens: Vec<u32>,
    kernel: usize,
    ready: Vec<(usize, i32)>,
    flags: u32,
    nsid: u32,
    lba: u32,
    file: File,
}

impl std::fmt::Debug for CmdRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CmdRing")
            .field("depth", &self.busy.len())
            .field("flags", &setup::names(self.flags))
            .field("nsid", &self.nsid)
            .field("lba", &self.lba)
            .finish_non_exhaustive()
    }
}

impl CmdRing {
    /// A passthrough ring over `file` (a `/dev/ngXnY`, opened read-write to
    /// write) for namespace `nsid` of `lba`-byte LBAs, as `opts` asks
    /// (`depth`, buffers, `hipri`: IOPOLL, `sqthread_poll`: SQPOLL with its
    /// CPU and idle time). No flag is dropped: the kernel's refusal is the
    /// error (EINVAL where it has no SQE128/CQE32, before 5.19).
    pub fn new(file: File, nsid: u32, lba: u32, opts: &RingOpts) -> io::Result<CmdRing> {
        let einval = || io::Error::from_raw_os_error(libc::EINVAL);
        let slots = usize::try_from(opts.depth).map_err(|_| einval())?;
        if slots == 0 || lba == 0 {
            return Err(einval());
        }
        let nbufs = if opts.write_bufs { slots * 2 } else { slots };
        let mut flags = setup::SQE128 | setup::CQE32;
        let mut b = IoUring::<squeue::Entry128, cqueue::Entry32>::builder();
        if opts.hipri {
            flags |= setup::IOPOLL;
            b.setup_iopoll();
        }
        if opts.sqthread_poll {
            flags |= setup::SQPOLL;
            b.setup_sqpoll(opts.sq_thread_idle_ms.unwrap_or(0));
            if let Some(cpu) = opts.sqthread_poll_cpu {
                flags |= setup::SQ_AFF;
                b.setup_sqpoll_cpu(cpu);
            }
        }
        let ring = b.build(opts.depth)?;
        let mut bufs = Vec::with_capacity(nbufs);
        for _ in 0..nbufs {
            bufs.push(AlignedBuf::new(opts.buf_len).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?);
        }
        Ok(CmdRing {
            ring,
            bufs,
            busy: vec![false; slots],
            lens: vec![0; slots],
            kernel: 0,
            ready: Vec::new(),
            flags,
            nsid,
            lba,
            file,
        })
    }

    /// Slots.
    pub fn depth(&self) -> usize {
        self.busy.len()
    }

    /// The setup flags the ring has ([`setup`]).
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// The namespace ID and its LBA size, bytes.
    pub fn namespace(&self) -> (u32, u32) {
        (self.nsid, self.lba)
    }

    /// Requests pushed and not yet handed out.
    pub fn in_flight(&self) -> usize {
        self.kernel + self.ready.len()
    }

    /// Slot `slot`'s read buffer, if the slot exists and is not in flight.
    pub fn buf(&self, slot: usize) -> Option<&[u8]> {
        if *self.busy.get(slot)? {
            return None;
        }
        Some(self.bufs[slot].as_slice())
    }

    /// Slot `slot`'s read buffer, writable, if not in flight.
    pub fn buf_mut(&mut self, slot: usize) -> Option<&mut [u8]> {
        if *self.busy.get(slot)? {
            return None;
        }
        Some(self.bufs[slot].as_mut_slice())
    }

    /// Slot `slot`'s write buffer, if there are write buffers and the slot
    /// is not in flight.
    pub fn write_buf_mut(&mut self, slot: usize) -> Option<&mut [u8]> {
        if *self.busy.get(slot)? {
            return None;
        }
        let i = self.depth() + slot;
        self.bufs.get_mut(i).map(AlignedBuf::as_mut_slice)
    }

    /// Queue the command for `op` in `slot` (submitted by the next
    /// [`CmdRing::wait`]): Read or Write of `len` bytes at `offset`, or a
    /// Flush for either fsync (NVMe has no ranged flush: the whole cache).
    /// EINVAL if the slot does not exist or is in flight, `len` exceeds the
    /// buffer, or offset and length are not whole LBAs.
    pub fn push(&mut self, slot: usize, op: RingOp, offset: u64, len: u32) -> Result<(), Errno> {
        if self.busy.get(slot) != Some(&false) {
            return Err(Errno::EINVAL);
        }
        let write = op == RingOp::Write;
        let b = if write && self.bufs.len() > self.depth() {
            self.depth() + slot
        } else {
            slot
        };
        let cmd = match op {
            RingOp::Read | RingOp::Write => {
                if usize::try_from(len).map_or(true, |l| l > self.bufs[b].len()) {
                    return Err(Errno::EINVAL);
                }
                let addr = self.bufs[b].as_mut_ptr() as u64;
                NvmeUringCmd::rw(write, self.nsid, self.lba, offset, len, addr)?
            }
            RingOp::Fsync | RingOp::FsyncRange => NvmeUringCmd::flush(self.nsid),
        };
        let tag = u64::try_from(slot).map_err(|_| Errno::EINVAL)?;
        let entry = opcode::UringCmd80::new(types::Fd(self.file.as_raw_fd()), NVME_URING_CMD_IO)
            .cmd(cmd.to_bytes())
            .build()
            .user_data(tag);
        loop {
            // SAFETY: the command's `addr` is `bufs[b]`, whose length is at
            // least `data_len` (checked above); the ring owns that buffer,
            // never moves or frees it while the ring exists, and marks the
            // slot busy below, so no reference to it is handed out and no
            // other command uses it until this one's completion is handed
            // out; `Drop` waits for every command in flight (or leaks the
            // buffers). The fd is `self.file`'s, which lives as long as the
            // ring.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                break;
            }
            self.reap(0)?;
        }
        self.busy[slot] = true;
        self.lens[slot] = if matches!(op, RingOp::Read | RingOp::Write) {
            len
        } else {
            0
        };
        self.kernel += 1;
        Ok(())
    }

    /// Submit what is queued and take completions into `ready` until at
    /// least `want` more came (io_uring_enter with GETEVENTS: with IOPOLL
    /// it polls the device's queue; with SQPOLL it wakes the thread if it
    /// sleeps). A command's result is its length on success.
    fn reap(&mut self, want: usize) -> Result<(), Errno> {
        let want = want.min(self.kernel);
        let mut got = 0;
        loop {
            for cqe in self.ring.completion() {
                let Ok(slot) = usize::try_from(cqe.user_data()) else {
                    continue;
                };
                if self.busy.get(slot) == Some(&true) && self.kernel > 0 {
                    self.kernel -= 1;
                    let res = match cqe.result() {
                        0 => i32::try_from(self.lens[slot]).unwrap_or(i32::MAX),
                        // An NVMe status: the drive failed the command.
                        r if r > 0 => -libc::EIO,
                        r => r,
                    };
                    self.ready.push((slot, res));
                    got += 1;
                }
            }
            if got >= want && self.ring.submission().is_empty() {
                return Ok(());
            }
            match self.ring.submit_and_wait(want.saturating_sub(got)) {
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)) => {}
                Err(e) => return Err(super::errno_of(&e)),
                Ok(_) => {}
            }
        }
    }

    /// Submit what is queued without waiting.
    pub fn commit(&mut self) -> Result<(), Errno> {
        self.reap(0)
    }

    /// Submit what is queued, wait until at least `min` commands completed
    /// (fewer if fewer are in flight), and hand each completion to
    /// `done(slot, result)`: bytes moved, or the negated errno.
    pub fn wait(&mut self, min: usize, mut done: impl FnMut(usize, i32)) -> Result<(), Errno> {
        let want = min.min(self.in_flight());
        let more = want.saturating_sub(self.ready.len());
        if more > 0 || !self.ring.submission().is_empty() {
            self.reap(more)?;
        }
        for (slot, res) in std::mem::take(&mut self.ready) {
            self.busy[slot] = false;
            done(slot, res);
        }
        Ok(())
    }
}

impl Drop for CmdRing {
    fn drop(&mut self) {
        while self.in_flight() > 0 {
            if self.wait(self.in_flight(), |_, _| {}).is_err() {
                // The kernel may still write into the buffers: leak them.
                std::mem::forget(std::mem::take(&mut self.bufs));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ioctl_number_is_the_kernels() {
        // _IOWR('N', 0x80, struct nvme_uring_cmd) as the kernel headers give it.
        assert_eq!(NVME_URING_CMD_IO, 0xC048_4E80);
    }

    /// Table: (write, lba size, offset, len) -> opcode, cdw10, cdw11, cdw12.
    #[test]
    fn read_and_write_commands_carry_slba_and_nlb_minus_one() {
        let cases = [
            (false, 512, 0u64, 4096u32, nvm::READ, 0u32, 0u32, 7u32),
            (true, 512, 1 << 20, 512, nvm::WRITE, 2048, 0, 0),
            (false, 4096, 8192, 131_072, nvm::READ, 2, 0, 31),
            // An SLBA above 32 bits: CDW11 holds the high half.
            (true, 4096, (5u64 << 32) * 4096 + 4096, 4096, nvm::WRITE, 1, 5, 0),
        ];
        for (write, lba, off, len, opc, c10, c11, c12) in cases {
            let c = NvmeUringCmd::rw(write, 7, lba, off, len, 0xdead_b000).expect("valid");
            assert_eq!(
                (c.opcode, c.nsid, c.cdw[0], c.cdw[1], c.cdw[2]),
                (opc, 7, c10, c11, c12),
                "{off} {len}"
            );
            let b = c.to_bytes();
            assert_eq!(b[0], opc);
            assert_eq!(b[4..8], 7u32.to_le_bytes());
            assert_eq!(b[24..32], 0xdead_b000u64.to_le_bytes());
            assert_eq!(b[36..40], len.to_le_bytes());
            assert_eq!(b[40..44], c10.to_le_bytes());
            assert_eq!(b[44..48], c11.to_le_bytes());
            assert_eq!(b[48..52], c12.to_le_bytes());
            assert!(b[52..].iter().all(|&x| x == 0), "{b:?}");
        }
    }

    #[test]
    fn commands_that_are_not_whole_lbas_are_einval() {
        for (lba, off, len) in [
            (512, 100, 512),
            (4096, 0, 512),
            (512, 0, 0),
            (512, 0, 512 * 65_537),
            (0, 0, 512),
        ] {
            assert_eq!(
                NvmeUringCmd::rw(false, 1, lba, off, len, 0),
                Err(Errno::EINVAL),
                "{lba} {off} {len}"
            );
        }
        // The largest: 65536 LBAs, NLB - 1 = 0xffff.
        let c = NvmeUringCmd::rw(false, 1, 512, 0, 512 * 65_536, 0).expect("max");
        assert_eq!(c.cdw[2], 0xffff);
    }

    #[test]
    fn flush_names_the_namespace_only() {
        let b = NvmeUringCmd::flush(3).to_bytes();
        assert_eq!(b[0], nvm::FLUSH);
        assert_eq!(b[4..8], 3u32.to_le_bytes());
        assert!(b[8..].iter().all(|&x| x == 0));
    }

    /// A ring with 128-byte entries over a regular file: the kernel
    /// accepts the ring (5.19 and later), and refuses the command (a file
    /// has no uring_cmd: EOPNOTSUPP) in the completion, not the push.
    #[test]
    fn a_command_to_a_file_fails_in_its_completion() {
        let path = std::env::temp_dir().join(format!("bootbench-uring-cmd-{}", std::process::id()));
        std::fs::write(&path, vec![0u8; 8192]).expect("file");
        let f = File::open(&path).expect("open");
        let opts = RingOpts {
            depth: 2,
            buf_len: 4096,
            ..RingOpts::default()
        };
        let Ok(mut r) = CmdRing::new(f, 1, 512, &opts) else {
            eprintln!("no SQE128 rings here: skipped");
            let _ = std::fs::remove_file(&path);
            return;
        };
        assert_eq!(setup::names(r.flags()), ["SQE128", "CQE32"]);
        r.push(0, RingOp::Read, 0, 4096).expect("push");
        let mut got = Vec::new();
        r.wait(1, |s, res| got.push((s, res))).expect("wait");
        assert_eq!(got.len(), 1);
        assert!(got[0].1 < 0, "{got:?}");
        let _ = std::fs::remove_file(&path);
    }
}
