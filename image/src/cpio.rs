//! A reproducible cpio "newc" (SVR4, no CRC) archive writer, as the kernel's initramfs unpacker reads.
//!
//! Reproducible as u-root's `MakeReproducible` (`pkg/cpio/utils.go`): entries sorted by path (so a
//! directory comes before its contents), mtime 0, uid/gid 0, inode numbers assigned 1, 2, ... in
//! archive order, no device numbers. Parent directories are added implicitly (mode 0755).

use std::collections::BTreeMap;

/// One archive member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A directory with these permission bits.
    Dir { perm: u32 },
    /// A regular file.
    File { perm: u32, data: Vec<u8> },
    /// A symbolic link to `target`.
    Symlink { target: String },
}

/// An archive being assembled: paths without a leading `/` (`init`, `lib/modules/...`).
#[derive(Debug, Clone, Default)]
pub struct Archive {
    nodes: BTreeMap<String, Node>,
}

const S_IFDIR: u32 = 0o040_000;
const S_IFREG: u32 = 0o100_000;
const S_IFLNK: u32 = 0o120_000;

impl Archive {
    /// An empty archive.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) `path`, creating its parent directories. Leading `/` is ignored.
    pub fn insert(&mut self, path: &str, node: Node) {
        let path = path.trim_matches('/');
        let mut parent = path;
        while let Some((p, _)) = parent.rsplit_once('/') {
            self.nodes.entry(p.to_owned()).or_insert(Node::Dir { perm: 0o755 });
            parent = p;
        }
        self.nodes.insert(path.to_owned(), node);
    }

    /// A directory (0755).
    pub fn dir(&mut self, path: &str) {
        self.insert(path, Node::Dir { perm: 0o755 });
    }

    /// A regular file.
    pub fn file(&mut self, path: &str, perm: u32, data: Vec<u8>) {
        self.insert(path, Node::File { perm, data });
    }

    /// A symlink.
    pub fn symlink(&mut self, path: &str, target: &str) {
        self.insert(
            path,
            Node::Symlink {
                target: target.to_owned(),
            },
        );
    }

    /// The members, sorted by path.
    pub fn nodes(&self) -> &BTreeMap<String, Node> {
        &self.nodes
    }

    /// The newc byte stream, ending with the `TRAILER!!!` entry.
    pub fn to_newc(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut ino = 0u32;
        for (path, node) in &self.nodes {
            ino += 1;
            let (mode, nlink, data): (u32, u32, &[u8]) = match node {
                Node::Dir { perm } => (S_IFDIR | (perm & 0o7777), 2, &[]),
                Node::File { perm, data } => (S_IFREG | (perm & 0o7777), 1, data),
                Node::Symlink { target } => (S_IFLNK | 0o777, 1, target.as_bytes()),
            };
            write_entry(&mut out, ino, mode, nlink, path, data);
        }
        write_entry(&mut out, 0, 0, 1, "TRAILER!!!", &[]);
        out
    }
}

fn pad4(out: &mut Vec<u8>) {
    while out.len() % 4 != 0 {
        out.push(0);
    }
}

fn write_entry(out: &mut Vec<u8>, ino: u32, mode: u32, nlink: u32, name: &str, data: &[u8]) {
    let size = u32::try_from(data.len()).expect("a cpio newc member is below 4 GiB");
    let namesize = u32::try_from(name.len() + 1).expect("a cpio path is below 4 GiB");
    // magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor, rdevminor,
    // namesize, check
    let fields = [ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, namesize, 0];
    out.extend_from_slice(b"070701");
    for f in fields {
        out.extend_from_slice(format!("{f:08x}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    pad4(out);
    out.extend_from_slice(data);
    pad4(out);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One parsed newc entry: (ino, mode, uid, gid, nlink, mtime, name, data).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) struct Entry {
        pub ino: u32,
        pub mode: u32,
        pub uid: u32,
        pub gid: u32,
        pub nlink: u32,
        pub mtime: u32,
        pub name: String,
        pub data: Vec<u8>,
    }

    /// A small independent newc reader: every entry up to and including the trailer.
    pub(crate) fn read_newc(mut b: &[u8]) -> Vec<Entry> {
        let total = b.len();
        let mut out = Vec::new();
        loop {
            let at = total - b.len();
            assert_eq!(at % 4, 0, "entry at {at} not 4-aligned");
            assert_eq!(&b[..6], b"070701", "bad magic at {at}");
            let field =
                |i: usize| u32::from_str_radix(std::str::from_utf8(&b[6 + 8 * i..14 + 8 * i]).unwrap(), 16).unwrap();
            let (ino, mode, uid, gid, nlink, mtime, size, namesize) = (
                field(0),
                field(1),
                field(2),
                field(3),
                field(4),
                field(5),
                field(6),
                field(11),
            );
            let name_end = 110 + namesize as usize;
            assert_eq!(b[name_end - 1], 0, "name not NUL-terminated");
            let name = String::from_utf8(b[110..name_end - 1].to_vec()).unwrap();
            let data_start = name_end.div_ceil(4) * 4;
            let data_end = data_start + size as usize;
            let data = b[data_start..data_end].to_vec();
            b = &b[data_end.div_ceil(4) * 4..];
            let trailer = name == "TRAILER!!!";
            out.push(Entry {
                ino,
                mode,
                uid,
                gid,
                nlink,
                mtime,
                name,
                data,
            });
            if trailer {
                assert!(b.iter().all(|&x| x == 0), "bytes after the trailer");
                return out;
            }
        }
    }

    #[test]
    fn round_trip_and_order() {
        let mut a = Archive::new();
        a.file("/lib/modules/k/kernel/x.ko", 0o644, b"xko".to_vec());
        a.file("init", 0o755, b"\x7fELF....".to_vec());
        a.symlink("sbin/modprobe", "/init");
        a.dir("dev");
        a.file("etc/bootbench.json", 0o644, b"{\"profile\": \"quick\"}\n".to_vec());
        let entries = read_newc(&a.to_newc());
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "dev",
                "etc",
                "etc/bootbench.json",
                "init",
                "lib",
                "lib/modules",
                "lib/modules/k",
                "lib/modules/k/kernel",
                "lib/modules/k/kernel/x.ko",
                "sbin",
                "sbin/modprobe",
                "TRAILER!!!"
            ]
        );
        for (i, e) in entries[..entries.len() - 1].iter().enumerate() {
            assert_eq!(e.ino as usize, i + 1);
            assert_eq!((e.uid, e.gid, e.mtime), (0, 0, 0));
        }
        let by = |n: &str| entries.iter().find(|e| e.name == n).unwrap().clone();
        assert_eq!(by("init").mode, 0o100_755);
        assert_eq!(by("init").data, b"\x7fELF....");
        assert_eq!(by("sbin/modprobe").mode, 0o120_777);
        assert_eq!(by("sbin/modprobe").data, b"/init");
        assert_eq!(by("lib/modules").mode, 0o040_755);
        assert_eq!(by("lib/modules").nlink, 2);
        assert_eq!(by("lib/modules/k/kernel/x.ko").data, b"xko");
        // Directories before their contents.
        for (i, e) in entries.iter().enumerate() {
            if let Some((parent, _)) = e.name.rsplit_once('/') {
                assert!(
                    entries[..i].iter().any(|p| p.name == parent),
                    "{} before its parent",
                    e.name
                );
            }
        }
    }

    #[test]
    fn insertion_order_does_not_matter() {
        let files = [("b/y", b"1".to_vec()), ("a", b"22".to_vec()), ("b/x", b"333".to_vec())];
        let mut a = Archive::new();
        let mut b = Archive::new();
        for (p, d) in &files {
            a.file(p, 0o644, d.clone());
        }
        for (p, d) in files.iter().rev() {
            b.file(p, 0o644, d.clone());
        }
        assert_eq!(a.to_newc(), b.to_newc());
    }
}
