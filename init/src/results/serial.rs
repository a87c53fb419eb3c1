//! The serial ports the results go to besides the console.
//!
//! A server's BMC takes serial-over-LAN from one of its UARTs, and Dell
//! iDRAC, HPE iLO and Supermicro put it on COM2 (`ttyS1`) by default,
//! while the kernel's console is usually `ttyS0` or the screen. So the
//! frames (and the announce line and the table) go to /dev/console and to
//! every other serial port that has a UART: a `ttySN` whose
//! `/sys/class/tty/ttySN/type` is not 0 (`PORT_UNKNOWN`: the 8250 driver
//! registers four legacy ports whether or not they exist), leaving out the
//! ports the console already writes to (`/sys/class/tty/console/active`),
//! so no port gets a frame twice. `bootbench.serial=` on the kernel command
//! line names the ports instead (`ttyS1,ttyS2`), or `none`.
//!
//! Each port is opened without waiting for carrier (`O_NONBLOCK`, then
//! `CLOCAL` and back to blocking writes), at 115200 baud 8N1 without flow
//! control, output post-processed as the console's (`\n` as `\r\n`).

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;

use nix::sys::termios::{self, BaudRate, ControlFlags, OutputFlags, SetArg};

/// True for a name a serial port may have: `tty`, then letters and
/// digits ending in a digit (`ttyS1`, `ttyAMA0`, `ttyUSB0`), at most 16.
pub fn is_port_name(n: &str) -> bool {
    n.starts_with("tty")
        && n.len() > 3
        && n.len() <= 16
        && n.bytes().all(|b| b.is_ascii_alphanumeric())
        && n.bytes().last().is_some_and(|b| b.is_ascii_digit())
}

/// Which ports, from `bootbench.serial=` (absent: every UART).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Every serial port with a UART that the console does not write to.
    Every,
    /// No port but the console.
    None,
    /// These ports (`ttyS1`), the console's left out.
    Named(Vec<String>),
}

impl Choice {
    /// `bootbench.serial=`'s value: `none`, or a comma-separated list of
    /// `ttySN` / `ttyAMAN` / `ttyUSBN`-like names; `Err` names the value and
    /// what is expected.
    pub fn parse(v: &str) -> Result<Choice, String> {
        if v == "none" {
            return Ok(Choice::None);
        }
        let names: Vec<String> = v.split(',').map(str::to_string).collect();
        match names.iter().find(|n| !is_port_name(n)) {
            Some(bad) => Err(format!(
                "bootbench.serial: {bad:?} is not a serial port; expected none or names like ttyS1, comma-separated"
            )),
            None => Ok(Choice::Named(names)),
        }
    }
}

/// The ports to write to besides the console, from the sysfs tree `sys`
/// (`/sys`): the chosen ones (or every `ttyS*` with a UART), minus those
/// in the console's `active` list, in name order.
pub fn ports_in(sys: &Path, choice: &Choice) -> Vec<String> {
    let class = sys.join("class/tty");
    let active: Vec<String> = std::fs::read_to_string(class.join("console/active"))
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let mut ports: Vec<String> = match choice {
        Choice::None => Vec::new(),
        Choice::Named(n) => n.clone(),
        Choice::Every => std::fs::read_dir(&class)
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with("ttyS"))
                    .filter(|n| {
                        std::fs::read_to_string(class.join(n).join("type"))
                            .is_ok_and(|t| t.trim().parse::<u32>().is_ok_and(|t| t != 0))
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    ports.retain(|p| !active.contains(p));
    ports.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
    ports.dedup();
    ports
}

/// Open `/dev/NAME` for writing, without waiting for carrier, at 115200
/// 8N1, no flow control, `\n` written as `\r\n`.
pub fn open(name: &str) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(format!("/dev/{name}"))?;
    let mut t = termios::tcgetattr(f.as_fd()).map_err(io::Error::from)?;
    termios::cfmakeraw(&mut t);
    t.output_flags |= OutputFlags::OPOST | OutputFlags::ONLCR;
    t.control_flags |= ControlFlags::CLOCAL | ControlFlags::CREAD | ControlFlags::CS8;
    t.control_flags &= !(ControlFlags::CRTSCTS | ControlFlags::PARENB | ControlFlags::CSTOPB);
    termios::cfsetspeed(&mut t, BaudRate::B115200).map_err(io::Error::from)?;
    termios::tcsetattr(f.as_fd(), SetArg::TCSANOW, &t).map_err(io::Error::from)?;
    // Carrier no longer matters (CLOCAL): block on writes as the console does.
    let fl = nix::fcntl::fcntl(f.as_raw_fd(), nix::fcntl::FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let fl = nix::fcntl::OFlag::from_bits_truncate(fl) & !nix::fcntl::OFlag::O_NONBLOCK;
    nix::fcntl::fcntl(f.as_raw_fd(), nix::fcntl::FcntlArg::F_SETFL(fl)).map_err(io::Error::from)?;
    Ok(f)
}

/// Writes to the console and to every other port: what the console gets,
/// each port gets too. A port whose write fails is dropped, and said once on
/// the console with the error ([`Tee::flush`]: between a frame and the table,
/// never inside a frame's lines); the console's result is the writer's.
pub struct Tee<W> {
    console: W,
    ports: Vec<(String, File)>,
    /// Ports dropped after a failed write, with the error.
    pub dropped: Vec<String>,
    /// How many of `dropped` the console has been told of.
    told: usize,
    /// Whether the console's last byte ended a line (where a message may start).
    at_line_start: bool,
}

impl<W> std::fmt::Debug for Tee<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ports: Vec<&str> = self.ports.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Tee")
            .field("ports", &ports)
            .field("dropped", &self.dropped)
            .finish_non_exhaustive()
    }
}

impl<W: Write> Tee<W> {
    /// `console` and the opened `ports`.
    pub fn new(console: W, ports: Vec<(String, File)>) -> Tee<W> {
        Tee {
            console,
            ports,
            dropped: Vec::new(),
            told: 0,
            at_line_start: true,
        }
    }

    /// The console message for a dropped port (`"ttyS1: <error>"`).
    pub fn dropped_message(dropped: &str) -> String {
        format!("bootbench: serial port {dropped}; the results are no longer written there\n")
    }

    /// Say each port dropped since the last call on the console, once, on a
    /// line of its own.
    fn tell_dropped(&mut self) -> io::Result<()> {
        while self.told < self.dropped.len() {
            let msg = Self::dropped_message(&self.dropped[self.told]);
            if !self.at_line_start {
                self.console.write_all(b"\n")?;
            }
            self.console.write_all(msg.as_bytes())?;
            self.at_line_start = true;
            self.told += 1;
        }
        Ok(())
    }

    /// The ports written to, by name.
    pub fn port_names(&self) -> Vec<&str> {
        self.ports.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn each_port(&mut self, f: &mut dyn FnMut(&mut File) -> io::Result<()>) {
        let mut i = 0;
        while i < self.ports.len() {
            match f(&mut self.ports[i].1) {
                Ok(()) => i += 1,
                Err(e) => {
                    let (name, _) = self.ports.remove(i);
                    self.dropped.push(format!("{name}: {e}"));
                }
            }
        }
    }
}

impl<W: Write> Write for Tee<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.console.write(buf)?;
        if n > 0 {
            self.at_line_start = buf[n - 1] == b'\n';
        }
        self.each_port(&mut |p| p.write_all(&buf[..n]));
        Ok(n)
    }

    /// Flush every port and the console, then say on the console which
    /// ports were dropped since the last flush. The frame encoder writes
    /// whole lines and the callers flush after a frame and after the table,
    /// so the message never lands inside a frame.
    fn flush(&mut self) -> io::Result<()> {
        self.each_port(&mut |p| p.flush());
        self.tell_dropped()?;
        self.console.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_from_the_command_line() {
        assert_eq!(Choice::parse("none"), Ok(Choice::None));
        assert_eq!(
            Choice::parse("ttyS1,ttyS2"),
            Ok(Choice::Named(vec!["ttyS1".into(), "ttyS2".into()]))
        );
        let e = Choice::parse("ttyS1,/dev/sda").unwrap_err();
        assert_eq!(
            e,
            "bootbench.serial: \"/dev/sda\" is not a serial port; expected none or names like ttyS1, comma-separated"
        );
        assert!(Choice::parse("").is_err());
        assert!(Choice::parse("tty").is_err());
    }

    /// Every ttyS with a UART but the console's: ttyS0 is the console,
    /// ttyS1 and ttyS10 have UARTs, ttyS2 and ttyS3 are the 8250 driver's
    /// placeholders (type 0); named ports skip the console's too.
    #[test]
    fn every_uart_but_the_consoles() {
        let t = crate::testutil::TempDir::new("serial-ports");
        let class = t.0.join("class/tty");
        for (name, ty) in [
            ("ttyS0", 4),
            ("ttyS1", 4),
            ("ttyS2", 0),
            ("ttyS3", 0),
            ("ttyS10", 4),
            ("tty1", 0),
        ] {
            std::fs::create_dir_all(class.join(name)).unwrap();
            std::fs::write(class.join(name).join("type"), format!("{ty}\n")).unwrap();
        }
        std::fs::create_dir_all(class.join("console")).unwrap();
        std::fs::write(class.join("console/active"), "tty0 ttyS0\n").unwrap();
        assert_eq!(ports_in(&t.0, &Choice::Every), ["ttyS1", "ttyS10"]);
        assert!(ports_in(&t.0, &Choice::None).is_empty());
        let named = Choice::Named(vec!["ttyS0".into(), "ttyS2".into()]);
        assert_eq!(ports_in(&t.0, &named), ["ttyS2"], "the console's left out");
    }

    /// What the console gets each port gets; a port that fails is dropped
    /// and the console goes on.
    #[test]
    fn a_tee_copies_the_console_to_each_port() {
        let t = crate::testutil::TempDir::new("serial-tee");
        let p = t.0.join("port");
        let port = File::create(&p).unwrap();
        let bad = File::open(&p).unwrap(); // read-only: writes fail
        let mut console = Vec::new();
        let dropped;
        {
            let mut tee = Tee::new(&mut console, vec![("ttyS1".into(), port), ("ttyS2".into(), bad)]);
            tee.write_all(b"BOOTBENCH frame\n").unwrap();
            tee.flush().unwrap();
            assert_eq!(tee.port_names(), ["ttyS1"]);
            assert_eq!(tee.dropped.len(), 1, "{:?}", tee.dropped);
            assert!(tee.dropped[0].starts_with("ttyS2: "));
            dropped = tee.dropped[0].clone();
            // Later writes and flushes do not say it again.
            tee.write_all(b"table").unwrap();
            tee.flush().unwrap();
        }
        // The console was told once, with the error (EBADF: written through a read-only fd).
        let ebadf = io::Error::from_raw_os_error(libc::EBADF).to_string();
        assert_eq!(dropped, format!("ttyS2: {ebadf}"));
        let told = format!("bootbench: serial port ttyS2: {ebadf}; the results are no longer written there\n");
        assert_eq!(
            String::from_utf8(console).unwrap(),
            format!("BOOTBENCH frame\n{told}table")
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"BOOTBENCH frame\ntable");
    }

    /// A port that fails mid-line is said on a line of its own, after the
    /// flush, never inside what was being written (a frame's line).
    #[test]
    fn a_dropped_port_is_said_at_a_line_start_after_the_flush() {
        let t = crate::testutil::TempDir::new("serial-tee-mid");
        let p = t.0.join("port");
        File::create(&p).unwrap();
        let bad = File::open(&p).unwrap();
        let mut console = Vec::new();
        {
            let mut tee = Tee::new(&mut console, vec![("ttyS3".into(), bad)]);
            tee.write_all(b"QUJD").unwrap();
            tee.write_all(b"REVG\nBOOTBENCH-RESULT-END").unwrap();
            assert_eq!(tee.dropped.len(), 1);
            tee.flush().unwrap();
        }
        let text = String::from_utf8(console).unwrap();
        let (before, message) = text.split_once("\nbootbench: serial port ttyS3: ").expect(&text);
        assert_eq!(
            before, "QUJDREVG\nBOOTBENCH-RESULT-END",
            "nothing was said inside the writes"
        );
        assert!(
            message.ends_with("; the results are no longer written there\n"),
            "{text:?}"
        );
    }
}
