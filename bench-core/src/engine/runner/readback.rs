//! A verifying step's read-back: what a job wrote, read again and compared
//! with what it should hold.

use alloc::vec;
use alloc::vec::Vec;

use super::offsets::OffsetGen;
use super::request::{check, slot_done};
use super::{Stop, EOPNOTSUPP};
use crate::engine::verify;
use crate::io::{IoError, IoQueue, IoReq, Op};
use crate::spec::Step;

/// Read back, untimed, what job `job` of a verifying `step` wrote in its
/// first `generated` requests, `depth` reads in flight, and compare each
/// with [`verify::fill`]'s contents. Replays the job's offset generator, so
/// it checks every offset written (a sequential walk that wrapped: its slice
/// once). Returns the bytes verified; a mismatch is an error with errno
/// [`verify::VERIFY_ERRNO`] (EILSEQ, as fio) for the read that found it.
pub(super) fn verify_job<Q: IoQueue>(
    step: &Step,
    job: u32,
    q: &mut Q,
    generated: u64,
    depth: usize,
    stop: &Stop,
) -> Result<u64, IoError> {
    let mut gen = OffsetGen::new(step, job);
    let mut left = gen.cycle_len().map_or(generated, |c| generated.min(c));
    let mut inflight: Vec<Option<IoReq>> = vec![None; depth];
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut comps = Vec::with_capacity(depth);
    let mut verified = 0u64;
    loop {
        while left > 0 && stop.reason().is_none() {
            let Some(&slot) = free.last() else { break };
            left -= 1;
            let w = gen.next_req();
            if w.op != Op::Write {
                continue;
            }
            let req = IoReq { op: Op::Read, ..w };
            q.submit(slot, req)?;
            free.pop();
            inflight[slot] = Some(req);
        }
        if free.len() == depth {
            return Ok(verified);
        }
        comps.clear();
        q.reap(1, &mut comps)?;
        for c in &comps {
            let req = slot_done(&mut inflight, c.slot)?;
            free.push(c.slot);
            check(c, req)?;
            let len = usize::try_from(req.len).unwrap_or(usize::MAX);
            let data = q.read_buf(c.slot, len).ok_or(IoError { errno: EOPNOTSUPP, req })?;
            if verify::first_mismatch(step.seed, req.offset, data).is_some() {
                return Err(IoError {
                    errno: verify::VERIFY_ERRNO,
                    req,
                });
            }
            verified += u64::from(req.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::document::result::Status;
    use crate::engine::runner::testutil::step;
    use crate::engine::runner::{error_status, run_job, OffsetGen, Stop, EOPNOTSUPP};
    use crate::engine::sim::{SimClock, SimDisk, SimModel};
    use crate::engine::verify;
    use crate::io::{Access, Completion, IoError, IoQueue, IoReq, MemQueue, Op, OpenSpec, Target};
    use crate::spec::Pattern;
    use alloc::vec::Vec;

    /// A queue over memory that corrupts the data of one write: flips a bit
    /// of what reaches the "disk" at `bad` (a lost or damaged write).
    struct Corrupting<'a> {
        inner: MemQueue<'a>,
        bad: Option<u64>,
    }

    impl IoQueue for Corrupting<'_> {
        fn depth(&self) -> usize {
            self.inner.depth()
        }
        fn submit(&mut self, slot: usize, req: IoReq) -> Result<(), IoError> {
            self.inner.submit(slot, req)?;
            if let Some(bad) = self
                .bad
                .filter(|&b| req.op == Op::Write && (req.offset..req.offset + 4096).contains(&b))
            {
                self.inner.data[usize::try_from(bad).unwrap()] ^= 0x10;
            }
            Ok(())
        }
        fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
            self.inner.reap(min, out)
        }
        fn write_buf(&mut self, slot: usize, len: usize) -> Option<&mut [u8]> {
            self.inner.write_buf(slot, len)
        }
        fn read_buf(&self, slot: usize, len: usize) -> Option<&[u8]> {
            self.inner.read_buf(slot, len)
        }
    }

    /// A verifying write step writes each offset's known contents, reads
    /// everything back after the step (a sequential walk that wrapped: once;
    /// random writes: every offset written) and counts the bytes verified;
    /// one flipped bit on the "disk" makes it fail with EILSEQ at the
    /// request that holds it. Without verify the same corruption passes.
    #[test]
    fn verify_reads_back_what_was_written() {
        let size = 256 * 1024usize;
        let seq = Pattern::Seq {
            op: Op::Write,
            start: 0,
            end: 64 * 1024,
        };
        let rand = Pattern::Random {
            read_pct: 0,
            start: 0,
            end: size as u64,
        };
        let mix = Pattern::Random {
            read_pct: 50,
            start: 0,
            end: size as u64,
        };
        // (pattern, requests, depth, bytes expected verified)
        let cases = [
            (seq.clone(), 10u64, 1usize, 10 * 4096u64),
            (seq, 40, 4, 16 * 4096),
            (rand.clone(), 30, 8, 30 * 4096),
            (mix.clone(), 30, 2, 0),
        ];
        for (i, (pattern, ios, depth, want)) in cases.into_iter().enumerate() {
            let mut s = step(pattern.clone(), 4096, 1);
            (s.iodepth, s.limit.ios, s.verify) = (u32::try_from(depth).unwrap(), Some(ios), true);
            let clock = SimClock::default();
            let mut data = alloc::vec![0u8; size];
            let mut q = Corrupting {
                inner: MemQueue::new(&mut data, depth),
                bad: None,
            };
            let out = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()).unwrap();
            let writes = out.write.ios * 4096;
            if want > 0 {
                assert_eq!(out.verified, want, "case {i}");
            } else {
                // The mix: every write was verified, no read was.
                assert!(writes > 0 && out.read.ios > 0, "case {i}");
                assert!(
                    out.verified >= 4096 && out.verified <= writes,
                    "case {i}: {}",
                    out.verified
                );
            }
            // What is on the "disk" is the known contents at every written offset.
            let mut g = OffsetGen::new(&s, 0);
            for _ in 0..ios {
                let r = g.next_req();
                if r.op == Op::Write {
                    let at = usize::try_from(r.offset).unwrap();
                    assert_eq!(
                        verify::first_mismatch(42, r.offset, &data[at..at + 4096]),
                        None,
                        "case {i}"
                    );
                }
            }

            // The same step on a disk that damages one written byte.
            let mut data = alloc::vec![0u8; size];
            let mut g = OffsetGen::new(&s, 0);
            let first_write = core::iter::from_fn(|| Some(g.next_req()))
                .find(|r| r.op == Op::Write)
                .unwrap();
            let bad = first_write.offset + 1000;
            let mut q = Corrupting {
                inner: MemQueue::new(&mut data, depth),
                bad: Some(bad),
            };
            let Err(e) = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()) else {
                panic!("case {i}: the damaged write was not noticed");
            };
            assert_eq!(e.errno, verify::VERIFY_ERRNO, "case {i}");
            assert_eq!((e.req.op, e.req.offset), (Op::Read, first_write.offset), "case {i}");
            let Status::Error { message, .. } = error_status(&e) else {
                panic!("case {i}: not an error status");
            };
            assert!(
                message.starts_with("verify: the 4096 bytes read back at offset"),
                "{message}"
            );
            // Without verify, nothing notices.
            s.verify = false;
            let mut data = alloc::vec![0u8; size];
            let mut q = Corrupting {
                inner: MemQueue::new(&mut data, depth),
                bad: Some(bad),
            };
            assert_eq!(
                run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ())
                    .unwrap()
                    .verified,
                0
            );
        }
    }

    /// A verifying step on a queue that gives no buffer access (the
    /// simulator keeps no data) fails with EOPNOTSUPP instead of pretending.
    #[test]
    fn verify_needs_buffer_access() {
        let disk = SimDisk::new(SimModel::ssd(1 << 30), true);
        let mut s = step(
            Pattern::Seq {
                op: Op::Write,
                start: 0,
                end: 1 << 20,
            },
            4096,
            1,
        );
        s.verify = true;
        let clock = disk.clock.clone();
        let spec = OpenSpec::plain(Access::Direct, true, 1, 4096, 1);
        let mut q = disk.open(&spec).unwrap();
        let Err(e) = run_job(&s, 0, &mut q, &clock, &Stop::new(), &mut |_| ()) else {
            panic!("verify without buffer access passed");
        };
        assert_eq!((e.errno, e.req.op), (EOPNOTSUPP, Op::Write));
    }
}
