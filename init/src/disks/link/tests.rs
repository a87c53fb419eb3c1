use super::*;
use std::fs;

use crate::testutil::TempDir;

fn write(p: &Path, content: &str) {
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, content).expect("write");
}

/// A PCIe function's link attributes under `dir`.
fn link_files(dir: &Path, now: (&str, &str), max: (&str, &str)) {
    write(&dir.join("current_link_speed"), &format!("{}\n", now.0));
    write(&dir.join("current_link_width"), &format!("{}\n", now.1));
    write(&dir.join("max_link_speed"), &format!("{}\n", max.0));
    write(&dir.join("max_link_width"), &format!("{}\n", max.1));
}

#[test]
fn an_nvme_drive_behind_a_root_port_with_aer() {
    let t = TempDir::new("link-nvme");
    let sys = &t.0;
    let port = sys.join("devices/pci0000:00/0000:00:01.1");
    let dev = port.join("0000:02:00.0");
    link_files(&port, ("2.5 GT/s PCIe", "1"), ("16.0 GT/s PCIe", "16"));
    link_files(&dev, ("2.5 GT/s PCIe", "1"), ("16.0 GT/s PCIe", "4"));
    write(
        &dev.join("aer_dev_correctable"),
        "RxErr 2\nBadTLP 0\nBadDLLP 1\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 3\n",
    );
    write(
        &dev.join("aer_dev_nonfatal"),
        "Undefined 0\nDLP 0\nTOTAL_ERR_NONFATAL 0\n",
    );
    write(&dev.join("aer_dev_fatal"), "Undefined 0\nDLP 0\nTOTAL_ERR_FATAL 0\n");
    let block = dev.join("nvme/nvme0/nvme0n1");
    fs::create_dir_all(&block).expect("mkdir");
    let r = read(&block, sys, Some("nvme"), None).expect("a reading");
    assert_eq!(r.pcie.len(), 2);
    assert_eq!(
        (r.pcie[0].address.as_str(), r.pcie[0].role),
        ("0000:02:00.0", PcieRole::Device)
    );
    assert_eq!(
        (
            r.pcie[0].speed_mts,
            r.pcie[0].width,
            r.pcie[0].max_speed_mts,
            r.pcie[0].max_width
        ),
        (Some(2500), Some(1), Some(16000), Some(4))
    );
    let aer = r.pcie[0].aer.expect("aer");
    assert_eq!((aer.correctable, aer.nonfatal, aer.fatal), (Some(3), Some(0), Some(0)));
    assert_eq!(
        (r.pcie[1].address.as_str(), r.pcie[1].role),
        ("0000:00:01.1", PcieRole::Port)
    );
    assert_eq!(r.pcie[1].aer, None, "no AER files");
    assert_eq!(
        parse::degraded(&r),
        vec!["PCIe 2.5 GT/s x1 (0000:02:00.0), capable of 16 GT/s x4 (device 16 GT/s x4, port 16 GT/s x16)"]
    );
    assert_eq!(
        line("/dev/nvme0n1", &r, "before the run"),
        "/dev/nvme0n1: link before the run: PCIe 2.5 GT/s x1 0000:02:00.0 (max 16 GT/s x4; port 0000:00:01.1 max 16 GT/s x16)"
    );
}

#[test]
fn a_sata_disk_on_ahci_with_a_forced_limit() {
    let t = TempDir::new("link-sata");
    let sys = &t.0;
    // The AHCI controller is a conventional PCI function on the root bus
    // (no link files), as QEMU's ich9-ahci is.
    let ata = sys.join("devices/pci0000:00/0000:00:1f.2/ata3");
    let block = ata.join("host2/target2:0:0/2:0:0:0/block/sda");
    fs::create_dir_all(&block).expect("mkdir");
    fs::create_dir_all(ata.join("link3/dev3.0")).expect("mkdir");
    let class = sys.join("class/ata_link/link3");
    write(&class.join("sata_spd"), "1.5 Gbps\n");
    write(&class.join("hw_sata_spd_limit"), "<unknown>\n");
    write(&sys.join("class/scsi_host/host2/ahci_host_caps"), "0x40341f05\n");
    let r = read(&block, sys, Some("sata"), None).expect("a reading");
    assert!(r.pcie.is_empty());
    let s = r.sata.clone().expect("sata");
    assert_eq!(s.link.as_deref(), Some("link3"));
    assert_eq!((s.speed_mbps, s.host_max_mbps), (Some(1500), Some(6000)));
    // The drive said nothing (no device to ask): one end, not judged.
    assert!(parse::degraded(&r).is_empty());
    // libata.force=1.5Gbps lowers the host's limit.
    write(&class.join("hw_sata_spd_limit"), "1.5 Gbps\n");
    let r = read(&block, sys, Some("sata"), None).expect("a reading");
    assert_eq!(r.sata.expect("sata").host_max_mbps, Some(1500));
}

#[test]
fn a_sas_disk_and_its_port_phys() {
    let t = TempDir::new("link-sas");
    let sys = &t.0;
    let hba = sys.join("devices/pci0000:00/0000:00:03.0/0000:03:00.0");
    link_files(&hba, ("8.0 GT/s PCIe", "8"), ("8.0 GT/s PCIe", "8"));
    link_files(
        &sys.join("devices/pci0000:00/0000:00:03.0"),
        ("8.0 GT/s PCIe", "8"),
        ("8.0 GT/s PCIe", "16"),
    );
    let port = hba.join("host0/port-0:0");
    let block = port.join("end_device-0:0/target0:0:0/0:0:0:0/block/sdb");
    fs::create_dir_all(&block).expect("mkdir");
    fs::create_dir_all(port.join("phy-0:0")).expect("mkdir");
    let phy = sys.join("class/sas_phy/phy-0:0");
    write(&phy.join("negotiated_linkrate"), "6.0 Gbit\n");
    write(&phy.join("maximum_linkrate_hw"), "12.0 Gbit\n");
    write(&phy.join("maximum_linkrate"), "12.0 Gbit\n");
    write(&phy.join("invalid_dword_count"), "5\n");
    write(&phy.join("running_disparity_error_count"), "4\n");
    write(&phy.join("loss_of_dword_sync_count"), "1\n");
    write(&phy.join("phy_reset_problem_count"), "0\n");
    let r = read(&block, sys, Some("sas"), None).expect("a reading");
    assert_eq!(r.pcie.len(), 2);
    assert_eq!(r.sas.len(), 1);
    let p = &r.sas[0];
    assert_eq!(
        (
            p.name.as_str(),
            p.rate_mbps,
            p.max_rate_mbps,
            p.invalid_dwords,
            p.disparity_errors,
            p.loss_of_dword_sync,
            p.phy_reset_problems
        ),
        ("phy-0:0", Some(6000), Some(12000), Some(5), Some(4), Some(1), Some(0))
    );
    assert_eq!(parse::degraded(&r), vec!["SAS phy-0:0 6 Gb/s, capable of 12 Gb/s"]);
}

#[test]
fn a_usb_disk_and_its_hub() {
    let t = TempDir::new("link-usb");
    let sys = &t.0;
    let root = sys.join("devices/pci0000:00/0000:00:14.0/usb2");
    write(&root.join("speed"), "5000\n");
    write(&root.join("version"), " 3.00\n");
    let dev = root.join("2-1");
    write(&dev.join("speed"), "480\n");
    write(&dev.join("version"), " 3.20\n");
    let block = dev.join("2-1:1.0/host4/target4:0:0/4:0:0:0/block/sdc");
    fs::create_dir_all(&block).expect("mkdir");
    let r = read(&block, sys, Some("usb"), None).expect("a reading");
    let u = r.usb.clone().expect("usb");
    assert_eq!(
        (u.device.as_str(), u.speed_mbps, u.device_max_mbps, u.port_max_mbps),
        ("2-1", Some(480), Some(20000), Some(5000))
    );
    assert_eq!(parse::degraded(&r), vec!["USB 480 Mb/s (2-1), capable of 5000 Mb/s"]);
}

#[test]
fn nothing_to_read_is_no_reading() {
    let t = TempDir::new("link-none");
    let block = t.0.join("devices/virtual/block/loop0");
    fs::create_dir_all(&block).expect("mkdir");
    assert_eq!(read(&block, &t.0, None, None), None);
    assert_eq!(found(&block, &t.0, None, None), None);
    assert!(pci_address("0000:00:1f.2"));
    assert!(!pci_address("pci0000:00"));
    assert!(!pci_address("0000:00:1f"));
}
