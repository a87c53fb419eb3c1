//! CPU lists as fio's `cpus_allowed` and the kernel's sysfs write them:
//! `0-3,6` (numbers and inclusive ranges, comma-separated),
//! [`CpuSet`], such a list parsed once, as a config gives it, and
//! [`Placement`], where a test's threads and buffers go (NUMA).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::fmt::Write;

/// One past the highest CPU number accepted: the kernel's largest
/// `CONFIG_NR_CPUS` (x86-64 `MAXSMP`).
pub const MAX_CPUS: u32 = 8192;

/// Why a CPU list was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuListError {
    /// Nothing but spaces.
    Empty,
    /// An entry that is not a number or a range `low-high` (the entry).
    NotANumber(String),
    /// A range whose end is below its start (start, end).
    Backwards(u32, u32),
    /// A CPU number at or above [`MAX_CPUS`].
    TooLarge(u64),
}

impl fmt::Display for CpuListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuListError::Empty => f.write_str("it is empty"),
            CpuListError::NotANumber(e) => {
                write!(f, "{e:?} is not a CPU number or a range low-high")
            }
            CpuListError::Backwards(a, b) => write!(f, "the range {a}-{b} runs backwards"),
            CpuListError::TooLarge(n) => write!(f, "CPU {n} is above {}", MAX_CPUS - 1),
        }
    }
}

fn number(s: &str) -> Result<u32, CpuListError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CpuListError::NotANumber(s.into()));
    }
    // Digits only: the parse fails on overflow alone.
    let n: u64 = s.parse().unwrap_or(u64::MAX);
    match u32::try_from(n) {
        Ok(n) if n < MAX_CPUS => Ok(n),
        _ => Err(CpuListError::TooLarge(n)),
    }
}

/// The CPUs of a list such as `0-3,6` (fio's `cpus_allowed`, the kernel's
/// `/sys/devices/system/cpu/online`), sorted, each once. Spaces around the
/// whole list and around each entry are ignored; an empty entry (`0,,1`)
/// is refused (fio stops reading there).
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, CpuListError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(CpuListError::Empty);
    }
    let mut out = Vec::new();
    for entry in s.split(',') {
        let entry = entry.trim();
        let (lo, hi) = match entry.split_once('-') {
            Some((a, b)) => (number(a.trim())?, number(b.trim())?),
            None => {
                let n = number(entry)?;
                (n, n)
            }
        };
        if hi < lo {
            return Err(CpuListError::Backwards(lo, hi));
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// `cpus` (sorted) written back as a list: `0-3,6`.
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        let _ = if end == start {
            write!(out, "{start}")
        } else {
            write!(out, "{start}-{end}")
        };
        i += 1;
    }
    out
}

/// A CPU list as a config gives it (fio's `cpus_allowed`): checked and
/// parsed once ([`CpuSet::parse`]), its CPUs sorted, each once, and its
/// text kept as given (spaces around it trimmed), which is what it shows
/// and writes (`"6,0-2"` stays `"6,0-2"`). Read from a document, a list
/// that does not parse is an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuSet {
    text: String,
    cpus: Vec<u32>,
}

impl CpuSet {
    /// The set of the list `s` ([`parse_cpu_list`]).
    pub fn parse(s: &str) -> Result<CpuSet, CpuListError> {
        Ok(CpuSet {
            cpus: parse_cpu_list(s)?,
            text: s.trim().into(),
        })
    }

    /// The CPUs, sorted, each once (never empty).
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// The list as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl serde::Serialize for CpuSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for CpuSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        CpuSet::parse(&text).map_err(|e| {
            serde::de::Error::custom(alloc::format!(
                "{text:?} is not a CPU list: {e}; expected a CPU list such as \"0-3,6\""
            ))
        })
    }
}

/// Where a test's threads run and its buffers are allocated (the config's
/// `placement`): written `"disk"`, `"any"` or a node number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Placement {
    /// On the CPUs of the NUMA node of the disk's PCI device, buffers
    /// allocated there (the default); a disk with no node (`numa_node`
    /// -1, not on PCI) or a machine of one node runs as `Any`.
    #[default]
    Disk,
    /// Wherever the scheduler puts them, buffers where the kernel's default
    /// policy puts them (bootbench before placement existed).
    Any,
    /// On the CPUs of this node, buffers there, whatever the disk (fio's
    /// `numa_cpu_nodes=N` with `numa_mem_policy=prefer:N`).
    Node(u32),
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placement::Disk => f.write_str("disk"),
            Placement::Any => f.write_str("any"),
            Placement::Node(n) => write!(f, "node {n}"),
        }
    }
}

impl serde::Serialize for Placement {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Placement::Disk => s.serialize_str("disk"),
            Placement::Any => s.serialize_str("any"),
            Placement::Node(n) => s.serialize_u32(*n),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Placement {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Placement;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"disk\", \"any\" or a NUMA node number")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Placement, E> {
                match v {
                    "disk" => Ok(Placement::Disk),
                    "any" => Ok(Placement::Any),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Placement, E> {
                u32::try_from(v)
                    .ok()
                    .filter(|n| *n < MAX_NODES)
                    .map(Placement::Node)
                    .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

/// One past the highest NUMA node number accepted: the kernel's largest
/// `CONFIG_NODES_SHIFT` (10 on x86-64).
pub const MAX_NODES: u32 = 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn lists_as_fio_and_sysfs_write_them() {
        assert_eq!(parse_cpu_list("0-3,6"), Ok(vec![0, 1, 2, 3, 6]));
        assert_eq!(parse_cpu_list(" 5 "), Ok(vec![5]));
        assert_eq!(parse_cpu_list("0-1\n"), Ok(vec![0, 1]));
        assert_eq!(parse_cpu_list("6,0-2, 1"), Ok(vec![0, 1, 2, 6]), "sorted, each once");
        assert_eq!(parse_cpu_list("8191"), Ok(vec![8191]));
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn bad_lists_say_why() {
        assert_eq!(parse_cpu_list(""), Err(CpuListError::Empty));
        assert_eq!(parse_cpu_list("  "), Err(CpuListError::Empty));
        assert_eq!(parse_cpu_list("3-1"), Err(CpuListError::Backwards(3, 1)));
        assert_eq!(parse_cpu_list("0,,1"), Err(CpuListError::NotANumber("".into())));
        assert_eq!(parse_cpu_list("a"), Err(CpuListError::NotANumber("a".into())));
        assert_eq!(parse_cpu_list("-1"), Err(CpuListError::NotANumber("".into())));
        assert_eq!(parse_cpu_list("1-"), Err(CpuListError::NotANumber("".into())));
        assert_eq!(parse_cpu_list("0-2-3"), Err(CpuListError::NotANumber("2-3".into())));
        assert_eq!(parse_cpu_list("8192"), Err(CpuListError::TooLarge(8192)));
        assert_eq!(
            parse_cpu_list("99999999999999999999999"),
            Err(CpuListError::TooLarge(u64::MAX))
        );
        assert_eq!(
            CpuListError::Backwards(3, 1).to_string(),
            "the range 3-1 runs backwards"
        );
    }

    #[test]
    fn a_set_keeps_its_text_and_its_cpus() {
        let c = CpuSet::parse(" 6,0-2, 1 ").unwrap();
        assert_eq!((c.as_str(), c.cpus()), ("6,0-2, 1", &[0, 1, 2, 6][..]));
        assert_eq!(alloc::format!("{c}"), "6,0-2, 1");
        assert_eq!(CpuSet::parse("3-1"), Err(CpuListError::Backwards(3, 1)));
    }

    #[test]
    fn placement_says_which() {
        let said: Vec<String> = [Placement::Disk, Placement::Any, Placement::Node(3)]
            .iter()
            .map(|p| alloc::format!("{p}"))
            .collect();
        assert_eq!(said, ["disk", "any", "node 3"]);
    }
}
