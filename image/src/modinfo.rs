//! The `.modinfo` section of a kernel module (`.ko`, ELF64 little-endian).
//!
//! The section is a run of NUL-separated `key=value` strings written by the kernel's
//! `MODULE_INFO()` macros: `name=`, `depends=` (comma list, may be empty), `alias=` (one per alias,
//! a glob), `softdep=` (`pre: a b post: c`), plus license, vermagic and others we ignore.
//! Only the section headers are read (with the `object` crate), so this works on signed,
//! unstripped modules as Debian ships them.

use object::elf::FileHeader64;
use object::read::elf::{FileHeader, SectionHeader};
use object::LittleEndian;
use std::fmt;

/// What the image builder needs from one module's `.modinfo`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModInfo {
    /// `name=`, with `-` already `_` (the kernel writes it that way; we normalise anyway).
    pub name: Option<String>,
    /// `depends=`, module names, normalised to `_`, in the order written.
    pub depends: Vec<String>,
    /// Every `alias=` value, in the order written.
    pub aliases: Vec<String>,
    /// Every `softdep=` merged: modules to load before this one (names or aliases, as written).
    pub softdep_pre: Vec<String>,
    /// Every `softdep=` merged: modules to load after this one.
    pub softdep_post: Vec<String>,
}

/// Why a `.ko` could not be read as a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModinfoError {
    /// Not an ELF file, or not 64-bit little-endian.
    NotElf64Le,
    /// A header or section lies outside the file.
    Truncated(&'static str),
    /// No section named `.modinfo`.
    NoModinfo,
}

impl fmt::Display for ModinfoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotElf64Le => write!(f, "not an ELF64 little-endian file"),
            Self::Truncated(what) => write!(f, "truncated ELF: {what} lies outside the file"),
            Self::NoModinfo => write!(f, "no .modinfo section"),
        }
    }
}

impl std::error::Error for ModinfoError {}

/// `-` and `_` are the same in module names; the canonical form uses `_`.
pub fn normalize(name: &str) -> String {
    name.replace('-', "_")
}

/// The bytes of the `.modinfo` section of an ELF64 little-endian file. Only the file header,
/// the section headers and their name table are read (object's low-level ELF reader).
pub fn modinfo_section(elf: &[u8]) -> Result<&[u8], ModinfoError> {
    // Magic, class, version and data encoding: anything else is not a module for x86-64.
    let header = FileHeader64::<LittleEndian>::parse(elf).map_err(|_| ModinfoError::NotElf64Le)?;
    let endian = header.endian().map_err(|_| ModinfoError::NotElf64Le)?;
    let sections = header
        .sections(endian, elf)
        .map_err(|_| ModinfoError::Truncated("section headers"))?;
    let (_, section) = sections
        .section_by_name(endian, b".modinfo")
        .ok_or(ModinfoError::NoModinfo)?;
    section
        .data(endian, elf)
        .map_err(|_| ModinfoError::Truncated("section"))
}

/// Parses the NUL-separated `key=value` strings of a `.modinfo` section.
pub fn parse_modinfo(section: &[u8]) -> ModInfo {
    let mut info = ModInfo::default();
    for entry in section.split(|&b| b == 0) {
        let Ok(entry) = std::str::from_utf8(entry) else {
            continue;
        };
        let Some((key, value)) = entry.split_once('=') else {
            continue;
        };
        match key {
            "name" => info.name = Some(normalize(value)),
            "depends" => {
                info.depends
                    .extend(value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(normalize));
            }
            "alias" => info.aliases.push(value.to_owned()),
            "softdep" => parse_softdep(value, &mut info.softdep_pre, &mut info.softdep_post),
            _ => {}
        }
    }
    info
}

/// `pre: a b post: c` (either part optional, in any order, repeated) into the two lists.
/// Words before any `pre:`/`post:` are ignored, as modprobe does.
pub fn parse_softdep(value: &str, pre: &mut Vec<String>, post: &mut Vec<String>) {
    #[derive(Clone, Copy)]
    enum Part {
        None,
        Pre,
        Post,
    }
    let mut part = Part::None;
    for word in value.split_whitespace() {
        match word {
            "pre:" => part = Part::Pre,
            "post:" => part = Part::Post,
            w => match part {
                Part::Pre => pre.push(w.to_owned()),
                Part::Post => post.push(w.to_owned()),
                Part::None => {}
            },
        }
    }
}

/// Reads one module's `.modinfo` from the bytes of its `.ko`.
pub fn read_modinfo(elf: &[u8]) -> Result<ModInfo, ModinfoError> {
    modinfo_section(elf).map(parse_modinfo)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A real kernel tree: the one `make image` unpacks into out/kernel, or a development copy
    /// in /work/kernel.
    pub(crate) fn real_tree() -> Option<std::path::PathBuf> {
        [
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../out/kernel"),
            "/work/kernel".into(),
        ]
        .into_iter()
        .find(|dir| dir.join("lib/modules").is_dir())
    }

    /// A real module (`rel` below `kernel/`) of [`real_tree`], if there is one.
    fn real_module(rel: &str) -> Option<std::path::PathBuf> {
        std::fs::read_dir(real_tree()?.join("lib/modules"))
            .ok()?
            .flatten()
            .map(|e| e.path().join("kernel").join(rel))
            .find(|p| p.exists())
    }

    /// A minimal ELF64 LE relocatable with a null section, `.text`, `.modinfo` and `.shstrtab`.
    pub(crate) fn tiny_elf(modinfo: &[u8]) -> Vec<u8> {
        let shstrtab = b"\0.text\0.modinfo\0.shstrtab\0";
        let text = b"\xc3\xc3\xc3\xc3"; // ret
        let mut out = vec![0u8; 64];
        out[..4].copy_from_slice(b"\x7fELF");
        out[4] = 2; // ELFCLASS64
        out[5] = 1; // ELFDATA2LSB
        out[6] = 1; // EV_CURRENT
        out[0x10..0x12].copy_from_slice(&1u16.to_le_bytes()); // ET_REL
        out[0x12..0x14].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
        let text_off = out.len();
        out.extend_from_slice(text);
        let modinfo_off = out.len();
        out.extend_from_slice(modinfo);
        let strtab_off = out.len();
        out.extend_from_slice(shstrtab);
        while out.len() % 8 != 0 {
            out.push(0);
        }
        let shoff = out.len();
        let sh = |name: u32, ty: u32, off: usize, size: usize| {
            let mut h = [0u8; 64];
            h[0..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&ty.to_le_bytes());
            h[24..32].copy_from_slice(&(off as u64).to_le_bytes());
            h[32..40].copy_from_slice(&(size as u64).to_le_bytes());
            h
        };
        out.extend_from_slice(&[0u8; 64]);
        out.extend_from_slice(&sh(1, 1, text_off, text.len()));
        out.extend_from_slice(&sh(7, 1, modinfo_off, modinfo.len()));
        out.extend_from_slice(&sh(16, 3, strtab_off, shstrtab.len()));
        out[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        out[0x34..0x36].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
        out[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
        out[0x3C..0x3E].copy_from_slice(&4u16.to_le_bytes()); // e_shnum
        out[0x3E..0x40].copy_from_slice(&3u16.to_le_bytes()); // e_shstrndx
        out
    }

    #[test]
    fn parses_a_constructed_elf() {
        let section = b"license=GPL\0depends=libata,scsi_mod,\0alias=pci:v*d*sv*sd*bc01sc06i01*\0\
alias=pci:v00008086d00002922sv*sd*bc*sc*i*\0softdep=pre: ecb post: foo-bar\0softdep=pre: crypto-crc32c\0\
name=ahci\0vermagic=6.1.0 SMP mod_unload\0";
        let elf = tiny_elf(section);
        let info = read_modinfo(&elf).unwrap();
        assert_eq!(info.name.as_deref(), Some("ahci"));
        assert_eq!(info.depends, ["libata", "scsi_mod"]);
        assert_eq!(
            info.aliases,
            ["pci:v*d*sv*sd*bc01sc06i01*", "pci:v00008086d00002922sv*sd*bc*sc*i*"]
        );
        assert_eq!(info.softdep_pre, ["ecb", "crypto-crc32c"]);
        assert_eq!(info.softdep_post, ["foo-bar"]);
    }

    #[test]
    fn empty_depends_and_dashes() {
        let elf = tiny_elf(b"depends=\0name=crc32c-generic\0");
        let info = read_modinfo(&elf).unwrap();
        assert!(info.depends.is_empty());
        assert_eq!(info.name.as_deref(), Some("crc32c_generic"));
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(
            read_modinfo(b"not an elf at all, not even close to sixty-four bytes long....."),
            Err(ModinfoError::NotElf64Le)
        );
        // A 32-bit or a big-endian ELF is not a module for x86-64.
        for (byte, value) in [(4, 1), (5, 2)] {
            let mut elf = tiny_elf(b"name=x\0");
            elf[byte] = value;
            assert_eq!(
                read_modinfo(&elf),
                Err(ModinfoError::NotElf64Le),
                "e_ident[{byte}] = {value}"
            );
        }
        let mut elf = tiny_elf(b"name=x\0");
        // Point the section headers past the end of the file.
        elf[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(read_modinfo(&elf), Err(ModinfoError::Truncated(_))));
        let mut elf = tiny_elf(b"name=x\0");
        // Cut the file inside the section headers.
        elf.truncate(elf.len() - 8);
        assert!(matches!(read_modinfo(&elf), Err(ModinfoError::Truncated(_))));
        let mut elf = tiny_elf(b"name=x\0");
        // Point .modinfo's data (section 2, sh_offset at 24) past the end of the file.
        let sh2 = usize::try_from(u64::from_le_bytes(elf[0x28..0x30].try_into().unwrap())).unwrap() + 2 * 64;
        elf[sh2 + 24..sh2 + 32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(read_modinfo(&elf), Err(ModinfoError::Truncated("section")));
        let mut elf = tiny_elf(b"name=x\0");
        // Rename ".modinfo" so it is not found.
        let pos = elf.windows(8).position(|w| w == b".modinfo").unwrap();
        elf[pos + 1] = b'X';
        assert_eq!(read_modinfo(&elf), Err(ModinfoError::NoModinfo));
    }

    #[test]
    fn softdep_forms() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            ("pre: ecb", &["ecb"], &[]),
            ("post: mpls_gso", &[], &["mpls_gso"]),
            ("pre: a b post: c", &["a", "b"], &["c"]),
            ("post: c pre: a", &["a"], &["c"]),
            ("gcm ccm", &[], &[]),
        ];
        for (text, want_pre, want_post) in cases {
            let (mut pre, mut post) = (vec![], vec![]);
            parse_softdep(text, &mut pre, &mut post);
            assert_eq!(&pre, want_pre, "{text}");
            assert_eq!(&post, want_post, "{text}");
        }
    }

    #[test]
    fn real_ahci_if_present() {
        let Some(path) = real_module("drivers/ata/ahci.ko") else {
            eprintln!("skipped: no drivers/ata/ahci.ko in out/kernel or /work/kernel (run `make image`)");
            return;
        };
        let info = read_modinfo(&std::fs::read(path).unwrap()).unwrap();
        assert_eq!(info.name.as_deref(), Some("ahci"));
        assert!(info.depends.iter().any(|d| d == "libahci"), "{:?}", info.depends);
        assert!(info.aliases.iter().any(|a| a.starts_with("pci:")), "{:?}", info.aliases);
    }
}
