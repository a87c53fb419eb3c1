//! The real I/O engines behind bench-core's `Target` and `IoQueue`: O_DIRECT
//! (or buffered) pread/pwrite for one request in flight, io_uring for more;
//! a monotonic clock; the threaded step runner (one thread per job).
//!
//! API used by the CLI:
//! - `DevTarget::open(path: &str, permit: Option<WritePermit>) -> Result<DevTarget, EngineError>`
//!   (read-only unless a permit from `safety` is given), implementing
//!   `bench_core::io::Target`;
//! - `MonoClock` implementing `bench_core::io::Clock` (CLOCK_MONOTONIC);
//! - `ThreadedRunner { target: &DevTarget }` implementing
//!   `bench_core::runner::StepRunner`.
