//! Write grants bound to one device, and the claim that turns a grant into
//! a descriptor that may write.
//!
//! A [`Grant`] is decided when the plan is made: the config's `destructive`
//! section names the target (each entry resolved to exactly one device),
//! the phrase is right, and the target's contents allow it. It holds the
//! device's identity ([`DeviceId`]: device number or inode, serial, WWN,
//! size, disk sequence number) as it was then. Nothing writes on a grant:
//! [`Grant::claim`] opens the device once (block devices with O_EXCL, so a
//! device mounted or claimed by md or dm is refused), checks on that
//! descriptor that it is still the same device, scans its contents again
//! through it (the first claim of a run), and gives a [`WritePermit`] that
//! owns the descriptor. Every queue that writes reopens that descriptor
//! (`/proc/self/fd/N`), never the path: a loop device rebound, a disk
//! hot-swapped or a by-id link that points elsewhere between the plan and
//! the write is refused, naming what changed.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use crate::disks::file;
use crate::disks::identity::{self, DeviceId, Node, Pin};

use super::Refusal;

/// Permission to write one device, decided when the plan was made and
/// bound to the device's identity then. Only [`super::grant`] makes one
/// (and [`Grant::for_stack`] for a device this run assembled).
#[derive(Clone, Debug)]
pub struct Grant {
    path: String,
    id: DeviceId,
    /// A regular file's descriptor held since the plan: every claim opens
    /// it, never the path, once the path is checked to still name it.
    pin: Option<Pin>,
    /// Check the contents (signatures, data) when claimed: false when
    /// `allow_overwrite_signatures` is set, and for a stack this run built.
    check_contents: bool,
}

/// What a claim checks besides the identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contents {
    /// Scan the contents again through the claimed descriptor (the first
    /// claim of a run).
    Check,
    /// Identity only: an earlier claim of this run checked its contents,
    /// and what changed since is this run's own writing (a later test, the
    /// all-at-once run, the scratch label).
    Checked,
}

impl Grant {
    /// A grant made by [`super::grant`] (checks done there).
    pub(super) fn new(path: &str, id: DeviceId, pin: Option<Pin>, check_contents: bool) -> Grant {
        Grant {
            path: path.to_string(),
            id,
            pin,
            check_contents,
        }
    }

    /// A grant for an array or layer this run has just assembled over disks
    /// that were all granted: bound to the new device's identity now; its
    /// contents are the granted disks' and are not scanned again.
    pub fn for_stack(path: &str) -> Result<Grant, String> {
        let (_, id) = identity::describe_bound(path).map_err(|e| e.to_string())?;
        Ok(Grant::new(path, id, None, false))
    }

    /// Open the device for writing: once, read-only, with O_EXCL for a block
    /// device; check on that descriptor that it is the device the grant was
    /// made for, that the kernel does not hold it read-only and that its
    /// storage is not in use through another node ([`super::inuse`]); with
    /// [`Contents::Check`] (and unless overwriting is allowed) scan its
    /// signatures and sample its data again through it.
    pub fn claim(&self, contents: Contents) -> Result<WritePermit, Refusal> {
        let f = open_checked(&self.path, &self.id, self.pin.as_ref(), true)?;
        super::check_writable(&f, &self.path)?;
        super::inuse::check(&self.path, &f)?;
        if self.check_contents && contents == Contents::Check {
            super::check_blank(&f, &self.path)?;
        }
        Ok(WritePermit {
            path: self.path.clone(),
            file: f,
        })
    }
}

/// A claimed device: the one descriptor (read-only; O_EXCL for a block
/// device) through which it may be written. Queues that write open
/// [`WritePermit::reopen_path`], which is this descriptor's open file, not
/// the path.
#[derive(Debug)]
pub struct WritePermit {
    path: String,
    file: File,
}

impl WritePermit {
    /// The target this permit is for, as the plan names it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The claimed descriptor, owned.
    pub fn into_file(self) -> File {
        self.file
    }

    /// Write bootbench's scratch label to the claimed device (through the
    /// claimed descriptor's open file), after the run's last write there.
    pub fn write_label(&self, label: &super::ScratchLabel) -> std::io::Result<()> {
        let f = file::open(&reopen_path(&self.file), true, false)?;
        super::write_scratch_label(&f, label)
    }

    /// A permit for unit tests of the engine (never compiled into the
    /// binary): `path` claimed without a grant.
    #[cfg(test)]
    #[allow(dead_code)] // used by the engine's unit tests, not by every test build of this module
    pub fn for_tests(path: &str) -> WritePermit {
        let block = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device());
        let file = if block {
            file::open_exclusive(path)
        } else {
            file::open(path, false, false)
        }
        .expect("open the test target");
        WritePermit {
            path: path.to_string(),
            file,
        }
    }
}

/// Open the target at `path` that the plan identified as `id` (and
/// pinned, a regular file, as `pin`), read-only, and check on that
/// descriptor that it is still that target: a file through its pinned
/// descriptor once `path` is checked to still name it; a block device by
/// its path, with O_EXCL when `exclusive` (a claim), then its device
/// number, serial, WWN, size and disk sequence number compared.
pub(super) fn open_checked(path: &str, id: &DeviceId, pin: Option<&Pin>, exclusive: bool) -> Result<File, Refusal> {
    let changed = |what: String| Refusal::Changed {
        path: path.to_string(),
        what,
    };
    let f = match pin {
        Some(pin) => {
            pin.still_at(path).map_err(changed)?;
            file::open(&reopen_path(pin.file()), false, false)
        }
        // Without its pin a file's inode number may be another file's by
        // now: no identity to check against.
        None if matches!(id.node, Node::File { .. }) => {
            return Err(Refusal::Unreadable {
                path: path.to_string(),
                error: "a file target is written only through the descriptor the plan held open".to_string(),
            })
        }
        None => {
            let block = std::fs::metadata(path)
                .map_err(|e| Refusal::Unreadable {
                    path: path.to_string(),
                    error: e.to_string(),
                })?
                .file_type()
                .is_block_device();
            if block && exclusive {
                file::open_exclusive(path)
            } else {
                file::open(path, false, false)
            }
        }
    }
    .map_err(|e| Refusal::Claim {
        path: path.to_string(),
        error: e.to_string(),
    })?;
    let (_, now) = identity::identify(path, &f, Path::new(crate::sysfs::ROOT)).map_err(|e| Refusal::Unreadable {
        path: path.to_string(),
        error: e.to_string(),
    })?;
    let what = id.changes(&now);
    if !what.is_empty() {
        return Err(changed(what.join("; ")));
    }
    Ok(f)
}

/// The path through which a new descriptor of `f`'s open file is opened
/// (with other flags: O_DIRECT, read-write): `/proc/self/fd/N`. The kernel
/// follows it to the very file `f` has open, whatever the path it was
/// opened by names now.
pub fn reopen_path(f: &File) -> String {
    format!("/proc/self/fd/{}", f.as_raw_fd())
}

#[cfg(test)]
mod tests {
    use super::super::{grant, Destructive, TargetRef, CONFIRM_PHRASE};
    use super::*;
    use crate::testutil::TempDir;

    /// A file of `len` zeros at `dir/name`, its path and identity, pinned
    /// as the plan pins it.
    fn blank(dir: &Path, name: &str, len: usize) -> (String, DeviceId, Option<Pin>) {
        let p = dir.join(name);
        std::fs::write(&p, vec![0u8; len]).expect("write");
        let p = p.to_str().unwrap().to_string();
        let (_, id, pin) = identity::describe_pinned(&p).expect("identity");
        assert!(pin.is_some(), "a regular file is pinned");
        (p, id, pin)
    }

    fn destructive(confirm: Option<&str>, named: &[&DeviceId], allow: bool) -> Destructive {
        Destructive {
            confirm: confirm.map(str::to_string),
            targets: named.iter().map(|_| TargetRef::Path("(resolved)".into())).collect(),
            resolved: named.iter().map(|id| Some(id.node)).collect(),
            allow_overwrite_signatures: allow,
        }
    }

    #[test]
    fn grant_refusals_in_order() {
        let t = TempDir::new("grant-refusals");
        let (a, a_id, a_pin) = blank(&t.0, "a", 1 << 20);
        let (_, b_id, _) = blank(&t.0, "b", 1 << 20);
        let ok = Some(CONFIRM_PHRASE);
        assert_eq!(
            grant(None, &a, &a_id, a_pin.as_ref()).unwrap_err(),
            Refusal::NotDestructive
        );
        // Named: only a device an entry resolved to (b is not a).
        let other = destructive(ok, &[&b_id], false);
        assert!(matches!(
            grant(Some(&other), &a, &a_id, a_pin.as_ref()),
            Err(Refusal::NotNamed { .. })
        ));
        // An entry that resolved to nothing names nothing.
        let absent = Destructive {
            resolved: vec![None],
            ..destructive(ok, &[&a_id], false)
        };
        assert!(matches!(
            grant(Some(&absent), &a, &a_id, a_pin.as_ref()),
            Err(Refusal::NotNamed { .. })
        ));
        // Phrase missing or wrong (even by case).
        assert_eq!(
            grant(Some(&destructive(None, &[&a_id], false)), &a, &a_id, a_pin.as_ref()).unwrap_err(),
            Refusal::Phrase { given: None }
        );
        let wrong = destructive(Some("i understand this destroys data"), &[&a_id], false);
        assert!(matches!(
            grant(Some(&wrong), &a, &a_id, a_pin.as_ref()),
            Err(Refusal::Phrase { given: Some(_) })
        ));
        // A signature.
        let mut img = vec![0u8; 1 << 20];
        img[1080..1082].copy_from_slice(&[0x53, 0xEF]);
        std::fs::write(&a, &img).expect("write");
        let d = destructive(ok, &[&a_id], false);
        match grant(Some(&d), &a, &a_id, a_pin.as_ref()) {
            Err(r @ Refusal::Signatures { .. }) => assert!(r.to_string().contains("ext2/3/4"), "{r}"),
            other => panic!("expected a signature refusal, got {other:?}"),
        }
        // Overwriting allowed: granted.
        assert!(grant(Some(&destructive(ok, &[&a_id], true)), &a, &a_id, a_pin.as_ref()).is_ok());
        // Another file in a's place since the plan read it: refused.
        std::fs::remove_file(&a).expect("rm");
        std::fs::write(&a, vec![0u8; 1 << 20]).expect("write");
        match grant(Some(&d), &a, &a_id, a_pin.as_ref()) {
            Err(r @ Refusal::Changed { .. }) => assert!(r.to_string().contains("is not the device"), "{r}"),
            other => panic!("expected a changed-device refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_claim_checks_identity_then_contents_on_its_descriptor() {
        let t = TempDir::new("claim");
        let (a, a_id, a_pin) = blank(&t.0, "a", 1 << 20);
        let d = destructive(Some(CONFIRM_PHRASE), &[&a_id], false);
        let g = grant(Some(&d), &a, &a_id, a_pin.as_ref()).expect("granted");
        let p = g.claim(Contents::Check).expect("claimed");
        assert_eq!(p.path(), a);
        drop(p);
        // A signature written since the grant: refused at the claim, unless
        // the contents are this run's own.
        let mut img = vec![0u8; 1 << 20];
        img[1080..1082].copy_from_slice(&[0x53, 0xEF]);
        std::fs::write(&a, &img).expect("write");
        assert!(matches!(g.claim(Contents::Check), Err(Refusal::Signatures { .. })));
        assert!(g.claim(Contents::Checked).is_ok());
        // Another file at the path: refused whatever the contents, and the
        // newcomer is untouched.
        std::fs::remove_file(&a).expect("rm");
        std::fs::write(&a, vec![9u8; 4096]).expect("write");
        for c in [Contents::Check, Contents::Checked] {
            match g.claim(c) {
                Err(r @ Refusal::Changed { .. }) => {
                    let m = r.to_string();
                    assert!(
                        m.contains("the file was removed since the plan opened it, and another file is at its path"),
                        "{m}"
                    );
                }
                other => panic!("expected a changed-device refusal, got {other:?}"),
            }
        }
        assert_eq!(std::fs::read(&a).expect("read"), vec![9u8; 4096]);
    }

    /// A file target replaced between the grant and the write on a
    /// filesystem that reuses inode numbers and keeps no birth time (ext2
    /// with 128-byte inodes): the new file got the old
    /// one's inode number and passed for it. Held open from the plan (its
    /// pin), the granted file keeps its inode, so the newcomer is told
    /// apart: the claim is refused and the newcomer untouched. Without a
    /// pin a file is not granted at all.
    #[test]
    fn a_file_replaced_on_a_filesystem_that_reuses_inodes_is_refused() {
        let m = match crate::results::sink::fixture::ext2("grant-ext2") {
            Ok(m) => m,
            Err(e) => return crate::results::sink::fixture::skipped(&e),
        };
        use std::os::unix::fs::MetadataExt;
        let ino = |p: &Path| std::fs::metadata(p).expect("stat").ino();
        // The filesystem does what makes the hole: a removed file's inode
        // number goes to the next file made there.
        let probe = m.dir.join("probe");
        std::fs::write(&probe, b"x").expect("write");
        let first = ino(&probe);
        std::fs::remove_file(&probe).expect("rm");
        std::fs::write(m.dir.join("next"), b"y").expect("write");
        assert_eq!(ino(&m.dir.join("next")), first, "ext2 reuses the inode number");
        std::fs::remove_file(m.dir.join("next")).expect("rm");

        let (a, a_id, a_pin) = blank(&m.dir, "a", 1 << 20);
        let d = destructive(Some(CONFIRM_PHRASE), &[&a_id], false);
        let g = grant(Some(&d), &a, &a_id, a_pin.as_ref()).expect("granted");
        std::fs::remove_file(&a).expect("rm");
        std::fs::write(&a, b"precious").expect("write");
        for c in [Contents::Check, Contents::Checked] {
            match g.claim(c) {
                Err(r @ Refusal::Changed { .. }) => assert!(r.to_string().contains("removed"), "{r}"),
                other => panic!("expected a changed-file refusal, got {other:?}"),
            }
        }
        assert_eq!(std::fs::read(&a).expect("read"), b"precious");
        // Unpinned (as the plan once granted files): refused outright, at
        // the grant (it opens the target to check its use even when
        // overwriting is allowed) and at a claim.
        let (_, id) = identity::describe_bound(&a).expect("identity");
        let d = destructive(Some(CONFIRM_PHRASE), &[&id], true);
        match grant(Some(&d), &a, &id, None) {
            Err(r @ Refusal::Unreadable { .. }) => assert!(r.to_string().contains("held open"), "{r}"),
            other => panic!("expected an unpinned file refused, got {other:?}"),
        }
        match Grant::new(&a, id.clone(), None, false).claim(Contents::Check) {
            Err(r @ Refusal::Unreadable { .. }) => assert!(r.to_string().contains("held open"), "{r}"),
            other => panic!("expected an unpinned file refused, got {other:?}"),
        }
        assert_eq!(std::fs::read(&a).expect("read"), b"precious");
    }

    /// The case: a loop device bound to another file between the
    /// plan and the write is refused (its disk sequence number changed,
    /// though its device number is the same), and the other file is
    /// byte-identical.
    #[test]
    fn a_loop_device_rebound_after_the_grant_is_refused() {
        let Some(lo) = crate::testutil::Loop::new("rebound", &vec![0u8; 1 << 20]) else {
            return;
        };
        let (_, id) = identity::describe_bound(&lo.dev).expect("identity");
        let d = destructive(Some(CONFIRM_PHRASE), &[&id], false);
        let g = grant(Some(&d), &lo.dev, &id, None).expect("granted");
        let other: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
        let mut lo = lo;
        let other_file = lo.rebind("other", &other);
        match g.claim(Contents::Check) {
            Err(r @ Refusal::Changed { .. }) => assert!(r.to_string().contains("disk sequence number"), "{r}"),
            other => panic!("expected a changed-device refusal, got {other:?}"),
        }
        assert!(
            std::fs::read(&other_file).expect("read") == other,
            "the other file is untouched"
        );
    }
}
