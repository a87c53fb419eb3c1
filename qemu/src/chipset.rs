//! The machine type of `--machine` ([`Chipset`]), in a file of its own (clap
//! and std only) so that bootbench-man can include it with the command line
//! (`cli.rs`) whose help shows its values.

/// QEMU's machine type: the chipset the guest sees (`--machine pc|q35`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Chipset {
    /// `pc`: i440FX + PIIX, QEMU's default. Its PCI interrupts go through
    /// PIIX link devices that the guest's ACPI code routes one at a time
    /// (about 140 ms per device under TCG).
    #[default]
    Pc,
    /// `q35`: Q35 + ICH9, PCI Express, as servers since about 2010 are.
    Q35,
}
