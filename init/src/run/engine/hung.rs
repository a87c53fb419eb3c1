//! A disk that hangs, for tests of the runner and the run loop.

use std::sync::Arc;
use std::time::Duration;

use bench_core::io::{Completion, Geometry, IoError, IoQueue, IoReq, OpenSpec, Target};

/// A disk whose requests complete only once `release` is set (a hung
/// disk until then); counts requests submitted and queues dropped (their
/// buffers freed).
#[derive(Debug, Default)]
pub(crate) struct Hung {
    pub(crate) release: Arc<std::sync::atomic::AtomicBool>,
    pub(crate) submitted: Arc<std::sync::atomic::AtomicUsize>,
    pub(crate) dropped: Arc<std::sync::atomic::AtomicUsize>,
}

/// A queue of [`Hung`].
#[derive(Debug)]
pub(crate) struct HungQueue {
    release: Arc<std::sync::atomic::AtomicBool>,
    submitted: Arc<std::sync::atomic::AtomicUsize>,
    dropped: Arc<std::sync::atomic::AtomicUsize>,
    inflight: Vec<usize>,
}

impl IoQueue for HungQueue {
    fn depth(&self) -> usize {
        4
    }
    fn submit(&mut self, slot: usize, _req: IoReq) -> Result<(), IoError> {
        self.submitted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inflight.push(slot);
        Ok(())
    }
    fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), IoError> {
        while !self.release.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
        out.extend(
            self.inflight
                .drain(..)
                .map(|slot| Completion { slot, result: Ok(4096) }),
        );
        Ok(())
    }
}

impl Drop for HungQueue {
    fn drop(&mut self) {
        self.dropped.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Target for Hung {
    type Queue = HungQueue;
    fn geometry(&self) -> Geometry {
        Geometry {
            size: 64 << 20,
            logical_block: 512,
            physical_block: 4096,
        }
    }
    fn open(&self, _spec: &OpenSpec) -> Result<HungQueue, IoError> {
        Ok(HungQueue {
            release: Arc::clone(&self.release),
            submitted: Arc::clone(&self.submitted),
            dropped: Arc::clone(&self.dropped),
            inflight: Vec::new(),
        })
    }
    fn drop_caches(&self) -> Result<(), IoError> {
        Ok(())
    }
}
