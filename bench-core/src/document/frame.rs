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
//! [`crate::vocab::console::safe`], which escapes line breaks and the marker word,
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
pub(crate) mod tests;
