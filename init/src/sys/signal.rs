//! SIGINT and SIGTERM on a live system: the first asks the run to stop
//! (the [`Stop`] given to [`install_stop_handlers`], the engine's `STOP`):
//! the running test ends after its requests in
//! flight, the rest are skipped, the stacks are torn down and the results
//! written. A second signal exits at once (status 130), saying that md/dm
//! devices may remain.

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use bench_core::engine::runner::{Stop, StopReason};
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};

static SIGNALS: AtomicU32 = AtomicU32::new(0);

/// The stop the first signal requests (null until the handlers are installed).
static TARGET: AtomicPtr<Stop> = AtomicPtr::new(std::ptr::null_mut());

/// Write `msg` to stderr with write(2) (async-signal-safe: `stderr()`
/// only names descriptor 2, taking no lock); a failed or short write is
/// only a lost message.
fn say(msg: &[u8]) {
    let _ = nix::unistd::write(std::io::stderr(), msg);
}

extern "C" fn on_stop_signal(_sig: libc::c_int) {
    if SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
        // SAFETY: TARGET is null or was stored from a `&'static Stop` by
        // install_stop_handlers; Stop::request only touches atomics.
        if let Some(stop) = unsafe { TARGET.load(Ordering::SeqCst).as_ref() } {
            stop.request(StopReason::Interrupted);
        }
        say(b"\nbootbench-init: stopping: the running test ends after its requests in flight, then teardown and results (a second signal exits at once)\n");
    } else {
        say(b"\nbootbench-init: second signal: exiting now; md/dm devices this run assembled may remain\n");
        // SAFETY: _exit(2) is async-signal-safe and does not return.
        unsafe { libc::_exit(130) };
    }
}

/// Install the handler for SIGINT and SIGTERM, which asks `stop` to stop
/// (SA_RESTART: interrupted reads and writes resume; the engines retry
/// EINTR where they see it).
pub fn install_stop_handlers(stop: &'static Stop) -> std::io::Result<()> {
    TARGET.store(std::ptr::from_ref(stop).cast_mut(), Ordering::SeqCst);
    let action = SigAction::new(
        SigHandler::Handler(on_stop_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only does async-signal-safe things (atomics,
        // write(2), _exit(2)), and the previous handler, which is dropped,
        // is the default one: nothing of this process relied on it.
        unsafe { sigaction(sig, &action) }?;
    }
    Ok(())
}
