//! The glob matcher of module aliases. kmod matches a modalias (or a name
//! given to modprobe) against the patterns of modules.alias with
//! `fnmatch(pattern, text, 0)` (libkmod-index.c); [`fnmatch`] answers as that
//! call does in glibc (Debian's kmod is built against it) in the C locale,
//! which is where kmod runs: byte by byte, ranges by byte value.
//!
//! With no flags, `/` and a leading `.` are ordinary bytes:
//!
//! - `*` any run of bytes, `?` any one byte, `\x` the byte `x`; a trailing
//!   `\` matches nothing;
//! - `[...]` one byte of a set of bytes (`a`, `\x`), ranges (`a-z`, ends by
//!   byte value, either end may be escaped), classes (`[:digit:]`, the twelve
//!   of the C locale) and the one-byte forms `[.x.]` and `[=x=]`; `!` or `^`
//!   first negates it; `]` first, or `-` first or last, stands for itself;
//! - a `[` that no `]` closes is an ordinary `[`; a malformed part that glibc
//!   refuses (an unknown class, `[.xy.]`, a range or escape cut off by the
//!   end of the pattern) matches nothing there.
//!
//! Checked against glibc 2.36's fnmatch on over a million pairs (every pattern
//! of up to four bytes from `[]!^-\*?:.=ab`, random longer ones with classes
//! and ranges) and on the aliases of Debian's 6.1 kernel. musl's
//! fnmatch (which PID 1 links, and does not use for this) differs in corners:
//! a trailing `\`, a `\` inside brackets, and a `[` whose range the end cuts
//! off are literal there. glibc honours `^` only while POSIXLY_CORRECT is
//! unset, as it is for kmod. Both stop at a NUL, so this does too.

/// Whether `text` matches the glob `pattern`, as `fnmatch(pattern, text, 0)`.
pub fn fnmatch(pattern: impl AsRef<[u8]>, text: impl AsRef<[u8]>) -> bool {
    matches(c_str(pattern.as_ref()), c_str(text.as_ref()))
}

/// A C string ends at its first NUL.
fn c_str(s: &[u8]) -> &[u8] {
    s.iter().position(|&b| b == 0).map_or(s, |end| &s[..end])
}

/// [`fnmatch`] on the bytes before any NUL.
fn matches(p: &[u8], t: &[u8]) -> bool {
    let (mut pi, mut ti) = (0, 0);
    // The last `*`: the pattern index after it, and the text index it has swallowed up to.
    // Every other element takes exactly one byte, so retrying only the last `*` is enough.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if p.get(pi) == Some(&b'*') {
            pi += 1;
            star = Some((pi, ti));
            continue;
        }
        if let Some(len) = element(&p[pi..], t[ti]) {
            pi += len;
            ti += 1;
            continue;
        }
        let Some((after, swallowed)) = star else {
            return false;
        };
        star = Some((after, swallowed + 1));
        pi = after;
        ti = swallowed + 1;
    }
    p[pi..].iter().all(|&b| b == b'*')
}

/// Matches the element at the start of `p` (anything but `*`) against the byte `c`: how many
/// pattern bytes it took, or None when it does not match (or there is no element).
fn element(p: &[u8], c: u8) -> Option<usize> {
    match *p.first()? {
        b'?' => Some(1),
        b'\\' => (*p.get(1)? == c).then_some(2),
        b'[' => match bracket(p, c) {
            Bracket::Closed { matched, len } => matched.then_some(len),
            Bracket::Unclosed => (c == b'[').then_some(1),
            Bracket::Refused => None,
        },
        b => (b == c).then_some(1),
    }
}

/// What a bracket expression makes of one byte.
enum Bracket {
    /// A whole expression, `len` bytes long, that does or does not match the byte.
    Closed { matched: bool, len: usize },
    /// No `]` closes it: the `[` is an ordinary byte.
    Unclosed,
    /// A malformed part that glibc refuses: no match here.
    Refused,
}

/// The bracket expression at the start of `p` (`p[0] == b'['`) against the byte `c`. As glibc
/// does, it reads items until one holds `c`, then only looks for the closing `]`; a malformed
/// part is refused only where it is read.
fn bracket(p: &[u8], c: u8) -> Bracket {
    let at = |k: usize| byte_at(p, k);
    let mut i = 1;
    let negate = matches!(at(i), b'!' | b'^');
    if negate {
        i += 1;
    }
    // `b` is the first byte of the next item (a `]` first is an item), `i` the index after it.
    let mut b = at(i);
    i += 1;
    let found = loop {
        let item = match b {
            0 => return Bracket::Unclosed,
            b'\\' => match at(i) {
                0 => return Bracket::Refused,
                e => {
                    i += 1;
                    Item::Byte(e)
                }
            },
            b'[' if at(i) == b':' => match class_name(p, i + 1) {
                ClassName::Known { is, end } => {
                    i = end;
                    Item::Set(is(c))
                }
                ClassName::Unknown => return Bracket::Refused,
                ClassName::Absent => Item::Byte(b'['),
            },
            b'[' if is_equivalence(p, i) => {
                let x = at(i + 1);
                i += 4;
                Item::Set(x == c)
            }
            b'[' if at(i) == b'.' => {
                let Some((sym, end)) = collating_symbol(p, i) else {
                    return Bracket::Refused;
                };
                i = end;
                // glibc tests `[.x.]` alone unless a `-` and anything follow (even a `]`).
                let range_follows = at(i) == b'-' && at(i + 1) != 0;
                if !range_follows && sym == c {
                    break true;
                }
                Item::Symbol(sym)
            }
            other => Item::Byte(other),
        };
        match item {
            Item::Set(true) => break true,
            Item::Set(false) | Item::Symbol(_) => {}
            Item::Byte(lo) => {
                // `lo` alone, unless a range `lo-hi` follows (in `lo-]` the `-` is a byte).
                let range_follows = at(i) == b'-' && at(i + 1) != 0 && at(i + 1) != b']';
                if !range_follows && lo == c {
                    break true;
                }
            }
        }
        (b, i) = (at(i), i + 1);
        if let (Item::Byte(lo) | Item::Symbol(lo), b'-') = (item, b) {
            if at(i) != b']' {
                let Some(hi) = range_end(p, &mut i) else {
                    return Bracket::Refused;
                };
                if (lo..=hi).contains(&c) {
                    break true;
                }
                (b, i) = (at(i), i + 1);
            }
        }
        if b == b']' {
            break false;
        }
    };
    let len = if found {
        match skip_to_close(p, i) {
            Ok(len) => len,
            Err(outcome) => return outcome,
        }
    } else {
        i
    };
    Bracket::Closed {
        matched: found != negate,
        len,
    }
}

/// `p[k]`, or past the end the NUL that ends a C string.
fn byte_at(p: &[u8], k: usize) -> u8 {
    p.get(k).copied().unwrap_or(0)
}

/// One item of a bracket expression, read.
#[derive(Clone, Copy)]
enum Item {
    /// A class or an equivalence class: whether it holds the byte.
    Set(bool),
    /// A byte (maybe escaped) that may start a range.
    Byte(u8),
    /// A collating symbol `[.x.]`, already compared alone, that may start a range.
    Symbol(u8),
}

/// What follows `[:` in a bracket expression.
enum ClassName {
    /// A class of the C locale, and the index after its `:]`.
    Known { is: fn(u8) -> bool, end: usize },
    /// Letters closed by `:]` that name no class.
    Unknown,
    /// A byte that cannot be in a name comes before `:]`: the `[` is an ordinary byte.
    Absent,
}

/// Whether `b` may be in a class name as glibc reads one: `a` to `y` (no class has a `z`).
fn name_byte(b: u8) -> bool {
    (b'a'..=b'y').contains(&b)
}

/// Where the name starting at `p[start]` (after `[:`) ends: the index of the `:` of its `:]`;
/// None when a byte that cannot be in a name comes first.
fn name_end(p: &[u8], start: usize) -> Option<usize> {
    let mut k = start;
    loop {
        let b = byte_at(p, k);
        if b == b':' && byte_at(p, k + 1) == b']' {
            return Some(k);
        }
        if !name_byte(b) {
            return None;
        }
        k += 1;
    }
}

/// The class name starting at `p[start]` (after `[:`).
fn class_name(p: &[u8], start: usize) -> ClassName {
    let Some(k) = name_end(p, start) else {
        return ClassName::Absent;
    };
    let is: fn(u8) -> bool = match &p[start..k] {
        b"alnum" => |c| c.is_ascii_alphanumeric(),
        b"alpha" => |c| c.is_ascii_alphabetic(),
        b"blank" => |c| c == b' ' || c == b'\t',
        b"cntrl" => |c| c.is_ascii_control(),
        b"digit" => |c| c.is_ascii_digit(),
        b"graph" => |c| c.is_ascii_graphic(),
        b"lower" => |c| c.is_ascii_lowercase(),
        b"print" => |c| c.is_ascii_graphic() || c == b' ',
        b"punct" => |c| c.is_ascii_punctuation(),
        // C's isspace: also the vertical tab, which is_ascii_whitespace leaves out.
        b"space" => |c| matches!(c, b' ' | b'\t'..=b'\r'),
        b"upper" => |c| c.is_ascii_uppercase(),
        b"xdigit" => |c| c.is_ascii_hexdigit(),
        _ => return ClassName::Unknown,
    };
    ClassName::Known { is, end: k + 2 }
}

/// The collating symbol `[.x.]` whose `.` is `p[dot]`: its one byte and the index after it;
/// None when it is not closed or (in the C locale, which has no multi-byte symbols) is not
/// one byte.
fn collating_symbol(p: &[u8], dot: usize) -> Option<(u8, usize)> {
    let k = symbol_end(p, dot)?;
    (k == dot + 2).then(|| (p[dot + 1], k + 2))
}

/// Where the collating symbol whose `.` is `p[dot]` ends: the index of the `.` of its `.]`;
/// None when the pattern ends first.
fn symbol_end(p: &[u8], dot: usize) -> Option<usize> {
    let mut k = dot + 1;
    loop {
        match byte_at(p, k) {
            0 => return None,
            b'.' if byte_at(p, k + 1) == b']' => return Some(k),
            _ => k += 1,
        }
    }
}

/// Whether `p[eq]` (after a `[`) starts an equivalence class `=x=]` of one byte.
fn is_equivalence(p: &[u8], eq: usize) -> bool {
    byte_at(p, eq) == b'=' && byte_at(p, eq + 1) != 0 && byte_at(p, eq + 2) == b'=' && byte_at(p, eq + 3) == b']'
}

/// The upper end of a range at `p[*i]` (after the `-`), moving `i` past it; None when the
/// pattern ends first.
fn range_end(p: &[u8], i: &mut usize) -> Option<u8> {
    if byte_at(p, *i) == b'[' && byte_at(p, *i + 1) == b'.' {
        let (sym, end) = collating_symbol(p, *i + 1)?;
        *i = end;
        return Some(sym);
    }
    if byte_at(p, *i) == b'\\' {
        *i += 1;
    }
    let hi = byte_at(p, *i);
    *i += 1;
    (hi != 0).then_some(hi)
}

/// After an item that matched: the length of the expression up to its closing `]` from
/// `p[i]` on, or what to make of it when there is none or a part is malformed.
fn skip_to_close(p: &[u8], mut i: usize) -> Result<usize, Bracket> {
    loop {
        let b = byte_at(p, i);
        i += 1;
        match b {
            0 => return Err(Bracket::Unclosed),
            b']' => return Ok(i),
            b'\\' => {
                if byte_at(p, i) == 0 {
                    return Err(Bracket::Refused);
                }
                i += 1;
            }
            b'[' if byte_at(p, i) == b':' => {
                // Past the `:]` of a name (known or not), else on from the `:`.
                if let Some(k) = name_end(p, i + 1) {
                    i = k + 2;
                }
            }
            // Here a malformed `[=` is refused (while items are read, it is a `[`).
            b'[' if byte_at(p, i) == b'=' => {
                if !is_equivalence(p, i) {
                    return Err(Bracket::Refused);
                }
                i += 4;
            }
            b'[' if byte_at(p, i) == b'.' => match symbol_end(p, i) {
                Some(k) => i = k + 2,
                None => return Err(Bracket::Refused),
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fnmatch;

    /// (pattern, text, match?) as glibc's `fnmatch(pattern, text, 0)` answers in the C locale
    /// (every row checked against it).
    const CASES: &[(&str, &str, bool)] = &[
        // Literals: the whole text, nothing more or less.
        ("crc32c", "crc32c", true),
        ("abc", "abcd", false),
        ("abcd", "abc", false),
        ("", "", true),
        ("", "a", false),
        // `*`: any run of bytes, `/` and a leading `.` included.
        ("*", "", true),
        ("*", "anything/at:all", true),
        ("*", ".hidden", true),
        ("a*", "a", true),
        ("a*c", "abbbc", true),
        ("a*c", "abbbd", false),
        ("a*b*c", "axxbyyc", true),
        ("a*b*c", "axxcyyb", false),
        ("*ab", "aab", true),
        ("**a**", "xa", true),
        ("a*b", "a/b", true),
        // `?`: exactly one byte.
        ("?", "x", true),
        ("?", "", false),
        ("a?c", "abc", true),
        ("a?c", "ac", false),
        ("??", "a/", true),
        ("?x", ".x", true),
        // `\`: the next byte as it is; a trailing `\` matches nothing.
        ("\\*", "*", true),
        ("\\*", "a", false),
        ("\\?", "?", true),
        ("\\?", "x", false),
        ("\\[a]", "[a]", true),
        ("\\[a]", "a", false),
        ("a\\\\b", "a\\b", true),
        ("\\a", "a", true),
        ("\\", "\\", false),
        ("a\\", "a\\", false),
        ("a\\", "a", false),
        ("*\\", "x\\", false),
        // Sets, ranges, negation.
        ("[abc]", "b", true),
        ("[abc]", "d", false),
        ("[a-c]x", "bx", true),
        ("[a-c]x", "dx", false),
        ("[!a-z]", "A", true),
        ("[!a-z]", "q", false),
        ("[^0-9]", "z", true),
        ("[^0-9]", "5", false),
        ("[z-a]", "m", false),
        ("[a-c-e]", "-", true),
        ("[a-c-e]", "d", false),
        // `]` first is a member; `-` first or last is a member.
        ("[]abc]", "]", true),
        ("[]abc]", "b", true),
        ("[]abc]", "d", false),
        ("[!]abc]", "]", false),
        ("[!]abc]", "d", true),
        ("[]-a]", "^", true),
        ("[a-]", "-", true),
        ("[-a]", "-", true),
        // `\` inside brackets escapes too, also either end of a range.
        ("[\\]]", "]", true),
        ("[\\]]", "\\", false),
        ("[a\\-z]", "-", true),
        ("[a\\-z]", "b", false),
        ("[!\\!]", "!", false),
        ("[a-\\z]", "m", true),
        ("[\\a-c]", "b", true),
        // Classes of the C locale, and the one-byte `[=x=]` and `[.x.]`.
        ("[[:digit:]]", "7", true),
        ("[[:digit:]]", "x", false),
        ("[![:digit:]]", "x", true),
        ("[[:alpha:][:digit:]_]", "_", true),
        ("[[:xdigit:]]", "F", true),
        ("[[:xdigit:]]", "g", false),
        ("[[:space:]]", "\x0b", true),
        ("[[:upper:]]", "a", false),
        ("[[:foo:]]", "f", false),
        ("[a[:foo:]]", "a", true),
        ("[[:a]", ":", true),
        ("[[=a=]]", "a", true),
        ("[[.-.]a]", "-", true),
        ("[[.ab.]]", "a", false),
        // A `[` that no `]` closes is an ordinary `[`.
        ("[", "[", true),
        ("[", "a", false),
        ("[ab", "[ab", true),
        ("[ab", "a", false),
        ("[!", "[!", true),
        ("[!]", "[!]", true),
        ("[]", "[]", true),
        ("[[ab", "[[ab", true),
        ("a[", "a[", true),
        ("*[", "x[", true),
        // ... but a range or an escape cut off by the end matches nothing.
        ("[a-", "[a-", false),
        ("[\\", "[\\", false),
        // Real aliases (modules.alias) and modaliases (sysfs).
        (
            "pci:v*d*sv*sd*bc01sc06i01*",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
            true,
        ),
        (
            "pci:v*d*sv*sd*bc01sc06i01*",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc08i02",
            false,
        ),
        (
            "pci:v00008086d00002922sv*sd*bc*sc*i*",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
            true,
        ),
        (
            "pci:v00001AF4d*sv*sd*bc*sc*i*",
            "pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01",
            false,
        ),
        ("virtio:d00000002v*", "virtio:d00000002v00001AF4", true),
        ("virtio:d00000002v*", "virtio:d00000001v00001AF4", false),
        (
            "usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*",
            "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00",
            true,
        ),
        (
            "usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*",
            "usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip62in00",
            false,
        ),
        (
            "usb:v04CEp0002d026[0-9A-B]dc*dsc*dp*ic*isc*ip*in*",
            "usb:v04CEp0002d026Adc00dsc00dp00ic08isc06ip50in00",
            true,
        ),
        (
            "usb:v04CEp0002d026[0-9A-B]dc*dsc*dp*ic*isc*ip*in*",
            "usb:v04CEp0002d026Cdc00dsc00dp00ic08isc06ip50in00",
            false,
        ),
        (
            "dmi:*:[bs]vnD[Ee][Ll][Ll]*:*",
            "dmi:bvnDell Inc.:bvr1.0:svnDell Inc.:",
            true,
        ),
        ("scsi:t-0x0[04]*", "scsi:t-0x04", true),
        ("scsi:t-0x0[04]*", "scsi:t-0x05", false),
        ("acpi*:PNP0A03:*", "acpi:PNP0A03:", true),
        ("crc32c", "crypto-crc32c", false),
    ];

    #[test]
    fn fnmatch_table() {
        for &(pattern, text, want) in CASES {
            assert_eq!(fnmatch(pattern, text), want, "pattern {pattern:?} text {text:?}");
        }
    }

    #[test]
    fn stops_at_a_nul_and_takes_bytes() {
        assert!(fnmatch("ab\0c", "ab"));
        assert!(fnmatch(b"a?c".as_slice(), b"a\xffc".as_slice()));
        assert!(fnmatch("[[:alpha:]]", "a") && !fnmatch("[[:alpha:]]", "\u{e9}"));
    }
}
