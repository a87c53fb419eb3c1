//! One request's completion as the runner judges it, and one request alone
//! in an idle queue.

use alloc::vec::Vec;

use super::EIO;
use crate::io::{Clock, Completion, IoError, IoQueue, IoReq, Op};
use crate::vocab::units::Nanos;

/// Submit one request in slot 0 of an otherwise idle queue and wait for it.
/// Returns the time of the reap that returned it.
pub(super) fn one_request<Q: IoQueue, C: Clock>(
    q: &mut Q,
    clock: &C,
    req: IoReq,
    comps: &mut Vec<Completion>,
) -> Result<Nanos, IoError> {
    q.submit(0, req)?;
    loop {
        comps.clear();
        q.reap(1, comps)?;
        let now = clock.now();
        if let Some(c) = comps.iter().find(|c| c.slot == 0) {
            check(c, req)?;
            return Ok(now);
        }
    }
}

/// A completion's result as the runner judges it: an errno, or a short
/// read or write (EIO), is an error.
pub(super) fn check(c: &Completion, req: IoReq) -> Result<(), IoError> {
    match c.result {
        Err(errno) => Err(IoError { errno, req }),
        Ok(n) if matches!(req.op, Op::Read | Op::Write) && n < req.len => Err(IoError { errno: EIO, req }),
        Ok(_) => Ok(()),
    }
}

/// What was in flight in `slot`, now completed; EIO if the queue returned a
/// slot it was not given (its invariant broke).
pub(super) fn slot_done<T>(inflight: &mut [Option<T>], slot: usize) -> Result<T, IoError> {
    inflight.get_mut(slot).and_then(Option::take).ok_or(IoError {
        errno: EIO,
        req: IoReq {
            op: Op::Read,
            offset: 0,
            len: 0,
        },
    })
}
