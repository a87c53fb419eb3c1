use super::*;

#[test]
fn sysfs_speeds_and_widths() {
    let cases: &[(&str, Option<u32>)] = &[
        ("2.5 GT/s PCIe\n", Some(2500)),
        ("8.0 GT/s PCIe", Some(8000)),
        ("16.0 GT/s PCIe", Some(16000)),
        ("5 GT/s", Some(5000)),
        ("Unknown", None),
        ("Unknown speed", None),
        ("", None),
    ];
    for (text, want) in cases {
        assert_eq!(pcie_speed_mts(text), *want, "{text:?}");
    }
    assert_eq!(pcie_width("4\n"), Some(4));
    assert_eq!(pcie_width("0"), None);
    assert_eq!(gbit_mbps("1.5 Gbps\n"), Some(1500));
    assert_eq!(gbit_mbps("<unknown>"), None);
    assert_eq!(gbit_mbps("12.0 Gbit"), Some(12000));
    assert_eq!(gbit_mbps("22.5 Gbit"), Some(22500));
    assert_eq!(gbit_mbps("Phy disabled"), None);
    assert_eq!(usb_speed_mbps("480\n"), Some(480));
    assert_eq!(usb_speed_mbps("1.5"), Some(1));
    assert_eq!(usb_speed_mbps("5000"), Some(5000));
    assert_eq!(usb_speed_mbps("unknown"), None);
    assert_eq!(usb_version_max_mbps(" 2.00\n"), Some(480));
    assert_eq!(usb_version_max_mbps(" 3.10"), Some(10000));
    assert_eq!(usb_version_max_mbps(" 1.10"), Some(12));
    assert_eq!(ahci_cap_max_mbps("0xc0141f05\n"), Some(1500));
    assert_eq!(ahci_cap_max_mbps("0x40341f05"), Some(6000));
    assert_eq!(ahci_cap_max_mbps("0x00041f05"), None);
}

#[test]
fn aer_totals() {
    let text = "RxErr 0\nBadTLP 3\nBadDLLP 1\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 4\n";
    assert_eq!(aer_total(text), Some(4));
    assert_eq!(aer_total("Undefined 0\n"), None);
    let a = aer(Some(text), Some("TOTAL_ERR_NONFATAL 0\n"), None).expect("aer");
    assert_eq!((a.correctable, a.nonfatal, a.fatal), (Some(4), Some(0), None));
    assert_eq!(aer(None, Some("x 1"), None), None);
}

#[test]
fn identify_words_76_and_77() {
    let mut page = [0u8; 512];
    // Word 76: Gen1, Gen2, Gen3 and NCQ (bit 8); word 77: current Gen2.
    page[152..154].copy_from_slice(&0x010eu16.to_le_bytes());
    page[154..156].copy_from_slice(&(2u16 << 1).to_le_bytes());
    assert_eq!(identify_speeds(&page), (vec![1500, 3000, 6000], Some(3000)));
    assert!(!identify_phy_events(&page));
    page[152..154].copy_from_slice(&0x050eu16.to_le_bytes());
    assert!(identify_phy_events(&page), "bit 10: the Phy Event Counters log");
    // QEMU's: NCQ only, no speeds, word 77 zero.
    page[152..154].copy_from_slice(&0x0100u16.to_le_bytes());
    page[154..156].copy_from_slice(&0u16.to_le_bytes());
    assert_eq!(identify_speeds(&page), (vec![], None));
    assert!(!identify_phy_events(&page), "QEMU's IDE has no Phy Event Counters log");
    assert_eq!(identify_speeds(&[]), (vec![], None));
    assert!(!identify_phy_events(&[0xff; 512]));
}

/// A Phy Event Counters page of `counters` (identifier word, value bytes),
/// checksummed.
fn phy_page(counters: &[(u16, &[u8])]) -> [u8; 512] {
    let mut p = [0u8; 512];
    let mut i = 4;
    for (id, v) in counters {
        p[i..i + 2].copy_from_slice(&id.to_le_bytes());
        p[i + 2..i + 2 + v.len()].copy_from_slice(v);
        i += 2 + v.len();
    }
    let sum = p[..511].iter().fold(0u8, |s, b| s.wrapping_add(*b));
    p[511] = 0u8.wrapping_sub(sum);
    p
}

#[test]
fn phy_event_counters() {
    let p = phy_page(&[
        (0x1001, &[3, 0]),                      // ICRC, 16-bit
        (0x200b, &[0x10, 0x27, 0, 0]),          // CRC errors, 32-bit: 10000
        (0x300a, &[1, 0, 0, 0, 0, 0]),          // COMRESETs, 48-bit
        (0x1009, &[0xff, 0xff]),                // PhyRdy->PhyNRdy, saturated
        (0x9123, &[7, 0]),                      // vendor
        (0x4777, &[1, 0, 0, 0, 0, 0, 0, 0x80]), // unknown, 64-bit
    ]);
    let e = parse_phy_events(&p).expect("parse");
    let got: Vec<(u16, &str, u64, bool)> = e
        .iter()
        .map(|e| (e.id, e.name.as_str(), e.value, e.saturated))
        .collect();
    assert_eq!(
        got,
        vec![
            (0x001, "command_failed_icrc", 3, false),
            (0x00b, "crc_errors_h2d_fis", 10000, false),
            (0x00a, "comreset_signature_fis", 1, false),
            (0x009, "phy_rdy_to_phy_nrdy", 0xffff, true),
            (0x8123, "vendor_0123", 7, false),
            (0x777, "counter_0777", 0x8000_0000_0000_0001, false),
        ]
    );
    let mut bad = p;
    bad[10] ^= 1;
    assert_eq!(parse_phy_events(&bad), Err(LinkLogError::Checksum));
    assert_eq!(
        parse_phy_events(&p[..100]),
        Err(LinkLogError::Short { got: 100, need: 512 })
    );
    // A reserved length (0 or 5..7 words) ends the list.
    let p = phy_page(&[(0x1001, &[1, 0]), (0x5002, &[1, 0, 0, 0, 0, 0, 0, 0, 0, 0])]);
    assert_eq!(parse_phy_events(&p).expect("parse").len(), 1);
    assert_eq!(parse_phy_events(&phy_page(&[])).expect("parse"), vec![]);
}

/// A SAS phy log descriptor (48 bytes) of phy `id` at rate code `rate`
/// with the four error counts.
fn sas_desc(id: u8, rate: u8, counts: [u32; 4]) -> Vec<u8> {
    let mut d = vec![0u8; 48];
    d[1] = id;
    d[3] = 44;
    d[4] = 0x10; // attached: end device
    d[5] = rate;
    for (k, c) in counts.iter().enumerate() {
        d[32 + 4 * k..36 + 4 * k].copy_from_slice(&c.to_be_bytes());
    }
    d
}

/// A page 18h of one parameter per (port, protocol, descriptors).
fn sas_page(params: &[(u16, u8, Vec<Vec<u8>>)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (port, proto, descs) in params {
        let mut p = vec![0u8; 8];
        p[0..2].copy_from_slice(&port.to_be_bytes());
        p[4] = *proto;
        p[7] = u8::try_from(descs.len()).expect("phys");
        for d in descs {
            p.extend_from_slice(d);
        }
        p[3] = u8::try_from(p.len() - 4).expect("len");
        body.extend(p);
    }
    let mut page = vec![0x18, 0, 0, 0];
    page[2..4].copy_from_slice(&u16::try_from(body.len()).expect("len").to_be_bytes());
    page.extend(body);
    page
}

#[test]
fn sas_port_log_page() {
    let page = sas_page(&[
        (
            1,
            6,
            vec![sas_desc(0, 0xb, [1, 2, 3, 4]), sas_desc(1, 0x9, [0, 0, 0, 0])],
        ),
        (2, 1, vec![sas_desc(0, 0xa, [9, 9, 9, 9])]), // not SAS: left out
    ]);
    let phys = parse_sas_port_log(&page).expect("parse");
    assert_eq!(phys.len(), 2);
    assert_eq!(phys[0].name, "port 1 phy 0");
    assert_eq!(phys[0].rate_mbps, Some(12000));
    assert_eq!(
        (
            phys[0].invalid_dwords,
            phys[0].disparity_errors,
            phys[0].loss_of_dword_sync,
            phys[0].phy_reset_problems
        ),
        (Some(1), Some(2), Some(3), Some(4))
    );
    assert_eq!((phys[1].name.as_str(), phys[1].rate_mbps), ("port 1 phy 1", Some(3000)));
    assert_eq!(parse_sas_port_log(&[0x19, 0, 0, 0]), Err(LinkLogError::WrongPage(0x19)));
    assert_eq!(
        parse_sas_port_log(&[0x18]),
        Err(LinkLogError::Short { got: 1, need: 4 })
    );
    // Cut short anywhere: no panic, what was whole is kept.
    for n in 0..page.len() {
        let _ = parse_sas_port_log(&page[..n]);
    }
}

fn pcie(role: PcieRole, addr: &str, now: (u32, u32), max: (u32, u32)) -> PcieLink {
    PcieLink {
        address: addr.into(),
        role,
        speed_mts: Some(now.0),
        width: Some(now.1),
        max_speed_mts: Some(max.0),
        max_width: Some(max.1),
        aer: None,
    }
}

#[test]
fn degraded_links_name_both_figures() {
    let r = LinkReading {
        pcie: vec![
            pcie(PcieRole::Device, "0000:01:00.0", (2500, 1), (16000, 4)),
            pcie(PcieRole::Port, "0000:00:01.0", (2500, 1), (16000, 16)),
        ],
        ..LinkReading::default()
    };
    assert_eq!(
        degraded(&r),
        vec!["PCIe 2.5 GT/s x1 (0000:01:00.0), capable of 16 GT/s x4 (device 16 GT/s x4, port 16 GT/s x16)"]
    );
    // The port is the slow end: trained as fast as both allow.
    let r = LinkReading {
        pcie: vec![
            pcie(PcieRole::Device, "0000:01:00.0", (8000, 4), (16000, 4)),
            pcie(PcieRole::Port, "0000:00:01.0", (8000, 4), (8000, 16)),
        ],
        ..LinkReading::default()
    };
    assert!(degraded(&r).is_empty());
    // Without the port, one end: not judged.
    let r = LinkReading {
        pcie: vec![pcie(PcieRole::Device, "0000:00:1f.2", (2500, 1), (16000, 4))],
        ..LinkReading::default()
    };
    assert!(degraded(&r).is_empty());
    let sata = |now, host, drive: Vec<u32>| LinkReading {
        sata: Some(SataLink {
            speed_mbps: now,
            host_max_mbps: host,
            drive_speeds_mbps: drive,
            ..SataLink::default()
        }),
        ..LinkReading::default()
    };
    assert_eq!(
        degraded(&sata(Some(1500), Some(6000), vec![1500, 3000, 6000])),
        vec!["SATA 1.5 Gb/s, capable of 6 Gb/s (host 6 Gb/s, drive 6 Gb/s)"]
    );
    assert_eq!(
        degraded(&sata(Some(1500), Some(3000), vec![1500, 3000, 6000])),
        vec!["SATA 1.5 Gb/s, capable of 3 Gb/s (host 3 Gb/s, drive 6 Gb/s)"]
    );
    assert!(degraded(&sata(Some(1500), Some(1500), vec![1500, 3000, 6000])).is_empty());
    assert!(
        degraded(&sata(Some(1500), Some(6000), vec![])).is_empty(),
        "the drive did not say"
    );
    let usb = LinkReading {
        usb: Some(UsbLink {
            device: "2-1".into(),
            speed_mbps: Some(480),
            device_max_mbps: Some(5000),
            port_max_mbps: Some(10000),
        }),
        ..LinkReading::default()
    };
    assert_eq!(degraded(&usb), vec!["USB 480 Mb/s (2-1), capable of 5000 Mb/s"]);
}

#[test]
fn counters_by_name() {
    let mut d = pcie(PcieRole::Device, "0000:01:00.0", (8000, 4), (8000, 4));
    d.aer = Some(Aer {
        correctable: Some(2),
        nonfatal: Some(0),
        fatal: None,
    });
    let r = LinkReading {
        pcie: vec![d],
        sata: Some(SataLink {
            phy_events: parse_phy_events(&phy_page(&[(0x1001, &[3, 0]), (0x100a, &[5, 0])])).expect("parse"),
            ..SataLink::default()
        }),
        sas: vec![SasPhy {
            name: "phy-0:0".into(),
            invalid_dwords: Some(7),
            ..SasPhy::default()
        }],
        ..LinkReading::default()
    };
    let c = counters(&r);
    assert_eq!(
        c,
        vec![
            ("PCIe 0000:01:00.0 AER correctable errors".to_string(), 2),
            ("PCIe 0000:01:00.0 AER nonfatal errors".to_string(), 0),
            ("SATA phy event 0001h command_failed_icrc".to_string(), 3),
            ("SAS phy-0:0 invalid dwords".to_string(), 7),
        ]
    );
    assert_eq!(
        summary(&r),
        "PCIe 8 GT/s x4 0000:01:00.0 (max 8 GT/s x4); SATA ? (host max ?, drive max ?, 2 phy event counters); SAS phy-0:0 ? (max ?)"
    );
    assert_eq!(summary(&LinkReading::default()), "-");
}
