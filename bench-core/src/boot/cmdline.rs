//! The kernel command line's `bootbench.*` keys: the one list the image
//! (which writes them into the boot loader's entries and the netboot
//! script) and PID 1 (which reads them) both use. As the kernel does for
//! parameter names, PID 1 takes `-` and `_` in a key as the same.

use alloc::string::String;
use core::fmt;

/// Every key's prefix.
pub const PREFIX: &str = "bootbench.";

/// A `bootbench.*` key of the kernel command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// The profile, over the config's.
    Profile,
    /// `poweroff`, `reboot` or `halt` after an unattended run, over the config's.
    OnFinish,
    /// Where the config comes from (http or https).
    ConfigUrl,
    /// Where each result document is PUT, over the config's `results_url`.
    ResultsUrl,
    /// The Pushgateway the run is pushed to, over the config's `metrics_url`.
    MetricsUrl,
    /// Where the run GETs a verifier's nonce for its TPM quote (hex).
    NonceUrl,
    /// `1`: run again although this machine ran this plan already.
    Force,
    /// A fixed address instead of DHCP (`ADDR/PREFIX[,GATEWAY[,DNS]]`).
    Ip,
    /// The serial ports the results go to, over the config's `serial_ports`.
    Serial,
    /// The stick's FAT volume ID, which the image writes into its entries.
    Stick,
    /// The GPT partition GRUB booted from (`$bootbench_part`).
    BootPart,
    /// Modules to load with the drivers although no device asks for them
    /// (`scsi_debug,foo`: an out-of-tree or rarely needed driver the image
    /// carries); their parameters come as modprobe's do (`scsi_debug.zbc=managed`).
    Modules,
    /// Test only: panic after the first test.
    TestPanic,
    /// Test only: hold in the middle of writing the result.
    TestHold,
    /// Test only: abort after the first test.
    TestAbort,
}

impl Key {
    /// Every key.
    pub const ALL: [Key; 15] = [
        Key::Profile,
        Key::OnFinish,
        Key::ConfigUrl,
        Key::ResultsUrl,
        Key::MetricsUrl,
        Key::NonceUrl,
        Key::Force,
        Key::Ip,
        Key::Serial,
        Key::Stick,
        Key::BootPart,
        Key::Modules,
        Key::TestPanic,
        Key::TestHold,
        Key::TestAbort,
    ];

    /// Its name after the prefix: `profile`, `config_url`, ...
    pub const fn name(self) -> &'static str {
        match self {
            Key::Profile => "profile",
            Key::OnFinish => "on_finish",
            Key::ConfigUrl => "config_url",
            Key::ResultsUrl => "results_url",
            Key::MetricsUrl => "metrics_url",
            Key::NonceUrl => "nonce_url",
            Key::Force => "force",
            Key::Ip => "ip",
            Key::Serial => "serial",
            Key::Stick => "stick",
            Key::BootPart => "boot_part",
            Key::Modules => "modules",
            Key::TestPanic => "test_panic",
            Key::TestHold => "test_hold",
            Key::TestAbort => "test_abort",
        }
    }

    /// `bootbench.<name>=<value>`, as a kernel parameter.
    pub fn with(self, value: &str) -> String {
        alloc::format!("{self}={value}")
    }
}

impl fmt::Display for Key {
    /// The parameter's name: `bootbench.profile`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_named_once_and_apart() {
        let mut names: alloc::vec::Vec<&str> = Key::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Key::ALL.len());
        assert_eq!(alloc::format!("{}", Key::ConfigUrl), "bootbench.config_url");
        assert_eq!(Key::ResultsUrl.with("http://h/r"), "bootbench.results_url=http://h/r");
        assert!(Key::ALL
            .iter()
            .all(|k| k.name().bytes().all(|b| b.is_ascii_lowercase() || b == b'_')));
    }
}
