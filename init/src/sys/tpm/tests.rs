//! The client against a real TPM engine: Debian's swtpm (TPM 2.0), on its
//! TCP port (the raw command stream the kernel's device takes too), and
//! tpm2-tools' `tpm2_checkquote` as the independent check of a quote.
//! Both are `.ci/deps` packages (`swtpm`, `tpm2-tools`).

use super::*;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A fresh swtpm (its state in a new directory), killed when dropped.
struct Swtpm {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Drop for Swtpm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn swtpm(name: &str) -> Swtpm {
    let dir = std::env::temp_dir().join(format!("bootbench-swtpm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (port, ctrl) = (free_port(), free_port());
    let child = Command::new("swtpm")
        .args(["socket", "--tpm2", "--flags", "not-need-init,startup-clear"])
        .arg("--tpmstate")
        .arg(format!("dir={}", dir.display()))
        .args(["--server", &format!("type=tcp,port={port}")])
        .args(["--ctrl", &format!("type=tcp,port={ctrl}")])
        .stdout(Stdio::null())
        .spawn()
        .expect("swtpm (Debian's swtpm package, installed by .ci/deps)");
    Swtpm { child, port, dir }
}

fn connect(s: &Swtpm) -> Tpm<Socket> {
    for _ in 0..100 {
        if let Ok(c) = TcpStream::connect(("127.0.0.1", s.port)) {
            return Tpm::new(Socket(c));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("swtpm did not listen on {}", s.port);
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut c = ring::digest::Context::new(&ring::digest::SHA256);
    for p in parts {
        c.update(p);
    }
    c.finish().as_ref().try_into().unwrap()
}

fn hexs(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// tpm2-tools' verdict on a quote (`tpm2_checkquote`): the key's
/// TPMT_PUBLIC, the attestation, its signature, the qualifying data.
fn checkquote(dir: &Path, public: &[u8], attest: &[u8], sig: &[u8], qualifying: &[u8]) -> bool {
    let (p, a, s) = (dir.join("ak.public"), dir.join("quote.attest"), dir.join("quote.sig"));
    std::fs::write(&p, public).unwrap();
    std::fs::write(&a, attest).unwrap();
    std::fs::write(&s, sig).unwrap();
    Command::new("tpm2_checkquote")
        .arg("-u")
        .arg(&p)
        .arg("-m")
        .arg(&a)
        .arg("-s")
        .arg(&s)
        .args(["-g", "sha256", "-q", &hexs(qualifying)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("tpm2_checkquote (Debian's tpm2-tools, installed by .ci/deps)")
        .success()
}

#[test]
fn extend_read_key_quote_flush_on_a_real_tpm() {
    let sw = swtpm("quote");
    let mut tpm = connect(&sw);
    let config = sha256(&[b"config"]);
    tpm.pcr_extend(15, &config).unwrap();
    let pcrs = tpm.pcr_read(&[15, 0, 1, 9, 15]).unwrap();
    let got: Vec<u8> = pcrs.iter().map(|(p, _)| *p).collect();
    assert_eq!(got, [0, 1, 9, 15], "ascending, once each");
    assert_eq!(pcrs[3].1, sha256(&[&[0; 32], &config]), "PCR 15 = H(0 || digest)");
    assert_eq!(pcrs[0].1, vec![0; 32]);
    // Nine PCRs: two commands of at most eight.
    assert_eq!(tpm.pcr_read(&(0..9).collect::<Vec<u8>>()).unwrap().len(), 9);

    let ak = tpm.create_ak().unwrap();
    assert!(ak.handle >> 24 == 0x80, "a transient handle: {:#x}", ak.handle);
    let nonce = sha256(&[b"doc"]);
    let (attest, sig) = tpm.quote(&ak, &nonce, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15]).unwrap();
    assert!(
        checkquote(&sw.dir, &ak.public, &attest, &sig, &nonce),
        "tpm2_checkquote accepts it"
    );
    // The qualifying data is checked: another digest, refused.
    assert!(!checkquote(&sw.dir, &ak.public, &attest, &sig, &sha256(&[b"doc2"])));
    // The attestation as the TPM sent it is its typed form marshaled again.
    let (t, rest) = <tpm2_protocol::data::TpmsAttest as tpm2_protocol::TpmUnmarshal>::unmarshal(&attest).unwrap();
    assert!(rest.is_empty());
    assert_eq!(&*t.extra_data, &nonce[..]);

    // The same key again from the same seed and template; flushed, gone.
    tpm.flush(ak.handle).unwrap();
    let again = tpm.create_ak().unwrap();
    assert_eq!(
        again.public, ak.public,
        "deterministic: a machine's key is the same every boot"
    );
    tpm.flush(again.handle).unwrap();
    match tpm.quote(&again, &nonce, &[0]) {
        Err(TpmFail::Rc(TpmCc::Quote, rc)) => assert_ne!(rc, 0),
        r => panic!("a flushed key still quotes: {r:?}"),
    }
    // No endorsement certificate in a fresh swtpm: none, not an error.
    assert_eq!(tpm.nv_read(0x01C0_000A).unwrap(), None);
}

/// An endorsement key certificate where a TPM's maker puts it: NV index
/// 0x01C0000A, defined and written here under the platform hierarchy with
/// tpm2-tools (as provisioning does), 1,500 bytes (more than one
/// TPM2_NV_Read): read back whole, byte for byte.
#[test]
fn an_endorsement_certificate_in_nv_is_read_whole() {
    let dir = std::env::temp_dir().join(format!("bootbench-swtpm-ek-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // tpm2-tools' swtpm TCTI takes the control channel on the next port:
    // a free port whose next one is free too.
    let port = (0..100)
        .map(|_| free_port())
        .find(|p| std::net::TcpListener::bind(("127.0.0.1", p + 1)).is_ok())
        .expect("two free ports in a row");
    let child = Command::new("swtpm")
        .args(["socket", "--tpm2", "--flags", "not-need-init,startup-clear"])
        .arg("--tpmstate")
        .arg(format!("dir={}", dir.display()))
        .args(["--server", &format!("type=tcp,port={port}")])
        .args(["--ctrl", &format!("type=tcp,port={}", port + 1)])
        .stdout(Stdio::null())
        .spawn()
        .expect("swtpm (Debian's swtpm package, installed by .ci/deps)");
    let sw = Swtpm { child, port, dir };
    // swtpm serves one connection at a time: listening first, then the
    // tools, then the client.
    drop(connect(&sw));
    let cert: Vec<u8> = (0..1500u32).map(|i| u8::try_from(i % 251).unwrap()).collect();
    let file = sw.dir.join("ek.der");
    std::fs::write(&file, &cert).unwrap();
    let tcti = format!("swtpm:host=127.0.0.1,port={port}");
    let tool = |args: &[&str]| {
        let out = Command::new(args[0])
            .args(["-T", &tcti])
            .args(&args[1..])
            .output()
            .expect("tpm2-tools (Debian's tpm2-tools, installed by .ci/deps)");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    tool(&[
        "tpm2_nvdefine",
        "-C",
        "p",
        "-s",
        "1500",
        "-a",
        "ppwrite|ppread|ownerread|authread|no_da|platformcreate",
        "0x01C0000A",
    ]);
    tool(&["tpm2_nvwrite", "-C", "p", "-i", file.to_str().unwrap(), "0x01C0000A"]);
    let mut tpm = connect(&sw);
    assert_eq!(tpm.nv_read(0x01C0_000A).unwrap(), Some(cert));
    // The RSA key's index is still empty.
    assert_eq!(tpm.nv_read(0x01C0_0002).unwrap(), None);
}
