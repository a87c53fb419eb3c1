//! The disks: what is there ([`discover`]: every block device of the
//! machine, for `list` and for resolving serials and WWNs) and what each is
//! ([`identity`]: model, serial, WWN, geometry, transport, driver, and the
//! identity a grant is bound to: device number, disk sequence number);
//! [`file`] opens a target without blocking, [`scsi`] builds the SCSI and
//! ATA commands sent to a disk, [`health`] reads its health, [`selftest`]
//! runs its SMART self-test, [`capacity`] reads its hidden capacity and
//! [`telemetry`] an NVMe disk's telemetry log, [`numa`] where it sits
//! (its NUMA node, its queues' interrupts and their affinity);
//! [`holds`] reads what a disk holds ([`md`] superblocks, [`lvm`] physical
//! volumes, [`luks`] headers, firmware RAID) and the stacks they make;
//! [`unlock`] derives a LUKS container's volume key from its passphrase
//! (both read a LUKS2 header's JSON as [`luks2_meta`] types it).

pub mod bytes;
pub mod capacity;
pub mod discover;
pub mod file;
pub mod health;
pub mod holds;
pub mod identity;
pub mod link;
pub mod luks;
pub mod luks2_meta;
pub mod lvm;
pub mod md;
pub mod numa;
pub mod scsi;
pub mod selftest;
pub mod telemetry;
pub mod unlock;
pub mod zones;
