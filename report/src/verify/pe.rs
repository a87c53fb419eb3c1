//! The Authenticode digest of a PE/COFF image: what UEFI firmware and shim
//! measure into PCR 4 for each EFI application they start (the event
//! log's `EV_EFI_BOOT_SERVICES_APPLICATION` digests), so that `verify
//! --image` can compute, from a stick's files, the measurements a boot of
//! that stick must have logged.
//!
//! The algorithm: Microsoft's "Windows Authenticode Portable Executable
//! Signature Format" 1.0, "Calculating the PE Image Hash", as EDK2's
//! `DxeImageVerificationLib` (`HashPeImage`) and pesign compute it: the
//! headers up to the optional header's `CheckSum`, then on to the
//! certificate table's data directory entry, then to the end of the headers
//! (`SizeOfHeaders`), each skipping those two fields; then every section's
//! raw data in the order of its file offset; then whatever follows the last
//! section, short of the certificate table (the signatures) at the file's
//! end. Offsets from the PE/COFF specification: `e_lfanew` at 0x3C, the
//! COFF header after the "PE\0\0" signature, `CheckSum` at 64 bytes into
//! the optional header, `SizeOfHeaders` at 60, the data directories at 96
//! (PE32) or 112 (PE32+), the certificate table the fifth directory.

use ring::digest::{Algorithm, Context};

/// Why a file is not a PE image this digest covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotPe(pub String);

impl std::fmt::Display for NotPe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a PE image: {}", self.0)
    }
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, NotPe> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| NotPe(format!("ends before byte {}", at + 2)))
}

fn u32_at(b: &[u8], at: usize) -> Result<usize, NotPe> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
        .ok_or_else(|| NotPe(format!("ends before byte {}", at + 4)))
}

/// `b[from..to]`, or why not.
fn range(b: &[u8], from: usize, to: usize, what: &str) -> Result<std::ops::Range<usize>, NotPe> {
    if from <= to && to <= b.len() {
        Ok(from..to)
    } else {
        Err(NotPe(format!("{what} at bytes {from}..{to} of {}", b.len())))
    }
}

/// The byte ranges the Authenticode digest covers, in order.
pub fn hashed_ranges(b: &[u8]) -> Result<Vec<std::ops::Range<usize>>, NotPe> {
    if b.get(..2) != Some(b"MZ") {
        return Err(NotPe("no MZ header".to_string()));
    }
    let pe = u32_at(b, 0x3C)?;
    if b.get(pe..pe + 4) != Some(b"PE\0\0") {
        return Err(NotPe(format!("no PE signature at byte {pe}")));
    }
    let coff = pe + 4;
    let sections = usize::from(u16_at(b, coff + 2)?);
    let opt_size = usize::from(u16_at(b, coff + 16)?);
    let opt = coff + 20;
    let dirs = match u16_at(b, opt)? {
        0x10B => opt + 96,
        0x20B => opt + 112,
        m => return Err(NotPe(format!("optional header magic {m:#x}"))),
    };
    let n_dirs = u32_at(b, dirs - 4)?;
    let headers = u32_at(b, opt + 60)?;
    let checksum = opt + 64;
    let mut out = vec![range(b, 0, checksum, "the headers")?];
    let (cert_at, cert_size) = if n_dirs > 4 {
        let entry = dirs + 4 * 8;
        out.push(range(b, checksum + 4, entry, "the headers")?);
        out.push(range(b, entry + 8, headers, "the headers")?);
        (u32_at(b, entry)?, u32_at(b, entry + 4)?)
    } else {
        out.push(range(b, checksum + 4, headers, "the headers")?);
        (0, 0)
    };
    let table = opt + opt_size;
    let mut raw: Vec<(usize, usize)> = Vec::new();
    for i in 0..sections {
        let s = table + i * 40;
        let (size, at) = (u32_at(b, s + 16)?, u32_at(b, s + 20)?);
        if size > 0 {
            raw.push((at, size));
        }
    }
    raw.sort_unstable();
    let mut hashed = headers;
    for (at, size) in raw {
        out.push(range(b, at, at + size, "a section")?);
        hashed += size;
    }
    let end = b
        .len()
        .checked_sub(cert_size)
        .ok_or_else(|| NotPe(format!("a certificate table of {cert_size} bytes")))?;
    if cert_size > 0 && cert_at + cert_size != b.len() {
        return Err(NotPe("the certificate table is not at the file's end".to_string()));
    }
    if end > hashed {
        out.push(range(b, hashed, end, "the data after the sections")?);
    }
    Ok(out)
}

/// The Authenticode digest of `image` with `alg`.
pub fn authenticode(image: &[u8], alg: &'static Algorithm) -> Result<Vec<u8>, NotPe> {
    let mut c = Context::new(alg);
    for r in hashed_ranges(image)? {
        c.update(&image[r]);
    }
    Ok(c.finish().as_ref().to_vec())
}

#[cfg(test)]
mod tests;
