//! Serial framing of a result document: how PID 1 prints a document on the
//! console and the host tools (`bootbench-report extract`, `bootbench-qemu`)
//! cut it out again (README.md, "The serial console: frames, and what a
//! device cannot make it say"). A document travels over a console that may
//! wrap lines, add `\r` and interleave other lines, and a host cuts it out of
//! the captured log. Every frame since version 2 is tied to the boot that
//! wrote it, so that nothing else that reaches the console (a disk's model or
//! serial as the kernel or the firmware prints it, a forged line) can pass
//! for a result. Version 3 (this one) carries the document deflated, as a
//! serial line is slow: at 115200 baud (about 11.5 KB/s, and many BMCs
//! default to less) the base64 of a four-disk quick run's pretty document
//! took 95 s, its compact JSON deflated takes about 5.
//!
//! ```text
//! BOOTBENCH-BOOT v2 nonce=<32 lowercase hex>
//! ... the boot's console ...
//! BOOTBENCH-RESULT-BEGIN v3 nonce=<the same> name=<file name> bytes=<N> deflate=<M> crc32=<8 lowercase hex>
//! <base64 (standard alphabet, padded) of the document's raw DEFLATE stream (RFC 1951), 76 characters per line>
//! BOOTBENCH-RESULT-END
//! ```
//!
//! `bytes=` is the document's length (at most [`MAX_DOCUMENT`], 1 GiB: a
//! frame that claims more is refused before its body is decoded) and
//! `crc32=` its checksum, `deflate=` the length of the DEFLATE stream the
//! body holds. [`scan`] checks every frame without holding its document
//! (inflated a 32 KiB window at a time), and [`Checked::write_to`] decodes
//! a checked frame again into a writer the same way. PID 1 frames the
//! document as compact JSON ([`compact_json`]: the same values in the same
//! order, without the whitespace between tokens); the stick and the network
//! keep the pretty one. A version-2 frame (`bytes=` and `crc32=` of the
//! document, whose base64 is the body) still decodes, so older captures
//! keep their results.
//!
//! PID 1 draws the boot's nonce (128 random bits, getrandom(2)) when it
//! starts and prints the announce line ([`announce`]) as its first output,
//! before it prints any string that came from a device; every frame of that
//! boot carries the nonce ([`encode_to`]). `crc32` is the IEEE CRC-32 of the
//! document's bytes (zlib's `crc32`). The decoder accepts `\r\n`, whitespace and
//! line breaks anywhere inside the base64 body and the header, ignores lines
//! outside frames, and reports a frame whose length, checksum, base64 or
//! DEFLATE stream is wrong, or whose END is missing, as damaged (never
//! returning its bytes).
//!
//! # The rule the decoder applies
//!
//! 1. A marker ([`BOOT`], [`BEGIN`], [`END`]) counts only at the start of a
//!    line; spaces, tabs and `\r` before it (an IPMI SOL capture's indent)
//!    are fine. A marker inside a line is text.
//! 2. A version-2 or version-3 frame is accepted only if an announce line with its nonce
//!    came before it ([`FrameError::NotAnnounced`] otherwise).
//! 3. Boots do not overlap: a real boot's frames all come after its announce
//!    and before the next boot's. A nonce's *span* runs from its first
//!    announce to its last good frame; when two spans overlap, every frame
//!    of both is refused ([`FrameError::Overlap`]): one of the two boots is
//!    forged, and the log cannot tell which. A nonce announced without a
//!    frame after it has no span, so a forged announce line alone changes
//!    nothing.
//! 4. A version-1 frame (no nonce) is refused ([`FrameError::Unauthenticated`])
//!    unless the caller asks for them ([`Options::accept_v1`]): a forger
//!    would simply write the old format.
//!
//! # What it protects, and its limits
//!
//! bootbench prints strings from devices only through
//! [`crate::console::safe`], which escapes line breaks and the marker word,
//! so its own output never starts a line with a marker. The kernel prints
//! some device strings itself (libata's model, USB string descriptors, at
//! info level, which the image's `loglevel=4` keeps off the console) and a
//! string with line breaks starts lines there when printk timestamps are off;
//! the firmware may print some before the kernel starts. Such a forger can
//! know this format but not a future boot's nonce. So:
//!
//! - a forged frame, of any version, inside a real boot is never accepted
//!   (its nonce was not announced, or it is version 1);
//! - a forged announce and forged frames inside a real boot make two spans
//!   overlap: both boots' frames are refused. A forger that prints whole
//!   lines can withhold the console copy of a result, never replace it (the
//!   stick's file is untouched by any of this);
//! - a forged announce with its frames printed entirely before a real boot
//!   announces, or after its last frame, reads as a boot of its own, as an
//!   earlier or later real boot in the same log would. [`Found::frame`]
//!   carries the nonce of every accepted frame so a tool can say how many
//!   boots a log holds (`bootbench-report extract` does).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;

/// The first word of the line that announces a boot's nonce.
pub const BOOT: &str = "BOOTBENCH-BOOT";
/// The first word of a frame's header line.
pub const BEGIN: &str = "BOOTBENCH-RESULT-BEGIN";
/// The line that ends a frame.
pub const END: &str = "BOOTBENCH-RESULT-END";
/// The frame format version [`encode_to`] writes.
pub const VERSION: u32 = 2;
/// The version of the frames PID 1 writes ([`encode_to`]): 3, the document
/// deflated. [`decode`] reads versions 1 (refused unless asked), 2 and 3.
pub const FRAME_VERSION: u32 = 3;
/// miniz_oxide's level: 9 is zlib's best (10, its "uber" level, gained under
/// 1% on a result document at several times the time).
const DEFLATE_LEVEL: u8 = 9;
/// Base64 characters per body line.
pub const LINE: usize = 76;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The four base64 characters of a group of one to three bytes, `=`-padded.
fn base64_group(group: &[u8]) -> [u8; 4] {
    let b = [
        group[0],
        group.get(1).copied().unwrap_or(0),
        group.get(2).copied().unwrap_or(0),
    ];
    let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
    let sextet = |shift: u32| ALPHABET[((n >> shift) & 63) as usize];
    [
        sextet(18),
        sextet(12),
        if group.len() > 1 { sextet(6) } else { b'=' },
        if group.len() > 2 { sextet(0) } else { b'=' },
    ]
}

/// Standard base64 with `=` padding.
pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for group in data.chunks(3) {
        out.extend(base64_group(group).map(char::from));
    }
    out
}

fn sextet_of(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Decode standard padded base64, skipping ASCII whitespace anywhere; the
/// error says what is wrong.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let chars: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    if chars.len() % 4 != 0 {
        return Err(format!(
            "{} base64 characters, not a multiple of 4 (truncated or padding missing)",
            chars.len()
        ));
    }
    let mut out = Vec::with_capacity(chars.len() / 4 * 3);
    let groups = chars.len() / 4;
    for (g, quad) in chars.chunks(4).enumerate() {
        let last = g + 1 == groups;
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return Err(format!("padding '=' inside the data at character {}", g * 4));
        }
        let mut n: u32 = 0;
        for (i, &c) in quad[..4 - pad].iter().enumerate() {
            let Some(v) = sextet_of(c) else {
                if c == b'=' {
                    return Err(format!("padding '=' inside the data at character {}", g * 4 + i));
                }
                return Err(format!(
                    "{:?} at character {} is not in the base64 alphabet",
                    char::from(c),
                    g * 4 + i
                ));
            };
            n |= v << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - pad]);
    }
    Ok(out)
}

/// IEEE CRC-32 (reflected, polynomial 0xEDB88320, initial and final XOR
/// 0xFFFFFFFF): zlib's and Python's `zlib.crc32`, from `crc32fast`.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// A boot's nonce: 128 random bits, printed as 32 lowercase hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Nonce(pub [u8; 16]);

impl Nonce {
    /// The nonce written as exactly 32 hex digits (either case), if `hex` is one.
    pub fn parse(hex: &str) -> Option<Nonce> {
        let b = hex.as_bytes();
        if b.len() != 32 {
            return None;
        }
        let mut out = [0u8; 16];
        for (i, pair) in b.chunks(2).enumerate() {
            let digit = |c: u8| char::from(c).to_digit(16);
            let (hi, lo) = (digit(pair[0])?, digit(pair[1])?);
            out[i] = u8::try_from(hi * 16 + lo).ok()?;
        }
        Some(Nonce(out))
    }
}

impl fmt::Display for Nonce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// The line that announces a boot's nonce (ends in `\n`): PID 1's first
/// output.
pub fn announce(nonce: Nonce) -> String {
    format!("{BOOT} v{VERSION} nonce={nonce}\n")
}

/// One document cut out of a log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The file name the header gives.
    pub name: String,
    /// The document's bytes, length and checksum verified.
    pub bytes: Vec<u8>,
    /// The boot's nonce; `None` for a version-1 frame (taken only with
    /// [`Options::accept_v1`]).
    pub nonce: Option<Nonce>,
}

impl Frame {
    /// The file to write the document to: the last component of the
    /// header's name (as `Path::file_name` takes it: `.` components and
    /// trailing slashes ignored), `result.json` when there is none (empty,
    /// `/`, or a name ending in `..`), so a header can never name a place
    /// outside the directory it is written to.
    pub fn file_name(&self) -> String {
        file_name_of(&self.name)
    }
}

/// [`Frame::file_name`] of a header's `name`.
pub fn file_name_of(name: &str) -> String {
    let last = name.split('/').rfind(|c| !c.is_empty() && *c != ".");
    match last {
        Some(n) if n != ".." => String::from(n),
        _ => String::from("result.json"),
    }
}

/// The most a frame's document may be (`bytes=`): 1 GiB. A frame that
/// claims more is refused ([`FrameError::TooLarge`]) before its body is
/// decoded. No run comes near: a document is about 35 KB a disk with the
/// quick profile (the four-disk QEMU boot's is 142 KB); what grows it is a
/// step's per-interval samples, at most 10,000 a step (about 200 KB a
/// direction in compact JSON), so 1 GiB is thousands of steps each at that
/// maximum (200 disks of the standard profile sampled every 1 ms), a frame
/// that would take most of a day at 115200 baud.
pub const MAX_DOCUMENT: u64 = 1 << 30;

/// A frame that is damaged, or refused because it may be forged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The BEGIN line lacks the version, `nonce=` (v2, v3), `name=`,
    /// `bytes=`, `deflate=` (v3) or `crc32=`, or gives another version.
    BadHeader {
        /// The header text as read.
        header: String,
        /// What is missing or wrong.
        why: &'static str,
    },
    /// The END line never came (another BEGIN or the end of the log first).
    MissingEnd {
        /// The frame's name.
        name: String,
    },
    /// The body is not valid base64.
    BadBase64 {
        /// The frame's name.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// A version-3 body is not the DEFLATE stream its header describes:
    /// its length differs from `deflate=`, it does not inflate, or it
    /// inflates to more than `bytes=`.
    BadDeflate {
        /// The frame's name.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// The decoded length differs from `bytes=`.
    BadLength {
        /// The frame's name.
        name: String,
        /// `bytes=` of the header.
        expected: usize,
        /// Bytes decoded.
        got: usize,
    },
    /// The CRC-32 of the decoded bytes differs from `crc32=`.
    BadCrc {
        /// The frame's name.
        name: String,
        /// `crc32=` of the header.
        expected: u32,
        /// CRC-32 of the bytes decoded.
        got: u32,
    },
    /// `bytes=` claims more than [`MAX_DOCUMENT`]: refused before the body
    /// is decoded.
    TooLarge {
        /// The frame's name.
        name: String,
        /// `bytes=` of the header.
        bytes: u64,
    },
    /// A version-1 frame: it has no nonce, so nothing tells it from a
    /// forged one (refused unless [`Options::accept_v1`]).
    Unauthenticated {
        /// The frame's name.
        name: String,
    },
    /// A good frame whose nonce no announce line before it gave: not a
    /// frame of any boot in the log.
    NotAnnounced {
        /// The frame's name.
        name: String,
        /// The nonce its header gives.
        nonce: Nonce,
    },
    /// A good frame of a boot whose span overlaps another boot's: one of
    /// the two is forged.
    Overlap {
        /// The frame's name.
        name: String,
        /// Its nonce.
        nonce: Nonce,
        /// The nonce of a boot it overlaps.
        other: Nonce,
    },
}

impl FrameError {
    /// True for a frame refused as possibly forged (intact, but not
    /// vouched for by its boot) or as too large to take, false for a
    /// damaged one.
    pub fn is_refused(&self) -> bool {
        matches!(
            self,
            FrameError::Unauthenticated { .. }
                | FrameError::NotAnnounced { .. }
                | FrameError::Overlap { .. }
                | FrameError::TooLarge { .. }
        )
    }
}

/// The most characters of a header or a frame's name a message quotes: a
/// damaged header line may be megabytes long, and a name as long as the
/// header holds.
pub const QUOTE_MAX: usize = 120;

/// `s` as a message quotes it ([`QUOTE_MAX`]).
#[derive(Clone, Copy, Debug)]
pub struct Excerpt<'a> {
    /// The text, whole or cut.
    shown: &'a str,
    /// `s`'s length in bytes when it was cut.
    cut_from: Option<usize>,
    /// Quoted as Rust's `{:?}` quotes a string (escapes, quotes).
    debug: bool,
}

/// `s` whole if it has at most [`QUOTE_MAX`] characters, else its first
/// [`QUOTE_MAX`] characters, `…` and its length: `aaaa… (1048576 bytes)`.
pub fn excerpt(s: &str) -> Excerpt<'_> {
    let (shown, cut_from) = match s.char_indices().nth(QUOTE_MAX) {
        Some((end, _)) => (&s[..end], Some(s.len())),
        None => (s, None),
    };
    Excerpt {
        shown,
        cut_from,
        debug: false,
    }
}

impl Excerpt<'_> {
    /// The excerpt in quotes, escaped as `{:?}` escapes a string.
    pub fn quoted(self) -> Self {
        Excerpt { debug: true, ..self }
    }
}

impl fmt::Display for Excerpt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.debug {
            write!(f, "{:?}", self.shown)?;
        } else {
            f.write_str(self.shown)?;
        }
        match self.cut_from {
            Some(n) => write!(f, "\u{2026} ({n} bytes)"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::BadHeader { header, why } => {
                write!(f, "damaged frame header {}: {why}", excerpt(header).quoted())
            }
            FrameError::MissingEnd { name } => write!(f, "frame {}: damaged: no {END} line", excerpt(name)),
            FrameError::BadBase64 { name, why } => write!(f, "frame {}: damaged: bad base64: {why}", excerpt(name)),
            FrameError::BadDeflate { name, why } => write!(f, "frame {}: damaged: bad deflate: {why}", excerpt(name)),
            FrameError::BadLength { name, expected, got } => write!(
                f,
                "frame {name}: damaged: bad length: header says {expected} bytes, body holds {got}",
                name = excerpt(name)
            ),
            FrameError::BadCrc { name, expected, got } => write!(
                f,
                "frame {name}: damaged: bad crc32: header says {expected:08x}, body has {got:08x}",
                name = excerpt(name)
            ),
            FrameError::TooLarge { name, bytes } => write!(
                f,
                "frame {name}: refused: bytes={bytes} claims more than {MAX_DOCUMENT} bytes (1 GiB), the most a document may be",
                name = excerpt(name)
            ),
            FrameError::Unauthenticated { name } => write!(
                f,
                "frame {name}: refused: a version-1 frame has no boot nonce, so it cannot be told from a forged one",
                name = excerpt(name)
            ),
            FrameError::NotAnnounced { name, nonce } => write!(
                f,
                "frame {name}: refused: nonce {nonce} was not announced by a {BOOT} line before it (forged?)",
                name = excerpt(name)
            ),
            FrameError::Overlap { name, nonce, other } => write!(
                f,
                "frame {name}: refused: its boot (nonce {nonce}) overlaps the boot of nonce {other}; one of them is forged",
                name = excerpt(name)
            ),
        }
    }
}

/// Document bytes per body line: [`LINE`] base64 characters hold three
/// quarters as many.
const LINE_BYTES: usize = LINE / 4 * 3;
const _: () = assert!(LINE % 4 == 0, "a body line holds whole base64 groups");

/// Frame `doc` (any bytes; PID 1 gives its [`compact_json`]) under the
/// file name `name` for the boot of `nonce` and write it to `out`, as a
/// version-3 frame: header, base64 lines of [`LINE`] characters, END; every
/// line ends in `\n`. Written raw to the console, at the start of a line.
///
/// The header's `bytes=` and `crc32=` come from `doc`, `deflate=` from its
/// DEFLATE stream (made whole first: a fraction of the document); then each
/// line goes to `out` in one `write_all` as it is made (the header, then at
/// most [`LINE`] + 1 bytes from a buffer on the stack), so the base64 is
/// never held in memory. The first error of `out` stops the frame there and
/// is returned.
pub fn encode_to<W: embedded_io::Write + ?Sized>(
    out: &mut W,
    name: &str,
    doc: &[u8],
    nonce: Nonce,
) -> Result<(), W::Error> {
    let Some(deflated) = deflate(doc) else {
        // Never seen: the document as a version-2 frame, rather than none.
        return write_frame(out, &plain_header(&format!("v2 nonce={nonce}"), name, doc), doc);
    };
    let header = format!(
        "{BEGIN} v{FRAME_VERSION} nonce={nonce} name={name} bytes={} deflate={} crc32={:08x}\n",
        doc.len(),
        deflated.len(),
        crc32(doc)
    );
    write_frame(out, &header, &deflated)
}

/// [`encode_to`] into a `String`.
pub fn encode(name: &str, doc: &[u8], nonce: Nonce) -> String {
    written(|out| encode_to(out, name, doc, nonce))
}

/// A version-2 frame (the document's own base64), as bootbench wrote it
/// before version 3: for tests of old logs.
pub fn encode_v2(name: &str, json: &[u8], nonce: Nonce) -> String {
    written(|out| write_frame(out, &plain_header(&format!("v2 nonce={nonce}"), name, json), json))
}

/// A version-1 frame (no nonce), as bootbench wrote before version 2: for
/// tests of old logs.
pub fn encode_v1(name: &str, json: &[u8]) -> String {
    written(|out| write_frame(out, &plain_header("v1", name, json), json))
}

/// The header line of a version-1 or version-2 frame of `json`.
fn plain_header(version: &str, name: &str, json: &[u8]) -> String {
    format!(
        "{BEGIN} {version} name={name} bytes={} crc32={:08x}\n",
        json.len(),
        crc32(json)
    )
}

/// The raw DEFLATE stream (RFC 1951, no zlib or gzip wrapper) of `doc`;
/// `None` if the compressor fails (it does not with these parameters). It
/// grows as the compressor writes it, a block on the stack at a time
/// (`compress_to_vec` would first reserve half the document).
pub fn deflate(doc: &[u8]) -> Option<Vec<u8>> {
    use miniz_oxide::deflate::core::{
        compress, create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus,
    };
    // window_bits -15: a raw stream, no zlib header (miniz's convention).
    let mut c = CompressorOxide::new(create_comp_flags_from_zip_params(i32::from(DEFLATE_LEVEL), -15, 0));
    let (mut out, mut block, mut rest) = (Vec::new(), [0_u8; 4096], doc);
    loop {
        let (status, read, wrote) = compress(&mut c, rest, &mut block, TDEFLFlush::Finish);
        rest = rest.get(read..)?;
        out.extend_from_slice(block.get(..wrote)?);
        match status {
            TDEFLStatus::Done => return Some(out),
            TDEFLStatus::Okay => {}
            TDEFLStatus::BadParam | TDEFLStatus::PutBufFailed => return None,
        }
    }
}

/// The output window of [`inflate_to`]: DEFLATE's 32 KiB (a match reaches
/// back at most that far), used as a ring.
const WINDOW: usize = 32 << 10;

/// Inflate `deflated`, a whole raw DEFLATE stream, handing the output to
/// `out` a piece of at most [`WINDOW`] bytes at a time, never holding more
/// than that: at most `limit` bytes (more is an error before they reach
/// `out`). The number of bytes inflated; what is wrong with the stream, or
/// `out`'s error.
fn inflate_to<E>(
    deflated: &[u8],
    limit: usize,
    out: &mut dyn FnMut(&[u8]) -> Result<(), E>,
) -> Result<usize, Stop<String, E>> {
    use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
    use miniz_oxide::inflate::TINFLStatus;
    let mut d = alloc::boxed::Box::<DecompressorOxide>::default();
    let mut window = alloc::vec![0_u8; WINDOW];
    let (mut input, mut at, mut total) = (deflated, 0_usize, 0_usize);
    loop {
        // flags 0: a raw stream, all of it given, the window a ring.
        let (status, read, wrote) = decompress(&mut d, input, &mut window, at, 0);
        input = input.get(read..).unwrap_or_default();
        total = total.saturating_add(wrote);
        if total > limit {
            return Err(Stop::Frame(format!("it inflates to more than bytes={limit}")));
        }
        out(window.get(at..at + wrote).unwrap_or_default()).map_err(Stop::Out)?;
        at = (at + wrote) % WINDOW;
        match status {
            TINFLStatus::Done => return Ok(total),
            TINFLStatus::HasMoreOutput => {}
            TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => {
                return Err(Stop::Frame(String::from("the DEFLATE stream is cut short")))
            }
            _ => return Err(Stop::Frame(String::from("the body is not a DEFLATE stream"))),
        }
    }
}

/// `deflated` inflated, if it is a whole DEFLATE stream of at most `limit`
/// bytes; what is wrong otherwise.
#[cfg(test)]
fn inflate(deflated: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let mut v = Vec::new();
    let r = inflate_to(deflated, limit, &mut |b: &[u8]| {
        v.extend_from_slice(b);
        Ok::<(), Infallible>(())
    });
    match r {
        Ok(_) => Ok(v),
        Err(Stop::Frame(why)) => Err(why),
        Err(Stop::Out(never)) => match never {},
    }
}

/// Why [`Checked::write_to`] stopped: the frame (its document did not come
/// out as verified), or the writer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop<F, E> {
    /// What is wrong with the frame.
    Frame(F),
    /// The writer's error.
    Out(E),
}

/// `json` without the whitespace between its tokens (JSON's space, tab,
/// line feed and carriage return outside strings): the same values in the
/// same order, as compact JSON. What is inside a string (escapes included)
/// is kept byte for byte; text that is not JSON loses the same whitespace.
pub fn compact_json(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in json {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        } else if b == b'"' {
            in_string = true;
        }
        out.push(b);
    }
    out
}

/// What `write` writes to an `embedded_io::Write`, as a `String`: the
/// `String` forms over the one encoder. It writes only `str`s, so the bytes
/// are UTF-8 (anything else would show as U+FFFD).
fn written(write: impl FnOnce(&mut Vec<u8>) -> Result<(), Infallible>) -> String {
    let mut out = Vec::new();
    let Ok(()) = write(&mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `header` (a whole line), the base64 of `body` in lines of [`LINE`]
/// characters, and the END line, each line in one `write_all`.
fn write_frame<W: embedded_io::Write + ?Sized>(out: &mut W, header: &str, body: &[u8]) -> Result<(), W::Error> {
    out.write_all(header.as_bytes())?;
    let mut line = [0_u8; LINE + 1];
    for chunk in body.chunks(LINE_BYTES) {
        let mut len = 0;
        for group in chunk.chunks(3) {
            line[len..len + 4].copy_from_slice(&base64_group(group));
            len += 4;
        }
        line[len] = b'\n';
        out.write_all(&line[..=len])?;
    }
    out.write_all(format!("{END}\n").as_bytes())
}

/// A parsed header.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Header {
    name: String,
    /// `bytes=`, as claimed: checked against [`MAX_DOCUMENT`] before use.
    bytes: u64,
    crc: u32,
    /// `None` for version 1.
    nonce: Option<Nonce>,
    /// `deflate=`: the length of the DEFLATE stream a version-3 body holds;
    /// `None` before version 3 (the body is the document's own base64).
    deflated: Option<usize>,
}

/// The value after `key` in `h`: the characters up to the next non-`ok` one.
fn value_after<'a>(h: &'a str, key: &str, ok: fn(char) -> bool) -> Option<&'a str> {
    let start = h.find(key)? + key.len();
    let rest = &h[start..];
    let end = rest.find(|c: char| !ok(c)).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The version right after `word` in compacted header text (`v2...`).
fn version_after(compact: &str, word: &str) -> Option<u32> {
    let v = compact.get(word.len()..)?.strip_prefix('v')?;
    let end = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    v[..end].parse().ok()
}

/// Parse the header text (whitespace removed, so a line wrapped anywhere
/// reads the same); `Ok(None)` while the checksum's 8 digits are incomplete.
fn parse_header(compact: &str) -> Result<Option<Header>, &'static str> {
    let is_hex = |c: char| c.is_ascii_hexdigit();
    let crc = match value_after(compact, "crc32=", is_hex) {
        Some(v) if v.len() >= 8 => &v[..8],
        _ => return Ok(None),
    };
    let version = version_after(compact, BEGIN);
    let nonce = match version {
        Some(1) => None,
        Some(2 | 3) => {
            let hex = value_after(compact, "nonce=", is_hex).ok_or("no nonce= (version 2 or 3)")?;
            Some(Nonce::parse(hex.get(..32).unwrap_or(hex)).ok_or("nonce= is not 32 hex digits")?)
        }
        _ => return Err("not version v1, v2 or v3"),
    };
    let name_start = compact.find("name=").ok_or("no name=")? + "name=".len();
    let name_end = compact[name_start..].find("bytes=").ok_or("no bytes= after name=")? + name_start;
    let name = &compact[name_start..name_end];
    if name.is_empty() {
        return Err("empty name=");
    }
    let bytes = value_after(compact, "bytes=", |c| c.is_ascii_digit())
        .filter(|v| !v.is_empty())
        .ok_or("no number after bytes=")?
        .parse::<u64>()
        .map_err(|_| "bytes= out of range")?;
    let deflated = match version {
        Some(3) => Some(
            value_after(&compact[name_end..], "deflate=", |c| c.is_ascii_digit())
                .filter(|v| !v.is_empty())
                .ok_or("no number after deflate= (version 3)")?
                .parse::<usize>()
                .map_err(|_| "deflate= out of range")?,
        ),
        _ => None,
    };
    let crc = u32::from_str_radix(crc, 16).map_err(|_| "crc32= is not hex")?;
    Ok(Some(Header {
        name: String::from(name),
        bytes,
        crc,
        nonce,
        deflated,
    }))
}

/// The nonce of an announce line (compacted, starting with [`BOOT`]);
/// `Ok(None)` while it is incomplete (a wrapped line); `Err` if it is not
/// `v2 nonce=` and 32 hex digits.
fn parse_announce(compact: &str) -> Result<Option<Nonce>, ()> {
    let rest = &compact[BOOT.len()..];
    let want = format!("v{VERSION}nonce=");
    let Some(hex) = rest.strip_prefix(want.as_str()) else {
        return if want.starts_with(rest) { Ok(None) } else { Err(()) };
    };
    let digits = hex.bytes().take_while(u8::is_ascii_hexdigit).count();
    if digits >= 32 {
        Nonce::parse(&hex[..32]).map(Some).ok_or(())
    } else if digits == hex.len() {
        Ok(None)
    } else {
        Err(())
    }
}

/// `s` without what a capture puts inside a header or announce line: the
/// line breaks of a wrap (`\r`, `\n`) and the spaces and tabs of words and
/// indentation. Nothing else: a Unicode line separator (NEL U+0085, U+2028,
/// U+2029), a vertical tab or a form feed inside a header is no capture's
/// doing, so it stays, and a name that holds one is refused for it rather
/// than written with the character silently gone.
fn compact(s: &str) -> String {
    s.chars().filter(|c| !matches!(c, ' ' | '\t' | '\r' | '\n')).collect()
}

/// `line` without what a capture may put before a marker (spaces, tabs,
/// `\r`, form feeds).
fn lead_trimmed(line: &str) -> &str {
    line.trim_start_matches(|c: char| c.is_ascii_whitespace())
}

/// True if `line` starts (after [`lead_trimmed`]'s whitespace) with a marker.
fn starts_marker(line: &str) -> bool {
    let t = lead_trimmed(line);
    t.starts_with(BEGIN) || t.starts_with(END) || t.starts_with(BOOT)
}

/// What the caller accepts besides version-2 frames of their boot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Take version-1 frames (no nonce: bootbench before version 2) as
    /// good; they are [`FrameError::Unauthenticated`] otherwise.
    pub accept_v1: bool,
}

/// One frame of a log: the line its header starts on, and what came of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The 1-based line of the log where the frame's BEGIN is.
    pub line: usize,
    /// The document (with its nonce), or why it is damaged or refused.
    pub frame: Result<Frame, FrameError>,
}

/// Longest a wrapped header or announce line may grow while its lines are
/// joined.
const HEADER_MAX: usize = 400;

/// Join the lines after a marker line while `parse` says the text is
/// incomplete, as a wrap cut it: never past another marker line.
fn join_wrapped<'a, T, E>(
    first: &str,
    lines: &mut core::iter::Peekable<impl Iterator<Item = (usize, &'a str)>>,
    parse: impl Fn(&str) -> Result<Option<T>, E>,
    incomplete: E,
) -> (String, Result<T, E>) {
    let mut text = compact(first);
    loop {
        match parse(&text) {
            Ok(Some(v)) => return (text, Ok(v)),
            Err(e) => return (text, Err(e)),
            Ok(None) => match lines.peek() {
                Some((_, next)) if !starts_marker(next) && text.len() < HEADER_MAX => {
                    text.push_str(&compact(lead_trimmed(next)));
                    lines.next();
                }
                _ => return (text, Err(incomplete)),
            },
        }
    }
}

/// Cut every frame out of a console log, in order, by the rule of the
/// module doc with the default [`Options`] (version 1 refused): a good
/// frame's bytes, or what is wrong with a damaged or refused one.
pub fn decode(log: &str) -> Vec<Result<Frame, FrameError>> {
    decode_with(log, Options::default())
        .into_iter()
        .map(|f| f.frame)
        .collect()
}

/// [`decode`] with `opts`, and the line of each frame. Each good frame's
/// document is held whole ([`scan`] holds none).
pub fn decode_with(log: &str, opts: Options) -> Vec<Found> {
    scan(log, opts)
        .into_iter()
        .map(|s| Found {
            line: s.line,
            frame: s.frame.and_then(|c| c.to_frame()),
        })
        .collect()
}

/// One frame of a log as [`scan`] finds it: the line its header starts on,
/// and the frame verified (its document not held), or what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scanned<'a> {
    /// The 1-based line of the log where the frame's BEGIN is.
    pub line: usize,
    /// The frame, verified, or why it is damaged or refused.
    pub frame: Result<Checked<'a>, FrameError>,
}

/// A frame whose document was decoded, checked (length, CRC-32) and let go:
/// its header and its body as it lies in the log, to decode again into a
/// writer ([`Checked::write_to`]) a window at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked<'a> {
    header: Header,
    /// The body's lines in the log, END excluded.
    body: &'a str,
}

impl Checked<'_> {
    /// The name the header gives.
    pub fn name(&self) -> &str {
        &self.header.name
    }

    /// The boot's nonce; `None` for a version-1 frame.
    pub fn nonce(&self) -> Option<Nonce> {
        self.header.nonce
    }

    /// The document's length (`bytes=`, verified).
    pub fn len(&self) -> u64 {
        self.header.bytes
    }

    /// True for an empty document.
    pub fn is_empty(&self) -> bool {
        self.header.bytes == 0
    }

    /// [`Frame::file_name`] of this frame.
    pub fn file_name(&self) -> String {
        file_name_of(&self.header.name)
    }

    /// Decode the document again and hand it to `out` a piece at a time
    /// (at most 32 KiB, whatever the document's size), checking its length
    /// and CRC-32 as it goes: only when this returns `Ok` has all of it,
    /// as verified, reached `out` (a caller writing a file deletes it
    /// otherwise). The body held decoded from base64 (the deflated
    /// stream) is a part of the log's size; the document never is held.
    pub fn write_to<E>(&self, mut out: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), Stop<FrameError, E>> {
        check_body(&self.header, self.body, &mut out)
    }

    /// The document in memory, as a [`Frame`].
    pub fn to_frame(&self) -> Result<Frame, FrameError> {
        let mut bytes = Vec::new();
        match self.write_to(|b| {
            bytes.extend_from_slice(b);
            Ok::<(), Infallible>(())
        }) {
            Ok(()) => Ok(Frame {
                name: self.header.name.clone(),
                bytes,
                nonce: self.header.nonce,
            }),
            Err(Stop::Frame(e)) => Err(e),
            Err(Stop::Out(never)) => match never {},
        }
    }
}

/// Where `part`, a slice of `log`, starts in it.
fn offset_in(log: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(log.as_ptr() as usize)
}

/// Cut every frame out of a console log, in order, by the rule of the
/// module doc with `opts`, verifying each (length, CRC-32, nonce) without
/// keeping its document: memory a small part of the log's size whatever
/// the frames claim, and a frame claiming more than [`MAX_DOCUMENT`] is
/// refused before its body is decoded.
pub fn scan(log: &str, opts: Options) -> Vec<Scanned<'_>> {
    let mut out: Vec<Scanned<'_>> = Vec::new();
    // (line, nonce) of every announce, in order.
    let mut announces: Vec<(usize, Nonce)> = Vec::new();
    let mut lines = log
        .split('\n')
        .map(|l| l.trim_end_matches('\r'))
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .peekable();
    while let Some((at, line)) = lines.next() {
        let t = lead_trimmed(line);
        if t.starts_with(BOOT) {
            if let (_, Ok(n)) = join_wrapped(t, &mut lines, parse_announce, ()) {
                announces.push((at, n));
            }
            continue;
        }
        if !t.starts_with(BEGIN) {
            continue;
        }
        let (header, parsed) = join_wrapped(t, &mut lines, parse_header, "no crc32= with 8 hex digits");
        let h = match parsed {
            Ok(h) => h,
            Err(why) => {
                out.push(Scanned {
                    line: at,
                    frame: Err(FrameError::BadHeader { header, why }),
                });
                continue;
            }
        };
        out.push(Scanned {
            line: at,
            frame: body(log, h, &mut lines),
        });
    }
    authenticate(&mut out, &announces, opts);
    out
}

/// Read a frame's body up to its END line and check it against the header
/// (its document decoded a window at a time, and let go).
fn body<'a>(
    log: &'a str,
    h: Header,
    lines: &mut core::iter::Peekable<impl Iterator<Item = (usize, &'a str)>>,
) -> Result<Checked<'a>, FrameError> {
    let mut start = None;
    let mut end = None;
    while let Some(&(_, next)) = lines.peek() {
        let t = lead_trimmed(next);
        if t.starts_with(BEGIN) || t.starts_with(BOOT) {
            break; // the next frame or boot starts; this one's END is missing
        }
        lines.next();
        if t.starts_with(END) {
            end = Some(offset_in(log, next));
            break;
        }
        start.get_or_insert(offset_in(log, next));
    }
    let Some(end) = end else {
        return Err(FrameError::MissingEnd { name: h.name });
    };
    if h.bytes > MAX_DOCUMENT {
        return Err(FrameError::TooLarge {
            name: h.name,
            bytes: h.bytes,
        });
    }
    let body = log.get(start.unwrap_or(end)..end).unwrap_or_default();
    match check_body(&h, body, &mut |_| Ok::<(), Infallible>(())) {
        Ok(()) => Ok(Checked { header: h, body }),
        Err(Stop::Frame(e)) => Err(e),
        Err(Stop::Out(never)) => match never {},
    }
}

/// Decode `body` (a frame's base64 lines) by header `h`, the document to
/// `out` a window at a time, and check its length and CRC-32.
fn check_body<E>(
    h: &Header,
    body: &str,
    out: &mut dyn FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), Stop<FrameError, E>> {
    let name = || h.name.clone();
    // Checked against MAX_DOCUMENT, which fits a usize on every target.
    let expected = usize::try_from(h.bytes).map_err(|_| {
        Stop::Frame(FrameError::TooLarge {
            name: name(),
            bytes: h.bytes,
        })
    })?;
    let decoded = base64_decode(body).map_err(|why| Stop::Frame(FrameError::BadBase64 { name: name(), why }))?;
    let mut crc = crc32fast::Hasher::new();
    let got = match h.deflated {
        Some(m) => {
            if decoded.len() != m {
                return Err(Stop::Frame(FrameError::BadDeflate {
                    name: name(),
                    why: format!("header says deflate={m}, body holds {} bytes", decoded.len()),
                }));
            }
            let mut sink = |b: &[u8]| {
                crc.update(b);
                out(b)
            };
            inflate_to(&decoded, expected, &mut sink).map_err(|e| match e {
                Stop::Frame(why) => Stop::Frame(FrameError::BadDeflate { name: name(), why }),
                Stop::Out(e) => Stop::Out(e),
            })?
        }
        None => {
            // The document itself (version 1 or 2), handed on only once
            // its length and checksum are right.
            crc.update(&decoded);
            if decoded.len() == expected && crc.clone().finalize() == h.crc {
                out(&decoded).map_err(Stop::Out)?;
            }
            decoded.len()
        }
    };
    if got != expected {
        return Err(Stop::Frame(FrameError::BadLength {
            name: name(),
            expected,
            got,
        }));
    }
    let got = crc.finalize();
    if got != h.crc {
        return Err(Stop::Frame(FrameError::BadCrc {
            name: name(),
            expected: h.crc,
            got,
        }));
    }
    Ok(())
}

/// Rules 2 to 4 of the module doc, on the intact frames of `found`.
///
/// Every lookup by nonce goes through a map (a nonce's first announce, its
/// span, the boot it overlaps), so a log of many announces and frames costs
/// O(n log n), not a scan of every announce for every frame (160,000 of
/// each took 55 s).
fn authenticate(found: &mut [Scanned<'_>], announces: &[(usize, Nonce)], opts: Options) {
    // Each nonce's first announce line.
    let mut first: BTreeMap<Nonce, usize> = BTreeMap::new();
    for &(line, n) in announces {
        first.entry(n).or_insert(line);
    }
    let first_announce = |n: Nonce| first.get(&n).copied();
    // Each announced nonce's span: first announce -> (last good frame after it).
    let mut ends: BTreeMap<Nonce, usize> = BTreeMap::new();
    for f in found.iter() {
        let Some(n) = f.frame.as_ref().ok().and_then(|c| c.header.nonce.as_ref()) else {
            continue;
        };
        match first_announce(*n) {
            Some(start) if start < f.line => {
                let end = ends.entry(*n).or_insert(f.line);
                *end = (*end).max(f.line);
            }
            _ => {}
        }
    }
    let mut spans: Vec<(usize, usize, Nonce)> = ends
        .iter()
        .filter_map(|(&n, &end)| first_announce(n).map(|start| (start, end, n)))
        .collect();
    spans.sort_unstable();
    // Sorted by start: a span overlaps an earlier one if it starts before
    // the furthest end so far, a later one if the next span starts before
    // it ends.
    let mut overlapping: BTreeMap<Nonce, Nonce> = BTreeMap::new();
    let mut furthest: Option<(usize, Nonce)> = None;
    for (i, &(start, end, n)) in spans.iter().enumerate() {
        let earlier = furthest.filter(|&(e, _)| e >= start).map(|(_, o)| o);
        let later = spans.get(i + 1).filter(|s| s.0 <= end).map(|s| s.2);
        if let Some(other) = earlier.or(later) {
            overlapping.entry(n).or_insert(other);
        }
        if furthest.is_none_or(|(e, _)| end > e) {
            furthest = Some((end, n));
        }
    }
    for f in found.iter_mut() {
        let Ok(c) = &f.frame else {
            continue;
        };
        let name = &c.header.name;
        let refusal = match &c.header.nonce {
            None if !opts.accept_v1 => Some(FrameError::Unauthenticated { name: name.clone() }),
            Some(n) => match first_announce(*n) {
                Some(start) if start < f.line => overlapping.get(n).map(|other| FrameError::Overlap {
                    name: name.clone(),
                    nonce: *n,
                    other: *other,
                }),
                _ => Some(FrameError::NotAnnounced {
                    name: name.clone(),
                    nonce: *n,
                }),
            },
            _ => None,
        };
        if let Some(e) = refusal {
            f.frame = Err(e);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use alloc::string::ToString;

    const N: Nonce = Nonce([0x11; 16]);
    const M: Nonce = Nonce([0x22; 16]);
    const F: Nonce = Nonce([0xf0; 16]);

    /// The file name follows `Path::file_name`, and never leaves the directory.
    #[test]
    fn file_name_is_the_last_component_or_result_json() {
        for (name, want) in [
            ("results/m-1.json", "m-1.json"),
            ("m-1.json", "m-1.json"),
            ("/abs/x.json", "x.json"),
            ("dir/x.json/", "x.json"),
            ("dir/x.json/.", "x.json"),
            ("..", "result.json"),
            ("/", "result.json"),
            ("", "result.json"),
            ("a/..", "result.json"),
            ("a/../", "result.json"),
        ] {
            let f = Frame {
                name: name.to_string(),
                bytes: Vec::new(),
                nonce: None,
            };
            assert_eq!(f.file_name(), want, "{name:?}");
            if let Some(n) = std::path::Path::new(name).file_name() {
                assert_eq!(n.to_str().unwrap(), want, "as Path::file_name: {name:?}");
            }
        }
    }

    #[test]
    fn crc32_vectors() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"The quick brown fox jumps over the lazy dog"), 0x414f_a339);
    }

    #[test]
    fn base64_vectors_round_trip() {
        let cases: [(&[u8], &str); 7] = [
            (b"", ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
        ];
        for (raw, enc) in cases {
            assert_eq!(base64_encode(raw), enc);
            assert_eq!(base64_decode(enc).unwrap(), raw, "{enc}");
        }
        let all: Vec<u8> = (0..=255u8).collect();
        let e = base64_encode(&all);
        assert!(e.contains('+') && e.contains('/'));
        assert_eq!(base64_decode(&e).unwrap(), all);
        assert_eq!(base64_decode("Zm9v\r\n Ym Fy\n").unwrap(), b"foobar");
    }

    #[test]
    fn base64_errors() {
        for (bad, want) in [
            ("Zm9", "not a multiple of 4"),
            ("Zm=v", "padding"),
            ("Zg==Zm9v", "padding"),
            ("Zm9*", "'*'"),
            ("Z===", "padding"),
        ] {
            let e = base64_decode(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }

    #[test]
    fn nonces_print_as_32_hex_digits_and_parse_back() {
        let n = Nonce([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 0xfe, 0xff]);
        assert_eq!(n.to_string(), "000102030405060708090a0b0c0dfeff");
        assert_eq!(Nonce::parse("000102030405060708090a0b0c0dfeff"), Some(n));
        assert_eq!(Nonce::parse("000102030405060708090A0B0C0DFEFF"), Some(n));
        for bad in [
            "",
            "00",
            "000102030405060708090a0b0c0dfef",
            "000102030405060708090a0b0c0dfeffa",
            "g00102030405060708090a0b0c0dfeff",
            "+0102030405060708090a0b0c0dfeff",
        ] {
            assert_eq!(Nonce::parse(bad), None, "{bad:?}");
        }
        assert_eq!(announce(N), format!("{BOOT} v2 nonce={}\n", "11".repeat(16)));
    }

    fn doc(n: usize) -> Vec<u8> {
        let mut s = String::from("{\"schema\":\"bootbench.result/1\",\"x\":[");
        for i in 0..n {
            s.push_str(&format!("{i},"));
        }
        s.push_str("0]}\n");
        s.into_bytes()
    }

    fn good(name: &str, bytes: &[u8], nonce: Nonce) -> Result<Frame, FrameError> {
        Ok(Frame {
            name: name.to_string(),
            bytes: bytes.to_vec(),
            nonce: Some(nonce),
        })
    }

    #[test]
    fn encode_layout() {
        let json = doc(3000);
        let f = encode("m-1.json", &json, N);
        let lines: Vec<&str> = f.lines().collect();
        let deflated = deflate(&json).unwrap();
        assert_eq!(
            lines[0],
            format!(
                "{BEGIN} v3 nonce={N} name=m-1.json bytes={} deflate={} crc32={:08x}",
                json.len(),
                deflated.len(),
                crc32(&json)
            )
        );
        assert_eq!(*lines.last().unwrap(), END);
        let body = &lines[1..lines.len() - 1];
        assert!(body.len() > 2, "{} body lines", body.len());
        assert!(body[..body.len() - 1].iter().all(|l| l.len() == LINE));
        assert!(body.last().unwrap().len() <= LINE);
        assert_eq!(
            base64_decode(&body.concat()).unwrap(),
            deflated,
            "the body is the DEFLATE stream"
        );
        assert!(f.ends_with('\n'));
        let log = announce(N) + &f;
        assert_eq!(decode(&log), vec![good("m-1.json", &json, N)]);
        assert_eq!(decode_with(&log, Options::default())[0].line, 2);
        // Empty document.
        let e = announce(N) + &encode("e", b"", N);
        assert_eq!(decode(&e)[0].as_ref().unwrap().bytes, b"");
        // Versions 2 and 1, as bootbench wrote them before: the document's own base64.
        let v2 = encode_v2("m.json", b"{}", N);
        assert_eq!(
            v2,
            format!(
                "{BEGIN} v2 nonce={N} name=m.json bytes=2 crc32={:08x}\ne30=\n{END}\n",
                crc32(b"{}")
            )
        );
        assert_eq!(decode(&(announce(N) + &v2)), vec![good("m.json", b"{}", N)]);
        assert!(encode_v1("m.json", b"{}").starts_with(&format!("{BEGIN} v1 name=m.json bytes=2 crc32=")));
    }

    /// A version-3 frame made by another DEFLATE implementation: Python's
    /// zlib (`zlib.compressobj(9, zlib.DEFLATED, -15)`, a raw stream) and
    /// `base64.b64encode` over `doc(40)`. The decoder reads zlib's
    /// streams, not only its own encoder's.
    #[test]
    fn a_frame_deflated_by_zlib_decodes() {
        let frame = "\
BOOTBENCH-RESULT-BEGIN v3 nonce=11111111111111111111111111111111 name=m-1.json bytes=150 deflate=113 crc32=09f2d628
DcxLCsJAFAXRucvocaF93+tvtiIOTAhkoAaMgiDu3UwLTn3DNi3z/RqGMK7ra5wf03J8ztv79jop
ED5hOEeE4SQyhUqjoz0KGXKUUEYFVdRQxyK2G8McS1jGClaxhnU84sL3peMJz3jBK97wTrz8Dn8=
BOOTBENCH-RESULT-END
";
        let log = announce(N) + frame;
        assert_eq!(decode(&log), vec![good("m-1.json", &doc(40), N)]);
    }

    /// A document deflates to a small part of itself: a result document's
    /// repetitive keys are what DEFLATE shortens best.
    #[test]
    fn a_document_deflates_to_a_small_part() {
        let mut json = b"{\"steps\":[".to_vec();
        for i in 0..2000_u64 {
            json.extend(
                format!(
                    "{{\"label\":\"rand_read 4k QD1\",\"read\":{{\"ios\":{},\"bytes\":{}}}}},",
                    i * 7,
                    i * 28_672
                )
                .bytes(),
            );
        }
        json.extend(b"{}]}");
        let d = deflate(&json).unwrap();
        assert!(d.len() * 5 < json.len(), "{} of {} bytes", d.len(), json.len());
        assert_eq!(inflate(&d, json.len()).unwrap(), json);
        assert!(inflate(&d, json.len() - 1).unwrap_err().contains("more than bytes="));
    }

    /// Compact JSON: whitespace between tokens goes, whitespace, quotes
    /// and backslashes inside strings stay.
    #[test]
    fn compact_json_drops_whitespace_between_tokens_only() {
        for (pretty, want) in [
            ("{\n  \"a\": [\n    1,\n    2\n  ]\r\n}\n", "{\"a\":[1,2]}"),
            ("{ \"a b\" : \" x\ty \" }", "{\"a b\":\" x\ty \"}"),
            ("[\"q\\\" \", \"b\\\\\", \" \"]", "[\"q\\\" \",\"b\\\\\",\" \"]"),
            ("", ""),
        ] {
            assert_eq!(
                String::from_utf8(compact_json(pretty.as_bytes())).unwrap(),
                want,
                "{pretty:?}"
            );
        }
    }

    /// The version-2 frame as bootbench made it before it streamed: the
    /// whole base64 in one `String`, cut into lines. The reference for the
    /// line writer.
    fn encoded_whole(name: &str, json: &[u8], nonce: Nonce) -> String {
        let mut out = format!(
            "{BEGIN} v2 nonce={nonce} name={name} bytes={} crc32={:08x}\n",
            json.len(),
            crc32(json)
        );
        for line in base64_encode(json).as_bytes().chunks(LINE) {
            out.push_str(core::str::from_utf8(line).unwrap());
            out.push('\n');
        }
        out + END + "\n"
    }

    #[test]
    fn streamed_frames_are_the_whole_encoding_byte_for_byte() {
        // A document of three body lines, as Python's base64 and zlib.crc32 frame it.
        let want = "\
BOOTBENCH-RESULT-BEGIN v2 nonce=11111111111111111111111111111111 name=m-1.json bytes=150 crc32=09f2d628
eyJzY2hlbWEiOiJib290YmVuY2gucmVzdWx0LzEiLCJ4IjpbMCwxLDIsMyw0LDUsNiw3LDgsOSwx
MCwxMSwxMiwxMywxNCwxNSwxNiwxNywxOCwxOSwyMCwyMSwyMiwyMywyNCwyNSwyNiwyNywyOCwy
OSwzMCwzMSwzMiwzMywzNCwzNSwzNiwzNywzOCwzOSwwXX0K
BOOTBENCH-RESULT-END
";
        assert_eq!(encode_v2("m-1.json", &doc(40), N), want);
        assert_eq!(encoded_whole("m-1.json", &doc(40), N), want);
        // Every length over a few lines (each remainder of a line and of a
        // base64 group), and a large document.
        let bytes: Vec<u8> = (0..=255_u8).cycle().take(4 * LINE_BYTES + 2).collect();
        for n in 0..=bytes.len() {
            let json = &bytes[..n];
            assert_eq!(
                encode_v2("r.json", json, N),
                encoded_whole("r.json", json, N),
                "{n} bytes"
            );
        }
        let big = doc(60_000);
        assert_eq!(encode_v2("big.json", &big, N), encoded_whole("big.json", &big, N));
        // Version 3 streams the same lines over the DEFLATE stream.
        let mut out = Vec::new();
        let Ok(()) = encode_to(&mut out, "big.json", &big, N);
        let v3 = String::from_utf8(out).unwrap();
        let (head, rest) = v3.split_once('\n').unwrap();
        let (_, old_rest) = encoded_whole("x", &deflate(&big).unwrap(), N)
            .split_once('\n')
            .map(|(h, r)| (h.to_string(), r.to_string()))
            .unwrap();
        assert!(head.starts_with(&format!("{BEGIN} v3 ")), "{head}");
        assert_eq!(rest, old_rest);
    }

    /// A writer that keeps what it is given and the length of each write,
    /// and fails every write after the first `ok` ones.
    pub(crate) struct Recorder {
        pub(crate) bytes: Vec<u8>,
        pub(crate) writes: Vec<usize>,
        ok: usize,
    }

    impl Recorder {
        pub(crate) fn new(ok: usize) -> Recorder {
            Recorder {
                bytes: Vec::new(),
                writes: Vec::new(),
                ok,
            }
        }
    }

    impl embedded_io::ErrorType for Recorder {
        type Error = embedded_io::ErrorKind;
    }

    impl embedded_io::Write for Recorder {
        fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
            if self.writes.len() == self.ok {
                return Err(embedded_io::ErrorKind::BrokenPipe);
            }
            self.bytes.extend_from_slice(buf);
            self.writes.push(buf.len());
            Ok(buf.len())
        }

        fn flush(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    /// PID 1 never holds the base64 of a whole document: a frame of a
    /// document of several hundred KiB reaches the writer one line a write.
    #[test]
    fn the_encoder_writes_a_line_at_a_time() {
        let json = doc(80_000);
        assert!(json.len() > 400 << 10, "{} bytes", json.len());
        let mut r = Recorder::new(usize::MAX);
        assert_eq!(encode_to(&mut r, "big.json", &json, N), Ok(()));
        let frame = encode("big.json", &json, N);
        assert_eq!(r.bytes, frame.as_bytes());
        let lines: Vec<usize> = frame.split_inclusive('\n').map(str::len).collect();
        assert_eq!(r.writes, lines, "one write a line");
        assert_eq!(r.writes[1..].iter().max(), Some(&(LINE + 1)), "a body line and its \\n");
        assert!(r.writes[0] < 200, "the header: {} bytes", r.writes[0]);
    }

    /// A write error stops the frame at that line and is returned.
    #[test]
    fn a_write_error_stops_the_frame() {
        let json = doc(100);
        let frame = encode("e.json", &json, N);
        for ok in [0, 1, 3] {
            let mut r = Recorder::new(ok);
            assert_eq!(
                encode_to(&mut r, "e.json", &json, N),
                Err(embedded_io::ErrorKind::BrokenPipe)
            );
            let kept: usize = frame.split_inclusive('\n').take(ok).map(str::len).sum();
            assert_eq!(r.bytes, frame.as_bytes()[..kept], "{ok} lines written");
        }
    }

    /// Every line cut at `width` columns, as a narrow terminal does.
    fn wrap(text: &str, width: usize) -> String {
        let mut out = String::new();
        for line in text.lines() {
            let b = line.as_bytes();
            if b.is_empty() {
                out.push('\n');
            }
            for part in b.chunks(width) {
                out.push_str(core::str::from_utf8(part).unwrap());
                out.push('\n');
            }
        }
        out
    }

    #[test]
    fn survives_wrapping_crlf_and_noise() {
        let a = doc(300);
        let b = doc(7);
        let log = String::from("[    1.234] boot noise\nsome BOOTBENCH line\n")
            + &announce(N)
            + "[    1.300] bootbench: started\n"
            + &encode("srv-1.json", &a, N)
            + "bootbench: between frames\n\n"
            + &encode("srv-2.json", &b, N)
            + "trailing noise";
        for width in [40, 23, 76, 1000] {
            let wrapped = wrap(&log, width).replace('\n', "\r\n");
            let got = decode(&wrapped);
            assert_eq!(got.len(), 2, "width {width}: {got:?}");
            assert_eq!(got[0], good("srv-1.json", &a, N), "width {width}");
            assert_eq!(got[1], good("srv-2.json", &b, N), "width {width}");
        }
        // Indentation and trailing spaces (an IPMI SOL capture) do not matter.
        let spaced: String = (announce(N) + &encode("s.json", &a, N))
            .lines()
            .map(|l| format!("  {l}   \n"))
            .collect();
        assert_eq!(decode(&spaced), vec![good("s.json", &a, N)]);
        let tabbed: String = (announce(N) + &encode("s.json", &a, N))
            .lines()
            .map(|l| format!("\t\r{l}\n"))
            .collect();
        assert_eq!(decode(&tabbed), vec![good("s.json", &a, N)]);
        assert!(decode("no frames here\n").is_empty());
    }

    /// A version-2 frame with one body line changed by `f`.
    fn damaged(name: &str, json: &[u8], f: impl Fn(&str) -> String) -> String {
        let enc = encode_v2(name, json, N);
        let mut lines: Vec<String> = enc.lines().map(str::to_string).collect();
        lines[1] = f(&lines[1]);
        lines.join("\n") + "\n"
    }

    #[test]
    fn a_damaged_frame_between_two_good_ones() {
        let good_doc = doc(50);
        let flip = |l: &str| {
            let mut c: Vec<char> = l.chars().collect();
            c[5] = if c[5] == 'A' { 'B' } else { 'A' };
            c.into_iter().collect()
        };
        let cases: Vec<(String, &str)> = vec![
            (damaged("bad.json", &good_doc, flip), "bad crc32"),
            (
                damaged("bad.json", &good_doc, |l| l[..l.len() - 4].to_string()),
                "bad length",
            ),
            (
                damaged("bad.json", &good_doc, |l| format!("{}!!!!", &l[4..])),
                "bad base64",
            ),
            (
                damaged("bad.json", &good_doc, |l| l[..l.len() - 3].to_string()),
                "bad base64",
            ),
            (
                encode("bad.json", &good_doc, N).replace(END, "lost"),
                "no BOOTBENCH-RESULT-END",
            ),
            (
                encode_v2("bad.json", &good_doc, N).replace(&format!("bytes={}", good_doc.len()), "bytes=7"),
                "bad length",
            ),
        ];
        for (bad, want) in cases {
            let log = announce(N) + &encode("a.json", &good_doc, N) + "noise\n" + &bad + &encode("c.json", b"{}", N);
            let got = decode(&log);
            assert_eq!(got.len(), 3, "{want}: {got:?}");
            assert_eq!(got[0].as_ref().unwrap().name, "a.json");
            let e = got[1].as_ref().unwrap_err();
            assert!(!e.is_refused(), "{want}: damaged, not refused");
            let msg = e.to_string();
            assert!(msg.contains(want) && msg.contains("bad.json"), "{want}: {msg}");
            assert_eq!(got[2].as_ref().unwrap().bytes, b"{}", "{want}");
        }
    }

    /// A version-3 frame whose DEFLATE stream or lengths do not agree with
    /// its header is damaged, with what is wrong; the frames around it
    /// decode.
    #[test]
    fn a_damaged_deflated_frame() {
        let json = doc(2000);
        let frame = encode("bad.json", &json, N);
        let d = deflate(&json).unwrap();
        let deflate_eq = format!("deflate={}", d.len());
        let bytes_eq = format!("bytes={}", json.len());
        // Not a DEFLATE stream: reserved block type 3 (RFC 1951 3.2.3).
        let junk = [0xff_u8; 30];
        let junk_frame = format!(
            "{BEGIN} v3 nonce={N} name=bad.json bytes={} deflate=30 crc32={:08x}\n{}\n{END}\n",
            json.len(),
            crc32(&json),
            base64_encode(&junk)
        );
        let lines: Vec<&str> = frame.lines().collect();
        let cut_short = format!(
            "{}\n{}\n{END}\n",
            lines[0].replace(&deflate_eq, &format!("deflate={}", LINE_BYTES)),
            lines[1]
        );
        let cases: Vec<(String, &str)> = vec![
            (
                frame.replace(&deflate_eq, "deflate=7"),
                "bad deflate: header says deflate=7",
            ),
            (frame.replace(&bytes_eq, "bytes=100"), "inflates to more than bytes=100"),
            (
                frame.replace(&bytes_eq, &format!("bytes={}", json.len() + 1)),
                "bad length",
            ),
            (
                frame.replace(&format!("crc32={:08x}", crc32(&json)), "crc32=00000000"),
                "bad crc32",
            ),
            (junk_frame, "not a DEFLATE stream"),
            (cut_short, "cut short"),
            (
                lines[0].replace(&format!(" {deflate_eq}"), "") + "\n" + &lines[1..].join("\n") + "\n",
                "deflate=",
            ),
        ];
        for (bad, want) in cases {
            let log = announce(N) + &encode("a.json", &json, N) + &bad + &encode("c.json", b"{}", N);
            let got = decode(&log);
            assert_eq!(got.len(), 3, "{want}: {got:?}");
            assert_eq!(got[0], good("a.json", &json, N), "{want}");
            let msg = got[1].as_ref().unwrap_err().to_string();
            assert!(msg.contains(want), "{want}: {msg}");
            assert_eq!(got[2], good("c.json", b"{}", N), "{want}");
        }
    }

    #[test]
    fn bad_headers() {
        let n = N.to_string();
        for (h, want) in [
            (
                "BOOTBENCH-RESULT-BEGIN v4 name=a bytes=2 crc32=00000000".to_string(),
                "v1, v2 or v3",
            ),
            (
                "BOOTBENCH-RESULT-BEGIN name=a bytes=2 crc32=00000000".to_string(),
                "v1, v2 or v3",
            ),
            (
                "BOOTBENCH-RESULT-BEGIN v3 name=a bytes=2 deflate=4 crc32=00000000".to_string(),
                "no nonce=",
            ),
            (
                format!("BOOTBENCH-RESULT-BEGIN v3 nonce={n} name=a bytes=2 crc32=00000000"),
                "deflate=",
            ),
            (
                "BOOTBENCH-RESULT-BEGIN v2 name=a bytes=2 crc32=00000000".to_string(),
                "no nonce=",
            ),
            (
                format!(
                    "BOOTBENCH-RESULT-BEGIN v2 nonce={} name=a bytes=2 crc32=00000000",
                    &n[..30]
                ),
                "32 hex",
            ),
            (
                format!("BOOTBENCH-RESULT-BEGIN v2 nonce={n} bytes=2 crc32=00000000"),
                "name=",
            ),
            (
                format!("BOOTBENCH-RESULT-BEGIN v2 nonce={n} name=a crc32=00000000"),
                "bytes=",
            ),
            (format!("BOOTBENCH-RESULT-BEGIN v2 nonce={n} name=a bytes=2"), "crc32="),
            ("BOOTBENCH-RESULT-BEGIN v1 bytes=2 crc32=00000000".to_string(), "name="),
        ] {
            let got = decode(&format!("{}{h}\ne30=\n{END}\n", announce(N)));
            let e = got[0].as_ref().unwrap_err();
            assert!(matches!(e, FrameError::BadHeader { .. }), "{h}: {e:?}");
            assert!(e.to_string().contains(want), "{h}: {e}");
        }
        // A good header for the same body decodes.
        let ok = format!(
            "{}{BEGIN} v2 nonce={n} name=a bytes=2 crc32={:08x}\ne30=\n{END}\n",
            announce(N),
            crc32(b"{}")
        );
        assert_eq!(decode(&ok), vec![good("a", b"{}", N)]);
    }

    /// What a device string looks like when a line of bootbench's or the
    /// kernel's prints it: the marker inside the line.
    #[test]
    fn a_marker_inside_a_line_is_text() {
        let json = doc(3);
        let frame = encode("forged.json", &json, N);
        for prefix in [
            "[    2.5] bootbench: /dev/sdb model ",
            "[    2.5] ata1.00: ATA-7: ",
            "x",
            "\u{1b}[0m",
        ] {
            let mut log = announce(N);
            for l in frame.lines() {
                log.push_str(prefix);
                log.push_str(l);
                log.push('\n');
            }
            assert!(decode(&log).is_empty(), "{prefix:?}: {:?}", decode(&log));
            // Only the header mid-line, the rest at line starts: still nothing.
            let half = announce(N) + prefix + &frame;
            assert!(decode(&half).is_empty(), "{prefix:?}");
        }
        // An END inside a body line does not end the frame there.
        let real = announce(N) + &encode("r.json", &json, N).replacen('\n', &format!("\nnoise {END}\n"), 1);
        assert!(matches!(decode(&real)[0], Err(FrameError::BadBase64 { .. })));
    }

    #[test]
    fn a_frame_needs_its_nonce_announced_before_it() {
        let json = doc(4);
        let cases: Vec<(&str, String, Result<Frame, FrameError>)> = vec![
            (
                "announced",
                announce(N) + "noise\n" + &encode("a.json", &json, N),
                good("a.json", &json, N),
            ),
            (
                "another nonce announced",
                announce(N) + &encode("a.json", &json, M),
                Err(FrameError::NotAnnounced {
                    name: "a.json".into(),
                    nonce: M,
                }),
            ),
            (
                "nothing announced",
                encode("a.json", &json, N),
                Err(FrameError::NotAnnounced {
                    name: "a.json".into(),
                    nonce: N,
                }),
            ),
            (
                "announced after the frame",
                encode("a.json", &json, N) + &announce(N),
                Err(FrameError::NotAnnounced {
                    name: "a.json".into(),
                    nonce: N,
                }),
            ),
            (
                "announce inside a line",
                format!("[ 1.0] bootbench: {}", announce(N)) + &encode("a.json", &json, N),
                Err(FrameError::NotAnnounced {
                    name: "a.json".into(),
                    nonce: N,
                }),
            ),
            (
                "announce of another version",
                announce(N).replace("v2", "v1") + &encode("a.json", &json, N),
                Err(FrameError::NotAnnounced {
                    name: "a.json".into(),
                    nonce: N,
                }),
            ),
            (
                "version 1",
                announce(N) + &encode_v1("a.json", &json),
                Err(FrameError::Unauthenticated { name: "a.json".into() }),
            ),
        ];
        for (what, log, want) in cases {
            assert_eq!(decode(&log), vec![want], "{what}");
        }
        // Version 1 when asked for.
        let v1 = decode_with(&encode_v1("a.json", &json), Options { accept_v1: true });
        assert_eq!(
            v1[0].frame,
            Ok(Frame {
                name: "a.json".into(),
                bytes: json.clone(),
                nonce: None
            })
        );
    }

    /// Thousands of boots in one log, the nonce rule for each: boots in
    /// turn are each their own, a forged announce and frame inside the last
    /// boot refuse both, frames of nonces announced nowhere are refused,
    /// and a nonce announced again keeps its first announce.
    #[test]
    fn many_boots_each_by_its_own_nonce() {
        let nonce = |i: u32| {
            let mut b = [0x5a; 16];
            b[..4].copy_from_slice(&i.to_le_bytes());
            Nonce(b)
        };
        let frame = |i: u32| encode("r.json", b"{}", nonce(i));
        let boots = 3000;
        let mut log = String::new();
        for i in 0..boots {
            log += &(announce(nonce(i)) + &frame(i));
        }
        for i in boots..2 * boots {
            log += &frame(i); // never announced
        }
        // The last boot, with a forged boot inside it.
        let (last, forged) = (nonce(2 * boots), nonce(2 * boots + 1));
        log += &(announce(last) + &announce(forged) + &frame(2 * boots + 1) + &frame(2 * boots));
        let got = decode(&log);
        assert_eq!(got.len(), 2 * boots as usize + 2);
        for i in 0..boots {
            assert_eq!(got[i as usize], good("r.json", b"{}", nonce(i)), "boot {i}");
        }
        for i in boots..2 * boots {
            assert_eq!(
                got[i as usize],
                Err(FrameError::NotAnnounced {
                    name: "r.json".into(),
                    nonce: nonce(i)
                })
            );
        }
        let n = 2 * boots as usize;
        assert_eq!(
            got[n..],
            [
                Err(FrameError::Overlap {
                    name: "r.json".into(),
                    nonce: forged,
                    other: last
                }),
                Err(FrameError::Overlap {
                    name: "r.json".into(),
                    nonce: last,
                    other: forged
                }),
            ]
        );
    }

    /// `bytes=` is capped at [`MAX_DOCUMENT`]: a byte past it is refused
    /// before the body is decoded (here a body that is not even base64),
    /// naming the frame, the claim and the cap; at the cap the body is
    /// decoded and checked (here it holds 2 bytes: a bad length).
    #[test]
    fn a_document_past_the_cap_is_refused_before_its_body_is_decoded() {
        let frame = |bytes: u64, body: &str| {
            format!(
                "{}{BEGIN} v2 nonce={N} name=big.json bytes={bytes} crc32={:08x}\n{body}\n{END}\n",
                announce(N),
                crc32(b"{}")
            )
        };
        let past = decode(&frame(MAX_DOCUMENT + 1, "!!!!"));
        assert_eq!(
            past,
            vec![Err(FrameError::TooLarge {
                name: "big.json".into(),
                bytes: MAX_DOCUMENT + 1
            })]
        );
        let e = past[0].as_ref().unwrap_err();
        assert!(e.is_refused());
        assert_eq!(
            e.to_string(),
            "frame big.json: refused: bytes=1073741825 claims more than 1073741824 bytes (1 GiB), the most a document may be"
        );
        assert_eq!(
            decode(&frame(MAX_DOCUMENT, "e30=")),
            vec![Err(FrameError::BadLength {
                name: "big.json".into(),
                expected: 1 << 30,
                got: 2
            })]
        );
        // A claim past u64 is a bad header.
        let e = decode(&frame(0, "e30=").replace("bytes=0", "bytes=99999999999999999999"));
        assert!(
            matches!(
                &e[0],
                Err(FrameError::BadHeader {
                    why: "bytes= out of range",
                    ..
                })
            ),
            "{e:?}"
        );
    }

    /// A checked frame's document reaches its writer a window (32 KiB) at
    /// a time, whole and as verified; a writer's error stops it and is
    /// returned; the scan itself holds no document.
    #[test]
    fn a_checked_frame_is_written_a_window_at_a_time() {
        let json = doc(200_000);
        assert!(json.len() > 1 << 20);
        let log = announce(N) + &encode("big.json", &json, N) + &encode_v2("old.json", &json, N);
        let scanned = scan(&log, Options::default());
        assert_eq!(scanned.len(), 2);
        let v3 = scanned[0].frame.as_ref().unwrap();
        assert_eq!(
            (v3.name(), v3.nonce(), v3.len()),
            ("big.json", Some(N), json.len() as u64)
        );
        let mut got = Vec::new();
        let mut largest = 0;
        v3.write_to(|b| {
            largest = largest.max(b.len());
            got.extend_from_slice(b);
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(got, json);
        assert!(largest <= WINDOW, "{largest}");
        let mut calls = 0;
        let stopped = v3.write_to(|_| {
            calls += 1;
            if calls == 3 {
                Err("disk full")
            } else {
                Ok(())
            }
        });
        assert_eq!((stopped, calls), (Err(Stop::Out("disk full")), 3));
        // Version 2: the document is the body itself, handed on once checked.
        let v2 = scanned[1].frame.as_ref().unwrap();
        assert_eq!(v2.to_frame(), good("old.json", &json, N));
    }

    type Decoded = Vec<Result<Frame, FrameError>>;

    /// The forgeries of the module doc, and real logs that look alike.
    #[test]
    fn boots_that_overlap_are_refused_boots_in_turn_are_not() {
        let real = doc(5);
        let fake = b"{\"forged\":true}".to_vec();
        let a = |n| announce(n);
        let r = |n| encode("real.json", &real, n);
        let f = |n| encode("forged.json", &fake, n);
        let overlap = |name: &str, nonce, other| {
            Err(FrameError::Overlap {
                name: name.into(),
                nonce,
                other,
            })
        };
        let cases: Vec<(&str, String, Decoded)> = vec![
            ("one boot", a(N) + &r(N), vec![good("real.json", &real, N)]),
            (
                "two boots in turn (on_finish reboot)",
                a(N) + &r(N) + &a(M) + &r(M),
                vec![good("real.json", &real, N), good("real.json", &real, M)],
            ),
            (
                "a boot announced twice",
                a(N) + &a(N) + &r(N) + &r(N),
                vec![good("real.json", &real, N), good("real.json", &real, N)],
            ),
            (
                "a forged frame with a guessed nonce",
                a(N) + &f(F) + &r(N),
                vec![
                    Err(FrameError::NotAnnounced {
                        name: "forged.json".into(),
                        nonce: F,
                    }),
                    good("real.json", &real, N),
                ],
            ),
            (
                "a forged announce alone",
                a(N) + &a(F) + &r(N),
                vec![good("real.json", &real, N)],
            ),
            (
                "a forged announce and frame inside the boot",
                a(N) + &a(F) + &f(F) + &r(N),
                vec![overlap("forged.json", F, N), overlap("real.json", N, F)],
            ),
            (
                "a forged announce before, its frame inside the boot",
                a(F) + &a(N) + &f(F) + &r(N),
                vec![overlap("forged.json", F, N), overlap("real.json", N, F)],
            ),
            (
                "a forged announce before, its frame after the boot's",
                a(F) + &a(N) + &r(N) + &f(F),
                vec![overlap("real.json", N, F), overlap("forged.json", F, N)],
            ),
            (
                "a forged announce inside, its frame after the boot's",
                a(N) + &a(F) + &r(N) + &f(F),
                vec![overlap("real.json", N, F), overlap("forged.json", F, N)],
            ),
            (
                "a whole forged boot before the real one (the limit)",
                a(F) + &f(F) + &a(N) + &r(N),
                vec![good("forged.json", &fake, F), good("real.json", &real, N)],
            ),
        ];
        for (what, log, want) in cases {
            assert_eq!(decode(&log), want, "{what}");
            let all = decode(&log);
            for e in all.iter().filter_map(|f| f.as_ref().err()) {
                assert!(e.is_refused(), "{what}: {e}");
                assert!(e.to_string().contains("refused"), "{what}: {e}");
            }
        }
    }
}
