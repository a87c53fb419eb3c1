//! Writing outputs: the documents `extract` cuts out of a log
//! ([`write_numbered`]) and the pages of `html -o` and `fleet --html`
//! ([`write_replacing`]).
//!
//! An output directory may be shared (`/tmp`, a team's results directory),
//! so nothing here opens a name another user could have put there first.
//! Every output is written under a temporary name in its directory,
//! `.<name>.tmp-<pid>-<16 hex digits>`, created exclusively (O_CREAT |
//! O_EXCL, `OpenOptions::create_new`): a symlink or file planted at that
//! name makes the create fail (it is never followed, opened or removed),
//! and another name is tried. The digits come from std's randomly seeded
//! hasher, so the name cannot be guessed ahead; what keeps a planted name
//! from being written through is the exclusive create, not the guess.
//! The temporary file is written and fsynced, then:
//!
//! - [`write_numbered`] (a document): hard-linked to its name; link(2)
//!   fails with EEXIST whatever is there (a file, a symlink, a directory,
//!   one that appeared after the name was chosen), so nothing is ever
//!   replaced: the next numbered name (`<stem>.2.<ext>`, ...) is tried.
//!   On a filesystem without hard links (FAT, exFAT: EPERM or EOPNOTSUPP)
//!   the name is first claimed by creating it exclusively, empty, and the
//!   temporary file renamed over that claim.
//! - [`write_replacing`] (a page the user named): renamed over its name;
//!   rename(2) replaces what is there, a symlink itself included, and
//!   never writes through one.
//!
//! The temporary name is removed in every case (it is the caller's own
//! file), and the directory is fsynced so the new name lasts.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The longest file name (bytes) Linux filesystems take (NAME_MAX).
pub const NAME_MAX: usize = 255;

/// The most of an output's name a temporary name holds (bytes), so that
/// `.<name>.tmp-<pid>-<16 hex digits>` stays within [`NAME_MAX`].
const TEMP_NAME_PART: usize = 200;

/// How many temporary names are tried before giving up: each is random, so
/// a second is needed only if someone planted the first, by chance.
const TEMP_TRIES: usize = 16;

/// The directory `path` is in (`.` for a bare name).
fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// `s` cut to at most `max` bytes, at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Temporary names for an output named `name`: `.<name>.tmp-<pid>-<16 hex
/// digits>` (the name cut to [`TEMP_NAME_PART`] bytes), the digits new for
/// each.
fn temp_names(name: &str) -> impl Iterator<Item = String> + '_ {
    let pid = std::process::id();
    let part = cut(name, TEMP_NAME_PART);
    // Each RandomState has new keys (seeded from the OS once per thread,
    // then stepped), so each hash of nothing is a new 64-bit number.
    std::iter::repeat_with(move || {
        let r = RandomState::new().hash_one(());
        format!(".{part}.tmp-{pid}-{r:016x}")
    })
}

/// A file written and fsynced under a temporary name; the name is removed
/// when this is dropped, unless it was renamed.
#[derive(Debug)]
struct Temp {
    path: PathBuf,
    renamed: bool,
}

impl Temp {
    /// Create the first free name of `names` in `dir` exclusively.
    fn create(dir: &Path, names: impl Iterator<Item = String>) -> io::Result<(Temp, File)> {
        for name in names.take(TEMP_TRIES) {
            let path = dir.join(name);
            let f = match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            };
            // From here the name is ours: dropping the Temp removes it.
            return Ok((Temp { path, renamed: false }, f));
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{TEMP_TRIES} temporary names in {} were all taken", dir.display()),
        ))
    }

    /// [`Temp::create`], and write `bytes` there, fsynced.
    fn write(dir: &Path, names: impl Iterator<Item = String>, bytes: &[u8]) -> io::Result<Temp> {
        Temp::fill(dir, names, |f| f.write_all(bytes))
    }

    /// [`Temp::create`], `fill` writing the file as it goes, fsynced; if
    /// `fill` fails, the file is removed.
    fn fill(
        dir: &Path,
        names: impl Iterator<Item = String>,
        fill: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<Temp> {
        let (t, mut f) = Temp::create(dir, names)?;
        fill(&mut f)?;
        f.sync_all()?;
        Ok(t)
    }

    /// Give the file the name `path` too, never replacing anything there
    /// (`AlreadyExists` if the name is taken), with `link` (hard_link; a
    /// parameter so tests can be a filesystem without hard links).
    fn link_new(&mut self, path: &Path, link: fn(&Path, &Path) -> io::Result<()>) -> io::Result<()> {
        match link(&self.path, path) {
            Ok(()) => Ok(()),
            Err(e) if no_hard_links(&e) => {
                // Claim the name (exclusively, so nothing there is touched),
                // then put the whole file over the claim in one rename.
                drop(OpenOptions::new().write(true).create_new(true).open(path)?);
                match fs::rename(&self.path, path) {
                    Ok(()) => {
                        self.renamed = true;
                        Ok(())
                    }
                    Err(e) => {
                        let _ = fs::remove_file(path);
                        Err(e)
                    }
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Rename the file to `path`, replacing what is there (a symlink
    /// itself, never its target).
    fn rename_over(mut self, path: &Path) -> io::Result<()> {
        fs::rename(&self.path, path)?;
        self.renamed = true;
        Ok(())
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// True if `e` is a filesystem's way of saying it has no hard links.
fn no_hard_links(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP))
}

/// Make a new name last: fsync the directory. Best effort: the document
/// is complete under its name already, and some filesystems refuse to
/// fsync a directory (EINVAL).
fn sync_dir(dir: &Path) {
    let _ = File::open(dir).and_then(|d| d.sync_all());
}

/// The `k`-th name for a document named `name`: `name` itself for 1, else
/// `<stem>.<k>.<ext>` (`<name>.<k>` without an extension), the stem cut
/// so that the name stays within [`NAME_MAX`] bytes.
pub fn numbered(name: &str, k: u64) -> String {
    if k <= 1 {
        return name.to_owned();
    }
    let (stem, tail) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{k}.{ext}")),
        _ => (name, format!(".{k}")),
    };
    format!("{}{tail}", cut(stem, NAME_MAX.saturating_sub(tail.len())))
}

/// Write `bytes` to `dir/<name>`, or, if that name is taken, to the first
/// free [`numbered`] name (`<stem>.2.<ext>`, ...); never replacing a file
/// (see the module doc). The path written.
pub fn write_numbered(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    write_numbered_with(dir, name, 1, |f| f.write_all(bytes), temp_names(name), hard_link).map(|(n, _)| dir.join(n))
}

/// [`write_numbered`] of a document `fill` writes to the temporary file as
/// it makes it (a frame's, a window at a time), trying the numbered names
/// from the `first`-th on (those before it known to be taken: `extract`
/// wrote them). If `fill` fails, the temporary file is removed and no name
/// is given. The name written and its number.
pub fn write_numbered_from(
    dir: &Path,
    name: &str,
    first: u64,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<(String, u64)> {
    write_numbered_with(dir, name, first, fill, temp_names(name), hard_link)
}

/// link(2).
fn hard_link(from: &Path, to: &Path) -> io::Result<()> {
    fs::hard_link(from, to)
}

fn write_numbered_with(
    dir: &Path,
    name: &str,
    first: u64,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
    temps: impl Iterator<Item = String>,
    link: fn(&Path, &Path) -> io::Result<()>,
) -> io::Result<(String, u64)> {
    let mut temp = Temp::fill(dir, temps, fill)?;
    for k in first.max(1).. {
        let file = numbered(name, k);
        match temp.link_new(&dir.join(&file), link) {
            Ok(()) => {
                drop(temp);
                sync_dir(dir);
                return Ok((file, k));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    unreachable!("a directory holds fewer than 2^64 names")
}

/// Write `bytes` to `path` atomically, replacing the file there if there
/// is one (a page the user named; see the module doc).
pub fn write_replacing(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .map_or_else(|| OsString::from("out"), OsString::from)
        .to_string_lossy()
        .into_owned();
    let dir = dir_of(path);
    Temp::write(dir, temp_names(&name), bytes)?.rename_over(path)?;
    sync_dir(dir);
    Ok(())
}

/// An output too large to hold (an export of a fleet), written as it is
/// made under its temporary name and given its name by
/// [`Replacing::commit`], as [`write_replacing`] gives it; dropped before,
/// the temporary file is removed and the name left as it was.
#[derive(Debug)]
pub struct Replacing {
    temp: Temp,
    file: File,
    path: PathBuf,
}

impl Replacing {
    /// Create the temporary file for `path` (see the module doc).
    pub fn create(path: &Path) -> io::Result<Replacing> {
        let name = path
            .file_name()
            .map_or_else(|| OsString::from("out"), OsString::from)
            .to_string_lossy()
            .into_owned();
        let (temp, file) = Temp::create(dir_of(path), temp_names(&name))?;
        Ok(Replacing {
            temp,
            file,
            path: path.to_path_buf(),
        })
    }

    /// A handle on the temporary file to write through.
    pub fn writer(&self) -> io::Result<File> {
        self.file.try_clone()
    }

    /// Fsync the file, rename it over its name, fsync the directory.
    pub fn commit(self) -> io::Result<()> {
        self.file.sync_all()?;
        self.temp.rename_over(&self.path)?;
        sync_dir(dir_of(&self.path));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh scratch directory for one test of this process.
    fn scratch(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("bootbench-report-output-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).expect("scratch dir");
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// FAT's answer to link(2).
    fn no_links(_: &Path, _: &Path) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::EPERM))
    }

    #[test]
    fn numbered_names() {
        for (name, k, want) in [
            ("m.json", 1, "m.json".to_owned()),
            ("m.json", 2, "m.2.json".to_owned()),
            ("a.b.json", 12, "a.b.12.json".to_owned()),
            ("noext", 3, "noext.3".to_owned()),
            (".json", 2, ".json.2".to_owned()),
            // The stem is cut so the numbered name fits in NAME_MAX bytes.
            (
                &format!("{}.json", "a".repeat(250)),
                2,
                format!("{}.2.json", "a".repeat(248)),
            ),
            (
                &format!("{}.json", "é".repeat(125)),
                10,
                format!("{}.10.json", "é".repeat(123)),
            ),
        ] {
            let got = numbered(name, k);
            assert_eq!(got, want, "{name} {k}");
            assert!(got.len() <= NAME_MAX.max(name.len()), "{got}");
        }
    }

    #[test]
    fn temp_names_are_hidden_new_each_time_and_fit() {
        let long = "x".repeat(NAME_MAX);
        let v: Vec<String> = temp_names(&long).take(3).collect();
        assert!(v.iter().all(|n| n.starts_with(".xxx") && n.len() <= NAME_MAX), "{v:?}");
        assert!(v[0] != v[1] && v[1] != v[2], "{v:?}");
        assert!(v[0].contains(&format!(".tmp-{}-", std::process::id())), "{v:?}");
    }

    /// A symlink and a file planted at the first temporary names are left
    /// alone (not followed, not written, not removed); the next name is used.
    #[test]
    fn a_planted_temporary_name_is_skipped_never_written_through() {
        let dir = scratch("planted");
        let victim = dir.join("victim");
        fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(".t1")).unwrap();
        fs::write(dir.join(".t2"), "someone's").unwrap();
        let temps = [".t1", ".t2", ".t3"].map(String::from).into_iter();
        let p = write_numbered_with(&dir, "doc.json", 1, |f| f.write_all(b"{}"), temps, hard_link)
            .map(|(n, _)| dir.join(n))
            .unwrap();
        assert_eq!(p, dir.join("doc.json"));
        assert_eq!(fs::read(&p).unwrap(), b"{}");
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert_eq!(fs::read_link(dir.join(".t1")).unwrap(), victim);
        assert_eq!(fs::read(dir.join(".t2")).unwrap(), b"someone's");
        assert_eq!(
            names(&dir),
            [".t1", ".t2", "doc.json", "victim"],
            "the temporary .t3 is gone"
        );
        // Every name taken: an error naming the directory, nothing written.
        let temps = [".t1", ".t2"].map(String::from).into_iter();
        let e = write_numbered_with(&dir, "other.json", 1, |f| f.write_all(b"{}"), temps, hard_link)
            .map(|(n, _)| dir.join(n))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert!(e.to_string().contains(&dir.display().to_string()), "{e}");
        assert!(!dir.join("other.json").exists());
        let _ = fs::remove_dir_all(&dir);
    }

    /// Nothing in the way is replaced, a dangling symlink or a directory
    /// included: the next numbered name is taken; with hard links and
    /// without (the claim-then-rename of FAT).
    #[test]
    fn a_name_in_the_way_is_never_replaced() {
        for (case, link) in [
            ("links", hard_link as fn(&Path, &Path) -> io::Result<()>),
            ("fat", no_links),
        ] {
            let dir = scratch(case);
            fs::write(dir.join("m.json"), "first").unwrap();
            std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("m.2.json")).unwrap();
            fs::create_dir(dir.join("m.3.json")).unwrap();
            let p = write_numbered_with(&dir, "m.json", 1, |f| f.write_all(b"new"), temp_names("m.json"), link)
                .map(|(n, _)| dir.join(n))
                .unwrap();
            assert_eq!(p, dir.join("m.4.json"), "{case}");
            assert_eq!(fs::read(&p).unwrap(), b"new", "{case}");
            assert_eq!(fs::read(dir.join("m.json")).unwrap(), b"first", "{case}");
            assert!(
                !dir.join("nowhere").exists(),
                "{case}: the dangling link is not followed"
            );
            assert_eq!(
                names(&dir),
                ["m.2.json", "m.3.json", "m.4.json", "m.json"],
                "{case}: no temporary file left"
            );
            let _ = fs::remove_dir_all(&dir);
        }
    }

    /// `html -o FILE` replaces FILE, and a symlink at FILE is replaced
    /// itself, its target untouched.
    #[test]
    fn replacing_replaces_the_name_never_a_link_s_target() {
        let dir = scratch("replace");
        let page = dir.join("report.html");
        fs::write(&page, "old").unwrap();
        write_replacing(&page, b"new").unwrap();
        assert_eq!(fs::read(&page).unwrap(), b"new");
        let victim = dir.join("victim");
        fs::write(&victim, "precious").unwrap();
        fs::remove_file(&page).unwrap();
        std::os::unix::fs::symlink(&victim, &page).unwrap();
        write_replacing(&page, b"newer").unwrap();
        assert!(fs::symlink_metadata(&page).unwrap().file_type().is_file());
        assert_eq!(fs::read(&page).unwrap(), b"newer");
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert_eq!(names(&dir), ["report.html", "victim"]);
        let _ = fs::remove_dir_all(&dir);
    }
}
