//! The kernel's log lines that name a disk of the run (read from
//! `/dev/kmsg` during it; parsed and classified by [`crate::device::kmsg`]).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Serialize};

closed_set! {
    /// What a kernel log line says of a disk (see [`crate::device::kmsg::classify`]
    /// for the kernel's messages behind each).
    pub enum KernelLogKind ("snake_case") {
        /// A request failed: `I/O error, dev sda, sector N` and the block
        /// layer's other request errors, `Buffer I/O error on dev`, a SCSI
        /// command's `FAILED Result:`, an NVMe command's error status.
        IoError,
        /// The medium could not be read: `critical medium error`, sense
        /// key `Medium Error`, `Unrecovered read error`, libata's
        /// `(media error)`.
        MediumError,
        /// libata's error handler reports a failed command: `exception
        /// Emask`, `failed command:`, `status: {`, `error: { UNC }`.
        AtaException,
        /// The SATA link was reset or went down: `hard resetting link`,
        /// `SATA link down`, `link is slow to respond`, `COMRESET failed`,
        /// `limiting SATA link speed`.
        LinkReset,
        /// An NVMe command timed out: `I/O N QID N timeout`.
        NvmeTimeout,
        /// An NVMe command was aborted: `Abort status`, `aborting`.
        NvmeAbort,
        /// An NVMe controller was reset or removed: `controller is down;
        /// will reset`, `resetting controller`, `Removing after probe
        /// failure`.
        NvmeReset,
        /// Another line naming the disk at warning level or worse.
        Other,
    }
}

/// One kernel log line that names a disk of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelLogLine {
    /// The disk, as its [`super::TargetInfo::path`].
    pub target: String,
    /// The test running on that disk when the kernel logged the line
    /// (directly, or on an array or layer over it, or all at once); `None`
    /// between tests.
    pub test: Option<String>,
    /// What it says ([`KernelLogKind`]).
    pub kind: KernelLogKind,
    /// Its syslog level: 0 emergency ... 3 error, 4 warning, 6 info, 7 debug.
    pub level: u8,
    /// The kernel's timestamp of the line, nanoseconds since boot (the
    /// record's microseconds x 1000).
    pub time_ns: u64,
    /// The line as the kernel wrote it, control characters escaped
    /// (`\xHH`), at most [`crate::device::kmsg::TEXT_MAX`] bytes.
    pub text: String,
    /// The 512-byte sector the line names (`..., sector N`), when it names
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sector: Option<u64>,
}

/// How the kernel's log was read during the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelLogStatus {
    /// The disks whose lines were looked for, as their
    /// [`super::TargetInfo::path`].
    pub watched: Vec<String>,
    /// Why `/dev/kmsg` could not be read (then no line was seen), or
    /// stopped being read.
    pub error: Option<String>,
    /// How many times records were overwritten before they were read (the
    /// kernel's buffer wrapped: `EPIPE`); lines may be missing.
    pub overwritten: u64,
    /// Per disk ([`super::TargetInfo::path`]): lines that named it past the
    /// bound kept per disk ([`crate::device::kmsg::LINES_PER_DISK`]), counted and
    /// not kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dropped: BTreeMap<String, u64>,
}
