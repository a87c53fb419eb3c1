//! The Authenticode ranges over a PE32+ image built byte by byte; the
//! digests of Debian's signed shim, GRUB and kernel against pesign's are in
//! `report/tests/authenticode.rs`.

use super::*;
use ring::digest::SHA256;

/// A PE32+ image: headers of 0x200 bytes, two sections listed out of file
/// order (.b at 0x400, .a at 0x200, 0x200 bytes each), 0x10 bytes of data
/// after them, and a certificate table of 0x20 bytes at the end.
fn image() -> Vec<u8> {
    let mut b = vec![0u8; 0x200 + 0x400 + 0x10 + 0x20];
    b[..2].copy_from_slice(b"MZ");
    let pe = 0x80usize;
    b[0x3C..0x40].copy_from_slice(&0x80u32.to_le_bytes());
    b[pe..pe + 4].copy_from_slice(b"PE\0\0");
    let coff = pe + 4;
    b[coff + 2..coff + 4].copy_from_slice(&2u16.to_le_bytes()); // sections
    let opt_size = 112 + 16 * 8;
    b[coff + 16..coff + 18].copy_from_slice(&u16::try_from(opt_size).unwrap().to_le_bytes());
    let opt = coff + 20;
    b[opt..opt + 2].copy_from_slice(&0x20Bu16.to_le_bytes());
    b[opt + 60..opt + 64].copy_from_slice(&0x200u32.to_le_bytes()); // SizeOfHeaders
    b[opt + 64..opt + 68].copy_from_slice(&0xdead_beefu32.to_le_bytes()); // CheckSum
    b[opt + 108..opt + 112].copy_from_slice(&16u32.to_le_bytes()); // NumberOfRvaAndSizes
    let cert = opt + 112 + 32;
    let cert_at = 0x200u32 + 0x400 + 0x10;
    b[cert..cert + 4].copy_from_slice(&cert_at.to_le_bytes());
    b[cert + 4..cert + 8].copy_from_slice(&0x20u32.to_le_bytes());
    let table = opt + opt_size;
    for (i, at) in [0x400u32, 0x200].into_iter().enumerate() {
        let s = table + i * 40;
        b[s + 16..s + 20].copy_from_slice(&0x200u32.to_le_bytes());
        b[s + 20..s + 24].copy_from_slice(&at.to_le_bytes());
    }
    for (i, x) in b.iter_mut().enumerate().skip(0x200) {
        *x = u8::try_from(i % 251).unwrap();
    }
    b
}

#[test]
fn the_ranges_skip_the_checksum_and_the_certificates() {
    let b = image();
    let (opt, cert) = (0x80 + 24, 0x80 + 24 + 112 + 32);
    assert_eq!(
        hashed_ranges(&b).unwrap(),
        [
            0..opt + 64,
            opt + 68..cert,
            cert + 8..0x200,
            0x200..0x400,
            0x400..0x600,
            0x600..0x610
        ]
    );
    // The checksum, the certificate entry and the certificates change nothing;
    // a byte of a section or of the data after them changes the digest.
    let d = authenticode(&b, &SHA256).unwrap();
    for at in [opt + 64, cert + 2, 0x610, b.len() - 1] {
        let mut c = b.clone();
        c[at] ^= 0xff;
        if at == cert + 2 {
            continue; // moves the certificate table: refused below
        }
        assert_eq!(authenticode(&c, &SHA256).unwrap(), d, "byte {at:#x} is not hashed");
    }
    for at in [0x10, 0x1ff, 0x200, 0x5ff, 0x60f] {
        let mut c = b.clone();
        c[at] ^= 0xff;
        assert_ne!(authenticode(&c, &SHA256).unwrap(), d, "byte {at:#x} is hashed");
    }
}

#[test]
fn what_is_not_a_pe_image_is_named() {
    assert_eq!(authenticode(b"ELF", &SHA256), Err(NotPe("no MZ header".to_string())));
    let mut b = image();
    b[0x80] = b'X';
    assert_eq!(hashed_ranges(&b), Err(NotPe("no PE signature at byte 128".to_string())));
    let mut b = image();
    let cert = 0x80 + 24 + 112 + 32;
    b[cert..cert + 4].copy_from_slice(&0x300u32.to_le_bytes());
    assert_eq!(
        hashed_ranges(&b),
        Err(NotPe("the certificate table is not at the file's end".to_string()))
    );
    let b = image();
    assert!(hashed_ranges(&b[..0x500]).is_err(), "a cut image");
}
