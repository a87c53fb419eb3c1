//! The USB stick image from the host side: where its EFI system partition
//! is (its GPT, read with bootbench-image's reader), and files in and out of
//! that FAT partition with the `fatfs` crate, in this process, on the image
//! file (no root, no loop mounts, no mtools); and the root directory of any
//! FAT (a stick's partition, for [`crate::flash`]).

use std::fs::File;
use std::io::{self, Cursor, Read, Seek, Write};
use std::path::Path;

use crate::fat::{BootSector, FatType};
use crate::gpt;
use bench_core::boot::stick::{is_result_name, RESULTS_DIR};
use fatfs::{FileAttributes, FileSystem, FsOptions};
use fscommon::StreamSlice;

/// The byte range `[start, end)` of the EFI system partition in the GPT of
/// `disk`: the first ESP entry of the primary table (header and entries
/// CRC-checked).
fn esp_of<D: Read + Seek>(disk: &mut D) -> io::Result<Option<(u64, u64)>> {
    let table = gpt::read(disk, 1)?;
    let esp = gpt::guid(gpt::ESP_TYPE);
    let first = table.partitions().find(|(_, p)| p.type_guid == esp);
    Ok(first.and_then(|(_, p)| {
        let start = p.first_lba.checked_mul(gpt::SECTOR)?;
        let end = p.last_lba.checked_add(1)?.checked_mul(gpt::SECTOR)?;
        (start < end).then_some((start, end))
    }))
}

/// The byte offset of the EFI system partition in a GPT image, given the
/// image's first bytes (protective MBR, header, entries). `None` if there is
/// no valid GPT header or no ESP entry within `head`.
pub fn esp_offset(head: &[u8]) -> Option<u64> {
    esp_of(&mut Cursor::new(head)).ok().flatten().map(|(start, _)| start)
}

/// The ESP's byte range in the opened image file.
fn esp_range(image: &Path, file: &mut File) -> io::Result<(u64, u64)> {
    let bad = |why: String| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {why}", image.display()));
    match esp_of(file) {
        Ok(Some(range)) => Ok(range),
        Ok(None) => Err(bad("no EFI system partition in its GPT".into())),
        Err(e) => Err(bad(format!("no GPT with an EFI system partition: {e}"))),
    }
}

/// The ESP's byte offset in the image file.
pub fn find_esp(image: &Path) -> io::Result<u64> {
    esp_range(image, &mut File::open(image)?).map(|(start, _)| start)
}

/// The ESP's bytes of an image file, as the storage of a [`FileSystem`].
type Esp<'f> = StreamSlice<&'f File>;

/// An error of the FAT on `image`, saying what was being done.
fn fat_error(image: &Path, doing: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {doing}: {e}", image.display()))
}

/// Runs `f` on the FAT file system of the ESP of `image`, opened read-only
/// unless `write`. Afterwards the file system is unmounted (fatfs writes
/// its FSInfo and clears the dirty flag, after a write only) and, with
/// `write`, the image synced, also when `f` failed (a failed write's
/// clean-up is kept); `f`'s error comes first.
fn with_fat<R>(image: &Path, write: bool, f: impl FnOnce(&FileSystem<&mut Esp<'_>>) -> io::Result<R>) -> io::Result<R> {
    let mut file = File::options().read(true).write(write).open(image)?;
    let (start, end) = esp_range(image, &mut file)?;
    let mut esp = StreamSlice::new(&file, start, end)?;
    let fs = FileSystem::new(&mut esp, FsOptions::new()).map_err(|e| fat_error(image, "opening its FAT", e))?;
    let result = f(&fs);
    let closed = fs
        .unmount()
        .and_then(|()| esp.flush())
        .and_then(|()| if write { file.sync_all() } else { Ok(()) })
        .map_err(|e| fat_error(image, "closing its FAT", e));
    result.and_then(|r| closed.map(|()| r))
}

/// The names in directory `dir` of the stick's FAT, sorted, without `.` and
/// `..`; the hidden and system files only if `hidden` (as `mdir` and
/// `mdir -a` list them).
fn names_in(fs: &FileSystem<&mut Esp<'_>>, dir: &str, hidden: bool) -> io::Result<Vec<String>> {
    let path = dir.trim_matches('/');
    let d = if path.is_empty() {
        fs.root_dir()
    } else {
        fs.root_dir().open_dir(path)?
    };
    let mut names = Vec::new();
    for entry in d.iter() {
        let entry = entry?;
        let name = entry.file_name();
        let concealed = entry
            .attributes()
            .intersects(FileAttributes::HIDDEN | FileAttributes::SYSTEM);
        if name != "." && name != ".." && (hidden || !concealed) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// File names in a directory of the stick (`/results`), sorted; empty when
/// the directory is empty. Hidden files (FAT's hidden attribute, which Linux
/// sets on names starting with a dot) and system files are left out.
pub fn list_dir(image: &Path, dir: &str) -> io::Result<Vec<String>> {
    list(image, dir, false)
}

/// [`list_dir`] with the hidden files too (an interrupted write's temp file).
pub fn list_dir_all(image: &Path, dir: &str) -> io::Result<Vec<String>> {
    list(image, dir, true)
}

fn list(image: &Path, dir: &str, hidden: bool) -> io::Result<Vec<String>> {
    with_fat(image, false, |fs| {
        names_in(fs, dir, hidden).map_err(|e| fat_error(image, &format!("listing {dir}"), e))
    })
}

/// The names in the root directory of the FAT that fills `path` (a partition, or a stick
/// formatted without a partition table), read-only, without `.`, `..` and the volume label;
/// and how many result files its `results/` holds (a bootbench stick's, by the stick's contract:
/// [`is_result_name`]).
pub fn fat_root(path: &Path) -> io::Result<(Vec<String>, usize)> {
    let file = File::open(path)?;
    let end = (&file).seek(io::SeekFrom::End(0))?;
    let mut whole = StreamSlice::new(&file, 0, end)?;
    let fs = FileSystem::new(&mut whole, FsOptions::new())?;
    let mut names = Vec::new();
    for entry in fs.root_dir().iter() {
        let entry = entry?;
        let name = entry.file_name();
        if name != "." && name != ".." && !entry.attributes().contains(FileAttributes::VOLUME_ID) {
            names.push(name);
        }
    }
    names.sort();
    let results = match fs.root_dir().open_dir(RESULTS_DIR) {
        Ok(d) => d
            .iter()
            .filter_map(Result::ok)
            .filter(|e| is_result_name(&e.file_name()))
            .count(),
        Err(_) => 0,
    };
    Ok((names, results))
}

/// A file of the stick's `/results` not copied, and why.
pub type Passed = (String, String);

/// Copy every result file of the stick's `/results` into `dest` (created):
/// `(copied, passed over)`, each passed-over name with the reason (not a
/// result's name, such as an interrupted write's temp file; empty; not JSON). Names are taken as
/// PID 1 writes them ([`is_result_name`]): without regard to case, as FAT compares them.
pub fn copy_results_checked(image: &Path, dest: &Path) -> io::Result<(Vec<String>, Vec<Passed>)> {
    std::fs::create_dir_all(dest)?;
    // Each name with its contents, or None for a name that is not a result's.
    let files = with_fat(image, false, |fs| {
        let mut files = Vec::new();
        let dir = format!("/{RESULTS_DIR}");
        for name in names_in(fs, &dir, true).map_err(|e| fat_error(image, &format!("listing {dir}"), e))? {
            let bytes = if is_result_name(&name) {
                let mut bytes = Vec::new();
                fs.root_dir()
                    .open_file(&format!("{RESULTS_DIR}/{name}"))
                    .and_then(|mut f| f.read_to_end(&mut bytes))
                    .map_err(|e| fat_error(image, &format!("reading /{RESULTS_DIR}/{name}"), e))?;
                Some(bytes)
            } else {
                None
            };
            files.push((name, bytes));
        }
        Ok(files)
    })?;
    let mut copied = Vec::new();
    let mut passed = Vec::new();
    for (name, bytes) in files {
        let Some(bytes) = bytes else {
            passed.push((
                name,
                "not a result file name (a temp file of an interrupted write?)".into(),
            ));
            continue;
        };
        let why = if bytes.is_empty() {
            Some("empty")
        } else if serde_json::from_slice::<serde_json::Value>(&bytes).is_err() {
            Some("not JSON (cut short?)")
        } else {
            None
        };
        let local = dest.join(&name);
        match why {
            Some(w) => {
                // A copy of an earlier run by that name is not left to pass for this one.
                match std::fs::remove_file(&local) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
                passed.push((name, w.into()));
            }
            None => {
                std::fs::write(&local, &bytes)?;
                copied.push(name);
            }
        }
    }
    Ok((copied, passed))
}

/// [`copy_results_checked`], with a warning on stderr for each file passed
/// over; returns the names copied.
pub fn copy_results(image: &Path, dest: &Path) -> io::Result<Vec<String>> {
    let (copied, passed) = copy_results_checked(image, dest)?;
    for (name, why) in passed {
        eprintln!("warning: stick /{RESULTS_DIR}/{name} not copied: {why}");
    }
    Ok(copied)
}

/// Damage the FAT of the stick's partition the way a worn-out stick does:
/// every free cluster is marked bad in every copy of the FAT (FAT16 or
/// FAT32, by its cluster count: [`BootSector`]), so files already there
/// still read but nothing new can be written (the kernel's FAT driver fails
/// with ENOSPC). Returns how many clusters were marked.
pub fn mark_free_clusters_bad(image: &Path) -> io::Result<u64> {
    use std::io::{Seek, SeekFrom, Write};
    let off = find_esp(image)?;
    let mut f = File::options().read(true).write(true).open(image)?;
    let mut bpb = [0u8; 512];
    f.seek(SeekFrom::Start(off))?;
    f.read_exact(&mut bpb)?;
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {what}", image.display()));
    let b = BootSector::read(&bpb).map_err(|e| bad(&e.to_string()))?;
    let fat32 = match b.fat_type {
        FatType::Fat12 => return Err(bad("FAT12 is not handled")),
        FatType::Fat16 => false,
        FatType::Fat32 => true,
    };
    let (clusters, width): (u64, u64) = (b.clusters, if fat32 { 4 } else { 2 });
    let fat_bytes = usize::try_from(b.fat_bytes()).map_err(|_| bad("FAT size"))?;
    let mut marked = 0;
    for copy in 0..b.fats {
        let start = off + b.fat_start(copy);
        let mut table = vec![0u8; fat_bytes];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut table)?;
        for c in 2..clusters + 2 {
            let at = usize::try_from(c * width).map_err(|_| bad("FAT size"))?;
            let Some(entry) = table.get_mut(at..at + usize::try_from(width).unwrap_or(4)) else {
                break;
            };
            let free = if fat32 {
                u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]) & 0x0FFF_FFFF == 0
            } else {
                entry == [0, 0]
            };
            if free {
                if fat32 {
                    entry.copy_from_slice(&0x0FFF_FFF7u32.to_le_bytes());
                } else {
                    entry.copy_from_slice(&0xFFF7u16.to_le_bytes());
                }
                if copy == 0 {
                    marked += 1;
                }
            }
        }
        f.seek(SeekFrom::Start(start))?;
        f.write_all(&table)?;
    }
    if fat32 {
        // FSInfo's free-cluster count: none, and no hint where to look.
        let info = off + b.fsinfo_sector * b.bytes_per_sector;
        f.seek(SeekFrom::Start(info + 0x1E8))?;
        f.write_all(&[0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF])?;
    }
    f.sync_all()?;
    Ok(marked)
}

/// Put a host file on the stick at `stick_path` (e.g. `/bootbench.json`),
/// replacing it. When the write fails (the FAT is full, say), what was
/// written of the file is removed again.
pub fn put_file(image: &Path, local: &Path, stick_path: &str) -> io::Result<()> {
    let bytes = std::fs::read(local)?;
    let path = stick_path.trim_start_matches('/');
    with_fat(image, true, |fs| {
        let root = fs.root_dir();
        let written = root.create_file(path).and_then(|mut f| {
            f.truncate()?;
            f.write_all(&bytes)?;
            f.flush()
        });
        if written.is_err() {
            let _ = root.remove(path);
        }
        written.map_err(|e| fat_error(image, &format!("writing {stick_path}"), e))
    })
}

/// Copy the stick's file at `stick_path` (e.g. `/bootbench.json`) to `local`.
pub fn get_file(image: &Path, stick_path: &str, local: &Path) -> io::Result<()> {
    std::fs::write(local, read_file(image, stick_path)?)
}

/// The bytes of the stick's file at `stick_path` (e.g. `/EFI/BOOT/grub.cfg`),
/// the image opened read-only.
pub fn read_file(image: &Path, stick_path: &str) -> io::Result<Vec<u8>> {
    let path = stick_path.trim_start_matches('/');
    with_fat(image, false, |fs| {
        let mut bytes = Vec::new();
        fs.root_dir()
            .open_file(path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(|e| fat_error(image, &format!("reading {stick_path}"), e))?;
        Ok(bytes)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usb;

    /// A disk of `sectors` with an entry of `type_guid` starting at
    /// `first_lba` as entry `slot` (the slots before it unused), written by
    /// bootbench-image's GPT writer.
    fn gpt_disk(type_guid: [u8; 16], first_lba: u64, slot: usize, sectors: u64) -> Vec<u8> {
        let unused = gpt::Partition {
            type_guid: [0; 16],
            unique_guid: [0; 16],
            first_lba: 0,
            last_lba: 0,
            attributes: 0,
            name: String::new(),
        };
        let mut parts = vec![unused; slot];
        parts.push(gpt::Partition {
            type_guid,
            unique_guid: gpt::guid("01234567-89AB-CDEF-0123-456789ABCDEF"),
            first_lba,
            last_lba: sectors - 34,
            attributes: 0,
            name: "EFI system".into(),
        });
        let mut disk = vec![0u8; usize::try_from(sectors * 512).unwrap()];
        gpt::write(&mut disk, &[7; 16], &parts, None);
        disk
    }

    /// The first 34 sectors of [`gpt_disk`]: MBR, header, entries.
    fn gpt_head(type_guid: [u8; 16], first_lba: u64, slot: usize) -> Vec<u8> {
        gpt_disk(type_guid, first_lba, slot, 4096)[..34 * 512].to_vec()
    }

    fn esp() -> [u8; 16] {
        gpt::guid(gpt::ESP_TYPE)
    }

    #[test]
    fn finds_the_esp() {
        assert_eq!(esp_offset(&gpt_head(esp(), 2048, 0)), Some(2048 * 512));
        assert_eq!(esp_offset(&gpt_head(esp(), 34, 3)), Some(34 * 512));
    }

    #[test]
    fn no_esp_no_offset() {
        let mut other = esp();
        other[0] ^= 1;
        assert_eq!(esp_offset(&gpt_head(other, 2048, 0)), None);
        let mut not_gpt = gpt_head(esp(), 2048, 0);
        not_gpt[512] = b'X';
        assert_eq!(esp_offset(&not_gpt), None);
        let mut bad_crc = gpt_head(esp(), 2048, 0);
        bad_crc[1024 + 32] ^= 1;
        assert_eq!(esp_offset(&bad_crc), None, "the entries' CRC is checked");
        assert_eq!(esp_offset(&[0u8; 100]), None);
        let truncated = gpt_head(esp(), 2048, 0)[..1024].to_vec();
        assert_eq!(esp_offset(&truncated), None);
    }

    /// A 32 MiB stick image as bootbench-image builds it: GPT, an ESP at
    /// 1 MiB whose FAT (FAT16 at this size) has an empty `/results`.
    fn fat_stick(path: &Path) {
        stick_of(path, 32 << 20);
    }

    /// [`fat_stick`] of `size` bytes (FAT32 from 64 MiB).
    fn stick_of(path: &Path, size: u64) {
        let inputs = usb::Inputs {
            loader: usb::Loader::SystemdBoot(b"MZ fake systemd-boot"),
            vmlinuz: b"fake kernel",
            initrd: b"fake initrd",
            config: b"{}",
            append: "",
            size,
        };
        let disk = usb::build(&inputs, &usb::Bios::Off).unwrap();
        usb::write_file(&disk, path, &usb::Bios::Off).unwrap();
    }

    #[test]
    fn files_in_and_out_of_the_esp() {
        let dir = std::env::temp_dir().join(format!("bbq-stick-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let img = dir.join("stick.img");
        fat_stick(&img);
        assert_eq!(find_esp(&img).unwrap(), 1 << 20);
        assert_eq!(list_dir(&img, "/results").unwrap(), Vec::<String>::new());
        let src = dir.join("machine-serial-1.json");
        std::fs::write(&src, b"{\"n\":1}").unwrap();
        put_file(&img, &src, "/results/machine-serial-1.json").unwrap();
        std::fs::write(&src, b"{\"n\":2}").unwrap();
        put_file(&img, &src, "/results/machine-serial-2.json").unwrap();
        let out = dir.join("out");
        assert_eq!(
            copy_results(&img, &out).unwrap(),
            ["machine-serial-1.json", "machine-serial-2.json"]
        );
        assert_eq!(std::fs::read(out.join("machine-serial-1.json")).unwrap(), b"{\"n\":1}");
        assert_eq!(std::fs::read(out.join("machine-serial-2.json")).unwrap(), b"{\"n\":2}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reading_changes_nothing_and_a_put_file_replaces_on_fat16_and_fat32() {
        let dir = std::env::temp_dir().join(format!("bbq-stick-replace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for size in [32u64 << 20, 64 << 20] {
            let img = dir.join("stick.img");
            stick_of(&img, size);
            let root = list_dir(&img, "/").unwrap();
            assert_eq!(
                root,
                ["EFI", "bootbench.json", "initrd.img", "loader", "results", "vmlinuz"],
                "{size}: the root, without the volume label"
            );
            let src = dir.join("src");
            std::fs::write(&src, vec![b' '; 5000]).unwrap();
            put_file(&img, &src, "/bootbench.json").unwrap();
            std::fs::write(&src, b"{\"profile\": \"cdm\"}").unwrap();
            put_file(&img, &src, "/bootbench.json").unwrap();
            put_file(&img, &src, "/results/r.json").unwrap();
            let before = std::fs::read(&img).unwrap();
            assert_eq!(list_dir(&img, "/").unwrap(), root, "{size}: replaced, not added");
            let out = dir.join("out");
            assert_eq!(copy_results(&img, &out).unwrap(), ["r.json"]);
            assert_eq!(std::fs::read(out.join("r.json")).unwrap(), b"{\"profile\": \"cdm\"}");
            assert!(
                std::fs::read(&img).unwrap() == before,
                "{size}: reading wrote to the image"
            );
            let e = list_dir(&img, "/nowhere").unwrap_err();
            assert!(e.to_string().contains("listing /nowhere"), "{e}");
            let e = put_file(&img, &src, "/nowhere/r.json").unwrap_err();
            assert!(e.to_string().contains("writing /nowhere/r.json"), "{e}");
        }
        let junk = dir.join("junk.img");
        std::fs::write(&junk, vec![0u8; 1 << 20]).unwrap();
        let e = list_dir(&junk, "/results").unwrap_err();
        assert!(e.to_string().contains("no GPT"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn result_names() {
        for (name, want) in [
            ("unknown-1.json", true),
            ("SN-12.json", true),
            (".unknown-2.json.tmp-1", false),
            (".hidden.json", false),
            (".json", false),
            ("notes.txt", false),
        ] {
            assert_eq!(is_result_name(name), want, "{name}");
        }
    }

    /// Both sides of the stick's contract agree on a real FAT's `/results`: the files PID 1
    /// counts as its results when it names the next one (in any case, as FAT compares names)
    /// are the files copied back, that next name is copied once written, and a temp file is not.
    #[test]
    fn the_results_pid_1_counts_are_the_results_copied() {
        use bench_core::boot::stick::{next_result_name, result_number, temp_name};
        let dir = std::env::temp_dir().join(format!("bbq-stick-agree-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let img = dir.join("stick.img");
        fat_stick(&img);
        let src = dir.join("src");
        std::fs::write(&src, b"{\"n\":1}").unwrap();
        let tmp = temp_name("SN1-5.json", 7);
        for name in ["SN1-1.json", "sn1-3.JSON", "Sn1-2.Json", tmp.as_str(), "notes.txt"] {
            put_file(&img, &src, &format!("/results/{name}")).unwrap();
        }
        let listing = list_dir_all(&img, "/results").unwrap();
        let counted: Vec<&str> = listing
            .iter()
            .map(String::as_str)
            .filter(|n| result_number(n, "SN1").is_some())
            .collect();
        assert_eq!(counted, ["SN1-1.json", "Sn1-2.Json", "sn1-3.JSON"]);
        let (copied, _) = copy_results_checked(&img, &dir.join("out")).unwrap();
        assert_eq!(copied, counted, "what PID 1 counts is what is copied back");
        let next = next_result_name(listing.iter().map(String::as_str), "SN1");
        assert_eq!(next, "SN1-4.json");
        put_file(&img, &src, &format!("/results/{next}")).unwrap();
        let (copied, passed) = copy_results_checked(&img, &dir.join("out")).unwrap();
        assert!(copied.contains(&next), "{copied:?}");
        let passed: Vec<&str> = passed.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(passed, [tmp.as_str(), "notes.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn copy_passes_over_temp_empty_and_cut_short_files() {
        let dir = std::env::temp_dir().join(format!("bbq-stick-skip-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let img = dir.join("stick.img");
        fat_stick(&img);
        for (name, body) in [
            ("m-1.json", &b"{\"n\":1}"[..]),
            ("m-2.json", b""),
            ("m-3.json", b"{\"n\":"),
            (".m-4.json.tmp-1", b"{\"n\":4}"),
        ] {
            let src = dir.join("src");
            std::fs::write(&src, body).unwrap();
            put_file(&img, &src, &format!("/results/{name}")).unwrap();
        }
        let out = dir.join("out");
        let (copied, passed) = copy_results_checked(&img, &out).unwrap();
        assert_eq!(copied, ["m-1.json"]);
        let passed: Vec<&str> = passed.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(passed, [".m-4.json.tmp-1", "m-2.json", "m-3.json"]);
        let mut local: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        local.sort();
        assert_eq!(local, ["m-1.json"], "nothing else lands in the copy");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_fat_with_every_free_cluster_bad_reads_but_takes_no_new_file() {
        let dir = std::env::temp_dir().join(format!("bbq-stick-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let img = dir.join("stick.img");
        fat_stick(&img);
        let src = dir.join("src");
        std::fs::write(&src, b"{\"earlier\":1}").unwrap();
        put_file(&img, &src, "/results/m-1.json").unwrap();
        let marked = mark_free_clusters_bad(&img).unwrap();
        assert!(marked > 1000, "{marked}");
        std::fs::write(&src, vec![b'x'; 64 << 10]).unwrap();
        let e = put_file(&img, &src, "/results/m-2.json").unwrap_err();
        assert!(e.to_string().contains("writing /results/m-2.json"), "{e}");
        assert_eq!(
            list_dir_all(&img, "/results").unwrap(),
            ["m-1.json"],
            "the failed write left nothing behind"
        );
        assert_eq!(copy_results(&img, &dir.join("out")).unwrap(), ["m-1.json"]);
        assert_eq!(std::fs::read(dir.join("out/m-1.json")).unwrap(), b"{\"earlier\":1}");
        // Not a FAT: refused.
        let junk = dir.join("junk.img");
        std::fs::write(&junk, vec![0u8; 1 << 20]).unwrap();
        assert!(mark_free_clusters_bad(&junk).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
