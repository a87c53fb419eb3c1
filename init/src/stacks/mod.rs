//! The kernel's stacks, driven through ioctls without mdadm or dmsetup:
//! md arrays ([`md`]: raid0/1/4/5/6/10, started read-only unless every
//! member is granted) and device-mapper devices ([`dm`]: linear and crypt,
//! with `DM_READONLY_FLAG` likewise). Which stacks a run assembles, over
//! which held members, is the executor's ([`crate::run::stacks`]).

pub mod dm;
pub mod md;
