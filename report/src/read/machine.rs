//! What names the machine a result document comes from: its DMI product
//! serial, else its host name, else its file name ([`machine_id`]), and its
//! model ([`host_model`]). `fleet`, the exports and OCP TV name machines
//! the same way.

use bench_core::document::result::Host;

use crate::read::Loaded;

/// What tells a machine from the others (in the order the reports list
/// machines by: serials, then host names, then file names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IdBy {
    /// The DMI product serial.
    Serial,
    /// The host name.
    Hostname,
    /// The document's file name (neither of the others is known).
    File,
}

impl IdBy {
    /// The word the reports give.
    pub const fn word(self) -> &'static str {
        match self {
            IdBy::Serial => "serial",
            IdBy::Hostname => "hostname",
            IdBy::File => "file",
        }
    }
}

/// DMI strings that firmware gives when the maker filled in nothing
/// (compared without case): no serial, no model.
const DMI_PLACEHOLDERS: [&str; 18] = [
    "to be filled by o.e.m.",
    "to be filled by oem",
    "default string",
    "system serial number",
    "system product name",
    "chassis serial number",
    "serial number",
    "not specified",
    "not applicable",
    "not available",
    "none",
    "n/a",
    "na",
    "unknown",
    "invalid",
    "oem",
    "0123456789",
    "123456789",
];

/// Host names that name no machine: the kernel's when none was set (a
/// booted stick's), and the loopback names.
const HOSTNAME_PLACEHOLDERS: [&str; 3] = ["(none)", "localhost", "localhost.localdomain"];

/// `s` trimmed, unless it is empty, one of `placeholders` (without case)
/// or one character, alone or repeated (`0`, `0000000`, `XXXXXXXX`).
fn real<'a>(s: Option<&'a str>, placeholders: &[&str]) -> Option<&'a str> {
    let s = s?.trim();
    let mut chars = s.chars();
    let first = chars.next()?;
    let repeated = chars.all(|c| c == first);
    let placeholder = placeholders.iter().any(|p| p.eq_ignore_ascii_case(s));
    (!repeated && !placeholder).then_some(s)
}

/// The machine a document comes from: its DMI product serial, else its
/// host name, else its file name (see the module docs).
pub fn machine_id(l: &Loaded) -> (IdBy, String) {
    let h = &l.doc.host;
    if let Some(s) = real(h.product_serial.as_deref(), &DMI_PLACEHOLDERS) {
        (IdBy::Serial, s.to_owned())
    } else if let Some(n) = real(h.hostname.as_deref(), &HOSTNAME_PLACEHOLDERS) {
        (IdBy::Hostname, n.to_owned())
    } else {
        (IdBy::File, l.file.clone())
    }
}

/// The machine's model: DMI vendor and product (`Dell Inc. PowerEdge
/// R640`), the product alone when the vendor is unknown or already in it;
/// `None` without a product name.
pub fn host_model(h: &Host) -> Option<String> {
    let product = real(h.product_name.as_deref(), &DMI_PLACEHOLDERS)?;
    Some(match real(h.sys_vendor.as_deref(), &DMI_PLACEHOLDERS) {
        Some(v) if !product.to_lowercase().starts_with(&v.to_lowercase()) => format!("{v} {product}"),
        _ => product.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_name_no_machine() {
        for (s, want) in [
            (Some("CZ1234"), Some("CZ1234")),
            (Some("  CZ1234 "), Some("CZ1234")),
            (Some("To Be Filled By O.E.M."), None),
            (Some("default STRING"), None),
            (Some("0000000000"), None),
            (Some("XXXXXXXX"), None),
            (Some("0"), None),
            (Some("A1"), Some("A1")),
            (Some(""), None),
            (Some("   "), None),
            (None, None),
        ] {
            assert_eq!(real(s, &DMI_PLACEHOLDERS), want, "{s:?}");
        }
        assert_eq!(real(Some("(none)"), &HOSTNAME_PLACEHOLDERS), None);
        assert_eq!(real(Some("rack1-07"), &HOSTNAME_PLACEHOLDERS), Some("rack1-07"));
    }

    #[test]
    fn host_models() {
        let h = |v: Option<&str>, p: Option<&str>| Host {
            sys_vendor: v.map(String::from),
            product_name: p.map(String::from),
            ..Host::default()
        };
        for (v, p, want) in [
            (
                Some("Dell Inc."),
                Some("PowerEdge R640"),
                Some("Dell Inc. PowerEdge R640"),
            ),
            (
                Some("HPE"),
                Some("HPE ProLiant DL380 Gen10"),
                Some("HPE ProLiant DL380 Gen10"),
            ),
            (None, Some("X11DPi-N"), Some("X11DPi-N")),
            (Some("Supermicro"), Some("To Be Filled By O.E.M."), None),
            (Some("QEMU"), None, None),
        ] {
            assert_eq!(host_model(&h(v, p)).as_deref(), want, "{v:?} {p:?}");
        }
    }
}
