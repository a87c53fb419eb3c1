//! Real kernel 6.1 lines: a blkdebug read error on virtio, a SATA medium
//! error as libata, sd and the block layer print it, an NVMe timeout,
//! abort and reset, and the ordinary lines around them that are kept out.

use super::*;
use alloc::vec;
use KernelLogKind as K;

#[test]
fn records_are_taken_apart() {
    let r = parse_record(
        b"3,1021,61234567,-,caller=T412;I/O error, dev vdb, sector 8192 op 0x0:(READ) flags 0x4000 phys_seg 254 prio class 2\n",
    )
    .unwrap();
    assert_eq!((r.facility, r.level, r.seq, r.time_us), (0, 3, 1021, 61_234_567));
    assert_eq!(
        r.text,
        b"I/O error, dev vdb, sector 8192 op 0x0:(READ) flags 0x4000 phys_seg 254 prio class 2"
    );
    assert_eq!(r.device, None);
    let r = parse_record(
        b"6,2000,9000000,-;sd 2:0:0:0: [sdc] tag#19 Sense Key : Medium Error [current] \n SUBSYSTEM=scsi\n DEVICE=+scsi:2:0:0:0\n",
    )
    .unwrap();
    assert_eq!(r.device, Some(&b"+scsi:2:0:0:0"[..]));
    assert_eq!(r.level, 6);
    // bootbench's own lines come from user space: facility 1.
    let r = parse_record(b"14,5,100,-;bootbench: I/O error, dev vdb, sector 8192\n").unwrap();
    assert_eq!((r.facility, r.level), (1, 6));
    assert_eq!(parse_record(b"3,1,2,-"), Err(RecordError::NoPrefix));
    assert_eq!(parse_record(b"x,1,2,-;t"), Err(RecordError::BadField("priority")));
    assert_eq!(parse_record(b"3,1;t"), Err(RecordError::BadField("timestamp")));
    assert_eq!(parse_record(b"3;t"), Err(RecordError::BadField("sequence")));
}

#[test]
fn text_is_escaped_and_bounded() {
    assert_eq!(escape_text(b"a\x1bb\xffc"), "a\\x1bb\\xffc");
    let long = vec![b'x'; 1000];
    assert_eq!(escape_text(&long).len(), TEXT_MAX);
    let mut esc = vec![b'x'; TEXT_MAX - 2];
    esc.push(0x07);
    assert_eq!(escape_text(&esc).len(), TEXT_MAX - 2, "an escape is never cut");
}

/// (level, text, kind): lines as Linux 6.1 prints them.
const LINES: &[(u8, &str, Option<KernelLogKind>)] = &[
    // block/blk-mq.c blk_print_req_error, a blkdebug EIO on virtio_blk.
    (3, "I/O error, dev vdb, sector 8192 op 0x0:(READ) flags 0x4000 phys_seg 254 prio class 2", Some(K::IoError)),
    (3, "critical medium error, dev sdc, sector 8000 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2", Some(K::MediumError)),
    (3, "timeout error, dev sdc, sector 0 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 2", Some(K::IoError)),
    (3, "Buffer I/O error on dev sdc1, logical block 0, async page read", Some(K::IoError)),
    // drivers/ata/libata-eh.c ata_eh_link_report.
    (3, "ata3.00: exception Emask 0x0 SAct 0x80000 SErr 0x0 action 0x0", Some(K::AtaException)),
    (3, "ata3.00: irq_stat 0x40000008", Some(K::Other)),
    (3, "ata3.00: failed command: READ FPDMA QUEUED", Some(K::AtaException)),
    (3, "ata3.00: cmd 60/08:98:40:1f:00/00:00:00:00:00/40 tag 19 ncq dma 4096 in\\x0a         res 41/40:00:40:1f:00/00:00:00:00:00/40 Emask 0x409 (media error) <F>", Some(K::MediumError)),
    (3, "ata3.00: cmd c8/00:08:00:00:00/00:00:00:00:00/e0 tag 0 dma 4096 in\\x0a         res 51/04:08:00:00:00/00:00:00:00:00/e0 Emask 0x1 (device error)", Some(K::AtaException)),
    (3, "ata3.00: status: { DRDY ERR }", Some(K::AtaException)),
    (3, "ata3.00: error: { UNC }", Some(K::AtaException)),
    (6, "ata3.00: configured for UDMA/133", None),
    (6, "ata3: EH complete", None),
    // libata-eh.c ata_eh_reset, libata-core.c sata_print_link_status.
    (6, "ata3: hard resetting link", Some(K::LinkReset)),
    (6, "ata3: SATA link down (SStatus 0 SControl 300)", Some(K::LinkReset)),
    (4, "ata3: link is slow to respond, please be patient (ready=0)", Some(K::LinkReset)),
    (3, "ata3: COMRESET failed (errno=-16)", Some(K::LinkReset)),
    (6, "ata3: SATA link up 6.0 Gbps (SStatus 133 SControl 300)", None),
    // drivers/scsi: scsi_print_result, the sense key and ASC texts.
    (6, "sd 2:0:0:0: [sdc] tag#19 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_OK cmd_age=3s", Some(K::IoError)),
    (6, "sd 2:0:0:0: [sdc] tag#19 Sense Key : Medium Error [current] ", Some(K::MediumError)),
    (6, "sd 2:0:0:0: [sdc] tag#19 Add. Sense: Unrecovered read error - auto reallocate failed", Some(K::MediumError)),
    (6, "sd 2:0:0:0: [sdc] tag#19 CDB: Read(10) 28 00 00 00 1f 40 00 00 08 00", None),
    // drivers/nvme/host/pci.c nvme_timeout, abort_endio, nvme_warn_reset.
    (4, "nvme nvme0: I/O 123 QID 4 timeout, aborting", Some(K::NvmeTimeout)),
    (4, "nvme nvme0: I/O tag 123 (007b) opcode 0x2 (Read) QID 4 timeout, aborting req_op:READ(0) size:4096", Some(K::NvmeTimeout)),
    (4, "nvme nvme0: Abort status: 0x0", Some(K::NvmeAbort)),
    (4, "nvme nvme0: I/O 123 QID 4 timeout, reset controller", Some(K::NvmeTimeout)),
    (4, "nvme nvme0: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff", Some(K::NvmeReset)),
    (4, "nvme nvme0: Removing after probe failure status: -19", Some(K::NvmeReset)),
    (4, "nvme nvme0: Device not ready; aborting reset, CSTS=0x1", Some(K::NvmeReset)),
    // drivers/nvme/host/core.c nvme_log_error.
    (3, "nvme0n1: Read(0x2) @ LBA 8192, 256 blocks, Unrecovered Read Error (sct 0x2 / sc 0x81) DNR ", Some(K::MediumError)),
    (3, "nvme0n1: Write(0x1) @ LBA 0, 8 blocks, Internal Error (sct 0x0 / sc 0x6) ", Some(K::IoError)),
    (6, "nvme nvme0: 2/0/0 default/read/poll queues", None),
    (4, "EXT4-fs warning (device sdc1): ext4_end_bio:343: I/O error 10 writing to inode 12 starting block 8)", Some(K::Other)),
];

#[test]
fn real_lines_are_classified() {
    for (level, text, want) in LINES {
        assert_eq!(classify(text, *level), *want, "{text}");
    }
}

#[test]
fn the_sector_of_a_block_layer_line() {
    assert_eq!(sector_of(LINES[0].1), Some(8192));
    assert_eq!(sector_of(LINES[1].1), Some(8000));
    assert_eq!(sector_of("Buffer I/O error on dev sdc1, logical block 0"), None);
    assert_eq!(sector_of("x, sector "), None);
}

#[test]
fn lines_name_their_disk_and_not_others() {
    let sda = DiskRefs {
        name: "sda".into(),
        ata_port: Some(3),
        scsi: Some("2:0:0:0".into()),
        nvme_ctrl: None,
        devnums: vec![(8, 0), (8, 1)],
    };
    let yes = [
        "ata3.00: exception Emask 0x0 SAct 0x0 SErr 0x0 action 0x0",
        "ata3: SATA link down (SStatus 0 SControl 300)",
        "sd 2:0:0:0: rejecting I/O to offline device",
        "sd 2:0:0:0: [sda] tag#1 FAILED Result: hostbyte=DID_BAD_TARGET",
        "Buffer I/O error on dev sda1, logical block 0, async page read",
        "I/O error, dev sda, sector 8 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2",
    ];
    for t in yes {
        assert!(sda.names(t, None), "{t}");
    }
    let no = [
        "ata33: SATA link down",
        "ata4.00: error: { UNC }",
        "sd 3:0:0:0: [sdb] tag#1 FAILED Result:",
        "I/O error, dev sdaa, sector 0 op 0x0:(READ)",
        "Buffer I/O error on dev sda1x, logical block 0",
        "nvme nvme0: I/O 1 QID 1 timeout",
    ];
    for t in no {
        assert!(!sda.names(t, None), "{t}");
    }
    assert!(sda.names("something", Some("b8:1")));
    assert!(sda.names("something", Some("+scsi:2:0:0:0")));
    assert!(!sda.names("something", Some("b8:16")));
    assert!(!sda.names("something", Some("+scsi:3:0:0:0")));
    assert!(!sda.names("something", Some("c8:0")));

    let nvme = DiskRefs {
        name: "nvme0n1".into(),
        nvme_ctrl: Some("nvme0".into()),
        ..DiskRefs::default()
    };
    assert!(nvme.names("nvme nvme0: I/O 123 QID 4 timeout, aborting", None));
    assert!(nvme.names("Buffer I/O error on dev nvme0n1p2, logical block 7", None));
    assert!(!nvme.names("nvme nvme1: I/O 123 QID 4 timeout, aborting", None));
    assert!(!nvme.names("I/O error, dev nvme0n10, sector 0", None));
    assert!(!nvme.names("I/O error, dev nvme0n11p1, sector 0", None));
    assert!(
        !DiskRefs::default().names("ata1: x", None),
        "an empty name names nothing"
    );
}
