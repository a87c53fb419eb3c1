//! What disks and the kernel say, parsed: the path to a disk (link speeds, PHY and AER counters), SMART and NVMe health, self-tests, hidden capacity, erase support, the kernel's log, on-disk signatures and the GPT, zones, Seagate's FARM, the OCP NVMe health log and the NVMe telemetry header.

pub mod capacity;
pub mod erase;
pub mod farm;
pub mod gpt;
pub mod health;
pub mod kmsg;
pub mod link;
pub mod ocp;
pub mod selftest;
pub mod signatures;
pub mod telemetry;
pub mod zone_area;
pub mod zones;
