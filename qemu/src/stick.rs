//! The USB stick image from the host side: where its EFI system partition
//! starts (GPT, parsed here), and files in and out of that FAT partition with
//! mtools (`mcopy -i IMAGE@@OFFSET`), so no root and no loop mounts.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::process::Command;

/// Sector size the image builder uses.
const SECTOR: u64 = 512;
/// EFI system partition type GUID C12A7328-F81F-11D2-BA4B-00A0C93EC93B, as stored on disk.
const ESP_TYPE: [u8; 16] = [
    0x28, 0x73, 0x2A, 0xC1, 0x1F, 0xF8, 0xD2, 0x11, 0xBA, 0x4B, 0x00, 0xA0, 0xC9, 0x3E, 0xC9, 0x3B,
];

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The byte offset of the EFI system partition in a GPT image, given the
/// image's first bytes (protective MBR, header, entries). `None` if there is
/// no GPT header or no ESP entry within `head`.
pub fn esp_offset(head: &[u8]) -> Option<u64> {
    let hdr = head.get(512..512 + 92)?;
    if &hdr[..8] != b"EFI PART" {
        return None;
    }
    let entries_lba = le_u64(hdr, 72)?;
    let count = le_u32(hdr, 80)?;
    let entry_size = usize::try_from(le_u32(hdr, 84)?).ok()?;
    if entry_size < 128 {
        return None;
    }
    let base = usize::try_from(entries_lba.checked_mul(SECTOR)?).ok()?;
    (0..usize::try_from(count).ok()?).find_map(|i| {
        let e = head.get(base + i * entry_size..base + (i + 1) * entry_size)?;
        if e[..16] == ESP_TYPE {
            le_u64(e, 32)?.checked_mul(SECTOR)
        } else {
            None
        }
    })
}

/// The ESP's byte offset in the image file.
pub fn find_esp(image: &Path) -> io::Result<u64> {
    let mut head = vec![0u8; 34 * 512];
    let mut f = File::open(image)?;
    let mut filled = 0;
    while filled < head.len() {
        match f.read(&mut head[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    head.truncate(filled);
    esp_offset(&head).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: no GPT with an EFI system partition", image.display()),
        )
    })
}

/// The `-i` argument of mtools for the ESP of `image`.
pub fn mtools_image(image: &Path, offset: u64) -> String {
    format!("{}@@{offset}", image.display())
}

fn mtools(program: &str, args: &[String]) -> io::Result<String> {
    let out = Command::new(program)
        .args(args)
        .env("MTOOLS_SKIP_CHECK", "1")
        .output()?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(io::Error::other(format!(
            "{program} {}: {}: {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// File names in a directory of the stick (`/results`), sorted; empty when
/// the directory is empty.
pub fn list_dir(image: &Path, dir: &str) -> io::Result<Vec<String>> {
    let off = find_esp(image)?;
    let listing = mtools(
        "mdir",
        &["-b".into(), "-i".into(), mtools_image(image, off), format!("::{dir}")],
    )?;
    let mut names: Vec<String> = listing
        .lines()
        .filter_map(|l| l.trim().rsplit('/').next().map(str::to_owned))
        .filter(|n| !n.is_empty() && n != "." && n != "..")
        .collect();
    names.sort();
    Ok(names)
}

/// Copy every file of the stick's `/results` into `dest` (created); returns
/// the names copied.
pub fn copy_results(image: &Path, dest: &Path) -> io::Result<Vec<String>> {
    std::fs::create_dir_all(dest)?;
    let off = find_esp(image)?;
    let names = list_dir(image, "/results")?;
    for name in &names {
        mtools(
            "mcopy",
            &[
                "-n".into(),
                "-o".into(),
                "-i".into(),
                mtools_image(image, off),
                format!("::/results/{name}"),
                dest.join(name).display().to_string(),
            ],
        )?;
    }
    Ok(names)
}

/// Put a host file on the stick at `stick_path` (e.g. `/bootbench.json`), replacing it.
pub fn put_file(image: &Path, local: &Path, stick_path: &str) -> io::Result<()> {
    let off = find_esp(image)?;
    mtools(
        "mcopy",
        &[
            "-o".into(),
            "-i".into(),
            mtools_image(image, off),
            local.display().to_string(),
            format!("::{stick_path}"),
        ],
    )
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPT head with one entry of `type_guid` starting at `first_lba`, as entry `slot`.
    fn gpt_head(type_guid: [u8; 16], first_lba: u64, slot: usize) -> Vec<u8> {
        let mut b = vec![0u8; 34 * 512];
        b[512..520].copy_from_slice(b"EFI PART");
        b[512 + 72..512 + 80].copy_from_slice(&2u64.to_le_bytes());
        b[512 + 80..512 + 84].copy_from_slice(&128u32.to_le_bytes());
        b[512 + 84..512 + 88].copy_from_slice(&128u32.to_le_bytes());
        let e = 1024 + slot * 128;
        b[e..e + 16].copy_from_slice(&type_guid);
        b[e + 32..e + 40].copy_from_slice(&first_lba.to_le_bytes());
        b
    }

    #[test]
    fn finds_the_esp() {
        assert_eq!(esp_offset(&gpt_head(ESP_TYPE, 2048, 0)), Some(2048 * 512));
        assert_eq!(esp_offset(&gpt_head(ESP_TYPE, 34, 3)), Some(34 * 512));
    }

    #[test]
    fn no_esp_no_offset() {
        let mut other = ESP_TYPE;
        other[0] ^= 1;
        assert_eq!(esp_offset(&gpt_head(other, 2048, 0)), None);
        let mut not_gpt = gpt_head(ESP_TYPE, 2048, 0);
        not_gpt[512] = b'X';
        assert_eq!(esp_offset(&not_gpt), None);
        assert_eq!(esp_offset(&[0u8; 100]), None);
        let truncated = gpt_head(ESP_TYPE, 2048, 0)[..1024].to_vec();
        assert_eq!(esp_offset(&truncated), None);
    }

    /// A 32 MiB GPT image whose ESP (at 1 MiB) is FAT made by mkfs.vfat (dosfstools).
    fn fat_stick(path: &Path) {
        let head = gpt_head(ESP_TYPE, 2048, 0);
        std::fs::write(path, &head).unwrap();
        File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_len(32 << 20)
            .unwrap();
        let blocks = ((32u64 << 20) / 512 - 2048 - 34) / 2;
        let st = Command::new("mkfs.vfat")
            .args(["--offset", "2048", "-n", "BOOTBENCH"])
            .arg(path)
            .arg(blocks.to_string())
            .output()
            .expect("mkfs.vfat (dosfstools) is installed");
        assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
        mtools("mmd", &["-i".into(), mtools_image(path, 1 << 20), "::/results".into()]).unwrap();
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
    fn mtools_image_argument() {
        assert_eq!(
            mtools_image(Path::new("/o/bootbench.img"), 1_048_576),
            "/o/bootbench.img@@1048576"
        );
    }
}
