//! Opening LUKS containers that Debian's cryptsetup made (issue 32): the
//! volume key `disks::unlock` derives from a key file is the one
//! `cryptsetup luksDump --dump-volume-key` prints, for LUKS1 and LUKS2,
//! each KDF (PBKDF2 with SHA-1, SHA-256, SHA-512; Argon2i, Argon2id), both
//! AES-XTS key sizes and both sector sizes; a wrong key opens nothing, a
//! keyslot that needs more memory than there is is refused, and the data
//! read through the key is what cryptsetup encrypted. Containers are plain
//! files in /dev/shm: cryptsetup formats, dumps and (offline) encrypts
//! them without device-mapper, which the host kernel may lack.

mod common;

use std::fs::File;
use std::process::Command;

use bootbench_init::disks::bytes::{Bytes, Device};
use bootbench_init::disks::unlock::{unlock, Budget, Decrypted, UnlockError, Unlocked, DEFAULT_UNLOCK_SECONDS};
use common::{shm_path, unique, ShmFile};

/// A file of `size` zero bytes in /dev/shm, removed on drop.
fn zeroed(size: u64) -> ShmFile {
    let f = ShmFile::new(&unique("luks.img"), b"");
    File::options()
        .write(true)
        .open(f.path())
        .unwrap()
        .set_len(size)
        .unwrap();
    f
}

fn cryptsetup(args: &[&str]) -> String {
    let o = Command::new("cryptsetup")
        .args(args)
        .output()
        .expect("cryptsetup (Debian's cryptsetup-bin, .ci/deps installs it)");
    assert!(
        o.status.success(),
        "cryptsetup {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn device(path: &str) -> Device {
    let file = File::open(path).unwrap();
    let size = file.metadata().unwrap().len();
    Device { file, size }
}

/// The volume key cryptsetup finds with `key`, as bytes.
fn dumped_key(img: &str, key: &str) -> Vec<u8> {
    let out = cryptsetup(&["luksDump", "--dump-volume-key", "--batch-mode", "--key-file", key, img]);
    let at = out.find("MK dump:").expect("MK dump in luksDump's output");
    out[at + "MK dump:".len()..]
        .split_whitespace()
        .take_while(|w| w.len() == 2 && w.chars().all(|c| c.is_ascii_hexdigit()))
        .map(|w| u8::from_str_radix(w, 16).unwrap())
        .collect()
}

const PLENTY_KIB: u64 = 1 << 20;

fn open(img: &str, key: &[u8]) -> Result<Unlocked, UnlockError> {
    unlock(&device(img), key, PLENTY_KIB, Budget::seconds(DEFAULT_UNLOCK_SECONDS))
}

#[test]
fn the_volume_key_is_the_one_cryptsetup_dumps() {
    let key = ShmFile::new(&unique("key"), b"correct horse battery staple");
    let cases: [(&str, &[&str], Option<u32>); 6] = [
        (
            "LUKS2, Argon2id",
            &[
                "--type",
                "luks2",
                "--pbkdf",
                "argon2id",
                "--pbkdf-memory",
                "16384",
                "--pbkdf-force-iterations",
                "4",
            ],
            None,
        ),
        (
            "LUKS2, Argon2i, AES-128-XTS, 4096-byte sectors",
            &[
                "--type",
                "luks2",
                "--pbkdf",
                "argon2i",
                "--pbkdf-memory",
                "8192",
                "--pbkdf-force-iterations",
                "4",
                "--key-size",
                "256",
                "--sector-size",
                "4096",
            ],
            Some(4096),
        ),
        (
            "LUKS2, PBKDF2-SHA512",
            &[
                "--type",
                "luks2",
                "--pbkdf",
                "pbkdf2",
                "--hash",
                "sha512",
                "--pbkdf-force-iterations",
                "1000",
            ],
            None,
        ),
        (
            "LUKS2, Argon2id, 2 lanes",
            &[
                "--type",
                "luks2",
                "--pbkdf",
                "argon2id",
                "--pbkdf-memory",
                "8192",
                "--pbkdf-parallel",
                "2",
                "--pbkdf-force-iterations",
                "4",
            ],
            None,
        ),
        (
            "LUKS1, PBKDF2-SHA256",
            &[
                "--type",
                "luks1",
                "--hash",
                "sha256",
                "--pbkdf-force-iterations",
                "1000",
            ],
            Some(512),
        ),
        (
            "LUKS1, PBKDF2-SHA1, AES-128-XTS",
            &[
                "--type",
                "luks1",
                "--hash",
                "sha1",
                "--pbkdf-force-iterations",
                "1000",
                "--key-size",
                "256",
            ],
            Some(512),
        ),
    ];
    for (what, args, sector) in cases {
        let img = zeroed(24 << 20);
        let mut format = vec!["luksFormat", "--batch-mode", "--key-file", key.path()];
        format.extend_from_slice(args);
        format.push(img.path());
        cryptsetup(&format);
        let want = dumped_key(img.path(), key.path());
        assert!(want.len() == 32 || want.len() == 64, "{what}: {want:?}");
        let got = open(img.path(), &std::fs::read(key.path()).unwrap()).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got.key.bytes(), &want[..], "{what}: the volume key");
        assert_eq!(got.keyslot, 0, "{what}");
        assert_eq!(got.cipher, "aes-xts-plain64", "{what}");
        let info = bootbench_init::disks::luks::read(&device(img.path())).unwrap().unwrap();
        // LUKS2 on a file defaults to 4096-byte sectors (cryptsetup 2.4 on).
        assert_eq!(got.sector_size, info.sector_size.unwrap_or(512), "{what}");
        if let Some(s) = sector {
            assert_eq!(got.sector_size, s, "{what}");
        }
        assert_eq!(got.data_offset_bytes, info.data_offset_bytes, "{what}");
        // A wrong key opens no keyslot, whatever its length.
        for wrong in [&b"correct horse battery stapler"[..], b"", b"c"] {
            match open(img.path(), wrong) {
                Err(UnlockError::WrongKey { tried: 1 }) => {}
                other => panic!("{what}: {wrong:?} gave {other:?}"),
            }
        }
    }
}

#[test]
fn a_second_keyslot_opens_with_its_own_key_and_argon2_memory_is_respected() {
    let (k1, k2) = (
        ShmFile::new(&unique("key1"), b"first"),
        ShmFile::new(&unique("key2"), b"second\n"),
    );
    let img = zeroed(24 << 20);
    cryptsetup(&[
        "luksFormat",
        "--batch-mode",
        "--type",
        "luks2",
        "--pbkdf",
        "argon2id",
        "--pbkdf-memory",
        "32768",
        "--pbkdf-force-iterations",
        "4",
        "--key-file",
        k1.path(),
        img.path(),
    ]);
    cryptsetup(&[
        "luksAddKey",
        "--batch-mode",
        "--pbkdf",
        "pbkdf2",
        "--pbkdf-force-iterations",
        "1000",
        "--key-file",
        k1.path(),
        img.path(),
        k2.path(),
    ]);
    let want = dumped_key(img.path(), k2.path());
    // The key file's bytes as they are: the newline is part of the passphrase.
    let second = open(img.path(), b"second\n").unwrap();
    assert_eq!((second.keyslot, second.key.bytes()), (1, &want[..]));
    assert!(matches!(
        open(img.path(), b"second"),
        Err(UnlockError::WrongKey { tried: 2 })
    ));
    // Keyslot 0 needs 32 MiB for Argon2: refused with less available (and
    // keyslot 1, PBKDF2, is not reached: cryptsetup's order, by number).
    match unlock(
        &device(img.path()),
        b"first",
        16 << 10,
        Budget::seconds(DEFAULT_UNLOCK_SECONDS),
    ) {
        Err(e @ UnlockError::Memory { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("keyslot 0 needs 32768 KiB of memory for Argon2 and the machine has 16384 KiB"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(open(img.path(), b"first").unwrap().key.bytes(), &want[..]);
}

/// Data cryptsetup encrypted in place (`reencrypt --encrypt`, offline: in
/// user space) reads back through the derived key, at any offset and
/// length, for 512- and 4096-byte encryption sectors (dm-crypt's IV counts
/// 512-byte sectors either way).
#[test]
fn the_data_reads_back_as_it_was_before_cryptsetup_encrypted_it() {
    let key = ShmFile::new(&unique("key"), b"pattern");
    for sector in ["512", "4096"] {
        let path = shm_path("plain.img");
        // 32 MiB of 16-byte counters: every 16 bytes tell their own offset.
        let plain: Vec<u8> = (0u64..(32 << 20) / 16)
            .flat_map(|i| u128::from(i).to_le_bytes())
            .collect();
        std::fs::write(&path, &plain).unwrap();
        let img = ShmFile(path);
        cryptsetup(&[
            "reencrypt",
            "--encrypt",
            "--batch-mode",
            "--type",
            "luks2",
            "--reduce-device-size",
            "8M",
            "--sector-size",
            sector,
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
            key.path(),
            img.path(),
        ]);
        let dev = device(img.path());
        let open = unlock(&dev, b"pattern", PLENTY_KIB, Budget::seconds(DEFAULT_UNLOCK_SECONDS)).unwrap();
        assert_eq!(open.sector_size.to_string(), sector);
        let data = Decrypted {
            inner: &dev,
            open: &open,
        };
        assert!(data.size() >= 16 << 20, "{}", data.size());
        // The device lost 8 MiB to the header: 24 MiB of the data were kept.
        for (at, len) in [
            (0u64, 1 << 20),
            (4096 * 3 + 16 * 5, 777),
            (9 << 20, 65536),
            ((24 << 20) - 4096, 4096),
        ] {
            let mut buf = vec![0u8; len];
            data.read_at(&mut buf, at).unwrap();
            let s = usize::try_from(at).unwrap();
            assert!(buf == plain[s..s + len], "sector {sector}: {len} B at {at} differ");
        }
        // The raw bytes there are not the plain ones: the read decrypted.
        let mut raw = vec![0u8; 4096];
        dev.read_at(&mut raw, open.data_offset_bytes).unwrap();
        assert_ne!(raw, plain[..4096]);
    }
}
