//! Flushes inside a step: of the whole target, or of each of sysbench's
//! files in turn.

use alloc::vec::Vec;

use super::account::{DirAcc, Times};
use super::request::one_request;
use super::Stop;
use crate::io::{Access, Clock, Completion, IoError, IoQueue, IoReq, Op};
use crate::spec::{Pattern, Step};
use crate::vocab::units::Nanos;

/// sysbench's file set over a step's range, for a buffered step that
/// fsyncs `file_num` files ([`Step::fsync_files`] above one): file `i` is
/// `[start + i * size, start + (i + 1) * size)`, the last one running to
/// the range's end. sysbench splits `file-total-size` over `file-num`
/// files of `total / num` bytes each (`sb_fileio.c` `file_prepare`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FileSet {
    start: u64,
    end: u64,
    files: u64,
}

impl FileSet {
    /// The step's file set; None where a flush of the whole target is what
    /// the tool does (one file), or nothing is cached to write back (direct
    /// access: each flush is the cache flush alone), or the pattern has no
    /// range.
    pub(super) fn of(step: &Step) -> Option<FileSet> {
        let (start, end) = match step.pattern {
            Pattern::Seq { start, end, .. } | Pattern::Random { start, end, .. } => (start, end),
            Pattern::Fixed { .. } | Pattern::Cursors { .. } => return None,
        };
        let files = step.fsync_files;
        (step.access == Access::Buffered && files > 1 && end > start).then_some(FileSet { start, end, files })
    }

    /// File `i`'s bytes.
    fn file(&self, i: u64) -> (u64, u64) {
        let size = (self.end - self.start) / self.files;
        let lo = self.start + i * size;
        let hi = if i + 1 == self.files { self.end } else { lo + size };
        (lo, hi)
    }
}

/// The longest range one [`Op::FlushRange`] covers: a whole number of
/// 4 KiB pages that a `u32` length holds. A longer file is flushed in
/// pieces of at most this, one after another, counted as one flush.
pub(crate) const FLUSH_RANGE_MAX: u32 = !0xfff;

/// `n` flushes, one after another in an otherwise idle queue; each counted
/// in `acc` when the step is measuring (`ramp_end` given). With a file set
/// of `n` files, flush `i` is file `i`'s alone ([`Op::FlushRange`]): as
/// sysbench fsyncs each file in turn and a filesystem's fsync of one file
/// writes back that file's pages, waits for them and flushes the cache
/// (`ext4_sync_file`), so one file's writes reach the device before the
/// next file's flush, not all in the batch that a flush of the whole
/// target would make. A stop asked meanwhile (an interrupt, the deadline)
/// ends the batch before its next flush. Returns the time the last
/// completed.
#[allow(clippy::too_many_arguments)] // the job's queue, clock, stop and accounts, passed down once
pub(super) fn flushes<Q: IoQueue, C: Clock>(
    q: &mut Q,
    clock: &C,
    stop: &Stop,
    n: u64,
    set: Option<FileSet>,
    comps: &mut Vec<Completion>,
    ramp_end: Option<Nanos>,
    acc: &mut DirAcc,
) -> Result<Nanos, IoError> {
    let whole = IoReq {
        op: Op::Flush,
        offset: 0,
        len: 0,
    };
    let set = set.filter(|s| s.files == n);
    let mut last = clock.now();
    for i in 0..n {
        if stop.reason().is_some() {
            break;
        }
        let t = clock.now();
        match set {
            None => last = one_request(q, clock, whole, comps)?,
            Some(set) => {
                let (mut lo, hi) = set.file(i);
                while lo < hi {
                    let len = u32::try_from(hi - lo).unwrap_or(FLUSH_RANGE_MAX).min(FLUSH_RANGE_MAX);
                    let req = IoReq {
                        op: Op::FlushRange,
                        offset: lo,
                        len,
                    };
                    last = one_request(q, clock, req, comps)?;
                    lo += u64::from(len);
                }
            }
        }
        if let Some(ramp_end) = ramp_end {
            acc.count(Times::at(t), last, last.saturating_sub(ramp_end), 0);
        }
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::runner::testutil::step;
    use crate::engine::runner::{run_job, StopReason};
    use crate::engine::sim::SimClock;

    /// Flushes on memory that asks the run to stop at the `stop_at`-th.
    struct StopsAt<'s> {
        stop: &'s Stop,
        stop_at: u64,
        flushes: u64,
        done: Vec<Completion>,
    }

    impl IoQueue for StopsAt<'_> {
        fn depth(&self) -> usize {
            1
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            if matches!(req.op, Op::Flush | Op::FlushRange) {
                self.flushes += 1;
                if self.flushes == self.stop_at {
                    self.stop.request(StopReason::Interrupted);
                }
            }
            let len = if matches!(req.op, Op::Read | Op::Write) {
                req.len
            } else {
                0
            };
            self.done.push(Completion { slot, result: Ok(len) });
            Ok(())
        }
        fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            out.append(&mut self.done);
            Ok(())
        }
    }

    /// sysbench's fsync of every file after each write, over 100,000
    /// files: a stop asked during the batch (the user's SIGTERM, or the
    /// deadline) ends it at the next flush, and the step ends, rather than
    /// working through the other 99,997 flushes first (at `file_num`
    /// 10^12, as the config allowed once, it never ended).
    #[test]
    fn a_stop_ends_a_batch_of_flushes() {
        let stop = Stop::new();
        let mut s = step(
            Pattern::Seq {
                op: Op::Write,
                start: 0,
                end: 1 << 40,
            },
            4096,
            1,
        );
        (s.access, s.fsync_freq, s.fsync_files, s.flush_at_end) = (Access::Buffered, Some(1), 100_000, true);
        s.limit.ios = Some(1_000);
        let mut q = StopsAt {
            stop: &stop,
            stop_at: 3,
            flushes: 0,
            done: Vec::new(),
        };
        let clock = SimClock::default();
        let out = run_job(&s, 0, &mut q, &clock, &stop, &mut |_| ()).expect("the job ends");
        assert_eq!(q.flushes, 3, "no flush after the stop");
        assert_eq!(out.write.ios, 1, "no write after the stop");
    }
}
