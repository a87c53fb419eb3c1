//! The table's vocabulary: where a magic sits ([`At`]) and one format's
//! probe ([`Probe`]: its name, places, magics and second check).

use alloc::vec::Vec;

use super::Regions;

/// Where a magic sits.
#[derive(Clone, Copy, Debug)]
pub(super) enum At {
    /// This many bytes from the start.
    Start(u64),
    /// This many bytes before the end (libblkid's negative `kboff`).
    End(u64),
    /// In the `back`-th 512-byte sector counted from the end (1: the last
    /// whole one), `plus` bytes into it: libblkid's
    /// `((size / 0x200) - back) * 0x200`.
    Sector { back: u64, plus: u64 },
    /// As `Sector`, for 512-byte sectors and for the device's logical
    /// blocks (4Kn disks put firmware RAID metadata and the GPT backup
    /// header in their last 4096-byte blocks); also for 4096-byte blocks
    /// when `always_4k`.
    Block { back: u64, plus: u64, always_4k: bool },
    /// Computed from the size (`None`: the device is too small).
    Calc(fn(u64) -> Option<u64>),
}

impl At {
    /// The offsets this place stands for on a target of `size` bytes with
    /// logical blocks of `lb` bytes.
    pub(super) fn resolve(self, size: u64, lb: u64, out: &mut Vec<u64>) {
        let back_from_end = |bs: u64, back: u64, plus: u64| -> Option<u64> {
            let blocks = size / bs;
            blocks.checked_sub(back)?.checked_mul(bs)?.checked_add(plus)
        };
        match self {
            At::Start(o) => out.push(o),
            At::End(n) => out.extend(size.checked_sub(n)),
            At::Sector { back, plus } => out.extend(back_from_end(512, back, plus)),
            At::Block { back, plus, always_4k } => {
                for bs in [512, lb, if always_4k { 4096 } else { 512 }] {
                    if bs >= 512 {
                        out.extend(back_from_end(bs, back, plus));
                    }
                }
            }
            At::Calc(f) => out.extend(f(size)),
        }
    }
}

/// A second check, given the target's bytes and the offset where the
/// magic matched.
pub(super) type Check = fn(&Regions<'_>, u64) -> bool;

/// One format: found where any of `magics` sits at any of `at` and `check`
/// (if any) agrees.
pub(super) struct Probe {
    pub(super) what: &'static str,
    pub(super) at: &'static [At],
    pub(super) magics: &'static [&'static [u8]],
    pub(super) check: Option<Check>,
}

/// A probe found by its magic alone.
pub(super) const fn p(what: &'static str, at: &'static [At], magics: &'static [&'static [u8]]) -> Probe {
    Probe {
        what,
        at,
        magics,
        check: None,
    }
}

/// A probe found by its magic and a second check.
pub(super) const fn pc(what: &'static str, at: &'static [At], magics: &'static [&'static [u8]], check: Check) -> Probe {
    Probe {
        what,
        at,
        magics,
        check: Some(check),
    }
}
