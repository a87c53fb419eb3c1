//! A disk's SMART self-test in the document: which, how it ended, where
//! the outcome came from.

use alloc::string::String;
use core::fmt;
use serde::{Deserialize, Serialize};

closed_set! {
    /// Which self-test: the names of ATA's SMART EXECUTE OFF-LINE
    /// IMMEDIATE subcommands 01h, 02h, 03h (NVMe and SCSI have the first two).
    pub enum SelfTestKind ("snake_case") {
        /// A few minutes (at most 2 on NVMe and SCSI): the electronics, a
        /// sample of the media.
        Short,
        /// Every sector read: hours on a large HDD.
        Extended,
        /// ATA only: damage from transport, a few minutes.
        Conveyance,
    }
}

closed_set! {
    /// How a self-test ended: each result code that the ATA self-test
    /// execution status (ACS-3 Table 53), the NVMe Device Self-test result
    /// (NVMe 1.4 Figure 210) or the SCSI self-test result (SPC-4 Table 407)
    /// distinguishes, and what bootbench itself saw.
    pub enum SelfTestOutcome ("snake_case") {
        /// Completed without error (all three: code 0).
        Completed,
        /// Aborted by the host (ATA 1, NVMe 1: a Device Self-test abort,
        /// SCSI 1: SEND DIAGNOSTIC abort).
        AbortedByHost,
        /// Interrupted by a reset (ATA 2: hard or soft reset, NVMe 2:
        /// controller level reset, SCSI 2: a task management function or a
        /// reset).
        InterruptedByReset,
        /// NVMe 3: a namespace was removed.
        AbortedByNamespaceRemoval,
        /// NVMe 4: a Format NVM command.
        AbortedByFormat,
        /// NVMe 9: a sanitize operation.
        AbortedBySanitize,
        /// NVMe 8: aborted for an unknown reason.
        AbortedUnknown,
        /// A fatal or unknown error kept it from completing (ATA 3, NVMe 5,
        /// SCSI 3).
        FatalError,
        /// Completed with a failed element the device does not name (ATA
        /// 4, NVMe 6, SCSI 4).
        FailedUnknown,
        /// ATA 5: the electrical element failed.
        FailedElectrical,
        /// ATA 6: the servo or seek element failed.
        FailedServo,
        /// ATA 7: the read element failed.
        FailedRead,
        /// ATA 8: handling damage suspected.
        FailedHandling,
        /// A numbered segment failed (NVMe 7, SCSI 5-7; see `segment`).
        FailedSegment,
        /// A result code the standards reserve.
        Reserved,
        /// Still running when the wait ran out: aborted on the device.
        Timeout,
        /// The run was interrupted (SIGINT or SIGTERM): aborted on the device.
        Interrupted,
        /// The device has no such self-test (or no self-tests, or no
        /// commands bootbench can send it).
        NotSupported,
        /// A command failed or its answer could not be read (see `error`).
        Error,
    }
}

impl SelfTestOutcome {
    /// `Some(true)` for completed without error, `Some(false)` for a
    /// failing result, `None` where there is no result (aborted,
    /// interrupted, timeout, not supported, error, reserved).
    pub const fn passed(self) -> Option<bool> {
        use SelfTestOutcome::*;
        match self {
            Completed => Some(true),
            FatalError | FailedUnknown | FailedElectrical | FailedServo | FailedRead | FailedHandling
            | FailedSegment => Some(false),
            _ => None,
        }
    }
}

closed_set! {
    /// Where a self-test's result was read.
    pub enum SelfTestSource ("snake_case") {
        /// ATA: the SMART self-test log (SMART READ LOG, log 06h).
        AtaSelfTestLog,
        /// ATA: the extended self-test log (READ LOG EXT, log 07h), for a
        /// failing LBA beyond 28 bits.
        AtaExtSelfTestLog,
        /// ATA: the self-test execution status of SMART READ DATA (byte
        /// 363) alone, when the log has no new entry.
        AtaSmartData,
        /// NVMe: the Device Self-test log (log page 06h).
        NvmeSelfTestLog,
        /// SCSI: the self-test results log page (LOG SENSE 10h).
        ScsiSelfTestLog,
        /// No result was read.
        None,
    }
}

/// A disk's SMART self-test: started before the benchmarks with the
/// device's own command, polled, its result read back from the device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelfTest {
    /// Which self-test was asked for.
    pub kind: SelfTestKind,
    /// How it ended.
    pub outcome: SelfTestOutcome,
    /// `true`: completed without error; `false`: a failing result;
    /// `None`: no result ([`SelfTestOutcome::passed`]).
    pub passed: Option<bool>,
    /// What was left to do when it ended, percent (ATA: tenths of the
    /// test; NVMe: 100 - percent complete); `None` when not known.
    #[serde(default)]
    pub remaining_pct: Option<u8>,
    /// The first failing LBA, where the log gives one.
    #[serde(default)]
    pub failing_lba: Option<u64>,
    /// The failed segment's number (NVMe, SCSI), where the log gives one.
    #[serde(default)]
    pub segment: Option<u8>,
    /// The device's power-on hours when the log entry was written.
    #[serde(default)]
    pub power_on_hours: Option<u64>,
    /// The device's own estimate of the test's length, ns (ATA: SMART
    /// data polling minutes, NVMe: EDSTT for extended and 2 minutes for
    /// short); `None` when it gives none.
    #[serde(default)]
    pub estimate_ns: Option<u64>,
    /// From the start command to the result (or the abort), ns.
    pub duration_ns: u64,
    /// Where the result was read.
    pub source: SelfTestSource,
    /// What happened, in words.
    pub message: String,
    /// Why a command failed or an answer could not be read.
    #[serde(default)]
    pub error: Option<String>,
}
