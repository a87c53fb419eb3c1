//! `bootbench-qemu`'s command line (qemu/src/cli.rs) with what it names of
//! its crate: `Chipset` as it is (its values are in the help), and
//! stand-ins for the types whose parsing (`FromStr`) the help does not show,
//! so that the QEMU code is not compiled here.

#[path = "../../qemu/src/chipset.rs"]
pub mod chipset;
#[path = "../../qemu/src/cli.rs"]
pub mod cli;

/// Stand-in for `bootbench_qemu::disk`.
pub mod disk {
    /// `--disk SPEC`, unparsed.
    pub type DiskSpec = String;
}

/// Stand-in for `bootbench_qemu::net`.
pub mod net {
    /// `--nic`, unparsed.
    pub type Nic = String;
}

/// Stand-in for `bootbench_qemu::run`.
pub mod run {
    /// `--accel`, unparsed.
    pub type AccelChoice = String;
}
