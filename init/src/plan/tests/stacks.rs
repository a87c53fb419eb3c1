//! Stacks (md arrays, dm layers) in the plan: the order they resolve in,
//! what they plan on, and each config the plan refuses.

use super::*;

#[test]
fn stacks_resolve_in_dependency_order_and_members_are_targets() {
    let p = stacked(
        r#","arrays":[{"name":"r0","level":"raid0","members":["sim:ssd:64M","sim:ssd:32M"],"chunk":"64k"},
                       {"name":"r5","level":"raid5","members":["sim:ssd:16M","sim:ssd:17M","sim:ssd:18M"]}],
           "layers":[{"name":"lv","kind":"linear","on":"secure"},
                     {"name":"secure","kind":"crypt","on":"r0","sector_size":4096},
                     {"name":"raw","kind":"linear","on":"sim:ssd:8M","offset":"4k"}],
           "all_at_once":true"#,
    )
    .unwrap();
    let names: Vec<&str> = p.stacks.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["r0", "r5", "secure", "lv", "raw"]);
    let paths: Vec<&str> = p.targets.iter().map(|t| t.info.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "sim:hdd:1G",
            "sim:ssd:64M",
            "sim:ssd:32M",
            "sim:ssd:16M",
            "sim:ssd:17M",
            "sim:ssd:18M",
            "sim:ssd:8M",
            "md:r0",
            "md:r5",
            "dm:secure",
            "dm:lv",
            "dm:raw"
        ]
    );
    assert!(p.all_at_once);
    // Every target, member disk or stack, has the plan's test.
    for ti in 0..p.targets.len() {
        assert_eq!(p.items.iter().filter(|it| it.target == ti).count(), 1, "{ti}");
    }
    let r0 = &p.stacks[0];
    assert_eq!(
        r0.kind,
        StackKind::Array {
            level: Level::Raid0,
            chunk_bytes: 65536,
            layout: None,
            members: vec![1, 2]
        }
    );
    // raid0: the members' sizes added; raid5: (N-1) x the smallest.
    assert_eq!(p.targets[7].geometry.size, 96 << 20);
    assert_eq!(p.targets[8].geometry.size, 2 * (16 << 20));
    assert_eq!(
        p.stacks[1].kind,
        StackKind::Array {
            level: Level::Raid5,
            chunk_bytes: DEFAULT_CHUNK,
            layout: Some(crate::stacks::md::MdLayout::LeftSymmetric),
            members: vec![3, 4, 5]
        }
    );
    // Layers: on the right target, with the disks beneath.
    assert!(matches!(
        p.stacks[2].kind,
        StackKind::Crypt {
            on: 7,
            sector_size: 4096,
            key_bits: 512,
            ..
        }
    ));
    assert_eq!(
        p.stacks[3].kind,
        StackKind::Linear {
            offset_bytes: 1 << 20,
            on: 9
        }
    );
    assert_eq!(p.stacks[3].disks, vec![1, 2]);
    assert_eq!(p.stacks[4].disks, vec![6]);
    assert_eq!(p.targets[10].geometry.size, (96 << 20) - (1 << 20));
    assert_eq!(p.targets[9].geometry.logical_block, 4096);
    let info = p.targets[10].info.stack.clone().unwrap();
    assert_eq!(
        (info.kind, info.level.name(), info.on.as_deref()),
        (StackClass::Dm, "linear", Some("dm:secure"))
    );
    let info = p.targets[7].info.stack.clone().unwrap();
    assert_eq!(info.members, vec!["sim:ssd:64M", "sim:ssd:32M"]);
    assert!(info.notes.iter().any(|n| n.contains("write-intent bitmap")));
    let text = describe_plan(&p);
    assert!(
        text.contains("array \"r0\": raid0 of sim:ssd:64M, sim:ssd:32M, chunk 65536 B"),
        "{text}"
    );
    assert!(
        text.contains("layer \"lv\": linear at offset 1048576 B on dm:secure"),
        "{text}"
    );
}

/// Two simulated disks as an array's members.
const TWO: &str = r#""members":["sim:ssd:64M","sim:ssd:32M"]"#;

/// Each `(extra, want)`: the stack config with `extra` is refused with an
/// error that starts with `want`, on one line.
fn assert_each_refused(cases: &[(String, &str)]) {
    for (extra, want) in cases {
        let e = stacked(extra).unwrap_err().0;
        assert!(e.starts_with(want), "{extra}\n  got:  {e}\n  want: {want}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

/// Arrays: members that are not simulated disks, are used twice, are too
/// few for the level, or are themselves stacks; names, levels and layouts
/// that do not exist or do not fit the level; the boot stick as a member;
/// unknown keys.
#[test]
fn each_invalid_array_gives_its_error() {
    assert_each_refused(&[
        (
            r#","arrays":[{"name":"r0","level":"raid0","members":["sim:ssd:64M","sim:tape:1G"]}]"#.to_string(),
            "arrays[0].members[1]: \"sim:tape:1G\" is not a simulated disk",
        ),
        (
            format!(r#","arrays":[{{"name":"a","level":"raid1",{TWO}}},{{"name":"b","level":"raid1","members":["sim:ssd:32M","sim:ssd:16M"]}}]"#),
            "arrays[1].members[0]: \"sim:ssd:32M\" is already used by arrays[0].members[1]; expected each disk in one array or layer",
        ),
        (
            r#","arrays":[{"name":"a","level":"raid1","members":["sim:ssd:32M","sim:ssd:32M"]}]"#.to_string(),
            "arrays[0].members[1]: \"sim:ssd:32M\" is already used by arrays[0].members[0]",
        ),
        (
            format!(r#","arrays":[{{"name":"r5","level":"raid5",{TWO}}}]"#),
            "arrays[0].members: 2 member(s) are too few for raid5; expected at least 3",
        ),
        (
            r#","arrays":[{"name":"r6","level":"raid6","members":["sim:ssd:1M","sim:ssd:2M","sim:ssd:3M"]}]"#.to_string(),
            "arrays[0].members: 3 member(s) are too few for raid6; expected at least 4",
        ),
        (
            r#","arrays":[{"name":"r1","level":"raid1","members":["sim:ssd:1M"]}]"#.to_string(),
            "arrays[0].members: 1 member(s) are too few for raid1; expected at least 2",
        ),
        (
            format!(r#","arrays":[{{"name":"R 0","level":"raid0",{TWO}}}]"#),
            "arrays[0].name: \"R 0\" is not a stack name",
        ),
        (
            format!(r#","arrays":[{{"name":"r","level":"raid7",{TWO}}}]"#),
            "arrays[0].level: \"raid7\" is not a level; expected one of linear, raid0",
        ),
        (
            format!(r#","arrays":[{{"name":"r","level":"raid10","layout":"far3",{TWO}}}]"#),
            "arrays[0].layout: \"far3\" is not a layout; expected one of left-asymmetric, right-asymmetric, \
             left-symmetric, right-symmetric (raid5, raid6), near2, far2, offset2 (raid10)",
        ),
        (
            format!(r#","arrays":[{{"name":"r","level":"raid10","layout":"left-symmetric",{TWO}}}]"#),
            "arrays[0].layout: \"left-symmetric\" is not a raid10 layout; expected one of near2, far2, offset2",
        ),
        (
            format!(r#","arrays":[{{"name":"r","level":"raid0","layout":"near2",{TWO}}}]"#),
            "arrays[0].layout: \"near2\" is not taken by raid0",
        ),
        (
            r#","arrays":[{"name":"r0","level":"raid0","members":["r1","sim:ssd:1M"]},{"name":"r1","level":"raid0","members":["sim:ssd:2M","sim:ssd:3M"]}]"#.to_string(),
            "arrays[0].members[0]: \"r1\" is an array or layer; expected a disk",
        ),
    ]);
    // The boot stick is never a member.
    let raw = parse(
        r#"{"profile":"quick","arrays":[{"name":"r","level":"raid1","members":["sim:ssd:8M","sim:ssd:9M"]}]}"#,
        "t",
    )
    .unwrap();
    let refs = vec![(TargetRef::Path("sim:hdd:1G".into()), "discovered".to_string())];
    let e = plan_with(&raw, "t", &sim(), &refs, &["sim:ssd:9M".to_string()])
        .unwrap_err()
        .0;
    assert!(
        e.starts_with("arrays[0].members[1]: \"sim:ssd:9M\" is on the boot stick"),
        "{e}"
    );
    // Unknown keys are refused by the parser.
    assert!(parse(
        r#"{"arrays":[{"name":"r","level":"raid0","members":[],"stripe":1}]}"#,
        "t"
    )
    .is_err());
}

/// Chunk sizes: md takes a power of two from 4k to 1G; anything else, in
/// any spelling and at any level, is refused; those it takes plan.
#[test]
fn each_chunk_md_refuses_gives_its_error_and_those_it_takes_plan() {
    assert_each_refused(&[
        (
            format!(r#","arrays":[{{"name":"r0","level":"raid0","chunk":"96k",{TWO}}}]"#),
            "arrays[0].chunk: \"96k\" is not a chunk size md takes; expected a power of two from 4k to 1G",
        ),
        (
            format!(r#","arrays":[{{"name":"r0","level":"raid0","chunk":"2k",{TWO}}}]"#),
            "arrays[0].chunk: \"2k\" is not a chunk size",
        ),
        // md holds the chunk in a signed 32-bit byte count: 2G and more
        // never reach the kernel, whatever the level (members larger
        // than the chunk, so that nothing else is wrong).
        (
            r#","arrays":[{"name":"r0","level":"raid0","chunk":"2G","members":["sim:ssd:4G","sim:ssd:5G"]}]"#
                .to_string(),
            "arrays[0].chunk: \"2G\" is not a chunk size md takes; expected a power of two from 4k to 1G",
        ),
        (
            format!(r#","arrays":[{{"name":"r0","level":"raid10","chunk":"2GiB",{TWO}}}]"#),
            "arrays[0].chunk: \"2GiB\" is not a chunk size",
        ),
        (
            format!(r#","arrays":[{{"name":"r0","level":"raid1","chunk":"4G",{TWO}}}]"#),
            "arrays[0].chunk: \"4G\" is not a chunk size",
        ),
        (
            format!(r#","arrays":[{{"name":"r0","level":"raid0","chunk":2147483648,{TWO}}}]"#),
            "arrays[0].chunk: 2147483648 is not a chunk size",
        ),
    ]);
    // The chunks md takes, from 4k to 1G, plan.
    for (level, chunk, bytes) in [
        ("raid0", "4k", 4096),
        ("raid5", "1G", 1 << 30),
        ("raid10", "1073741824", 1 << 30),
    ] {
        // Members of at least a chunk: md rounds each down to whole chunks.
        let members = match level {
            "raid5" => r#""members":["sim:ssd:2G","sim:ssd:3G","sim:ssd:4G"]"#,
            "raid10" => r#""members":["sim:ssd:2G","sim:ssd:3G"]"#,
            _ => TWO,
        };
        let chunk_json = if chunk.ends_with('k') || chunk.ends_with('G') {
            format!("{chunk:?}")
        } else {
            chunk.to_string()
        };
        let p = stacked(&format!(
            r#","arrays":[{{"name":"r0","level":"{level}","chunk":{chunk_json},{members}}}]"#
        ))
        .unwrap_or_else(|e| panic!("{level} chunk {chunk}: {}", e.0));
        assert!(
            matches!(p.stacks[0].kind, StackKind::Array { chunk_bytes, .. } if chunk_bytes == bytes),
            "{level} {chunk}"
        );
    }
}

/// Layers: cycles, unknown bases, names an array has, crypt and linear
/// options that do not apply or do not fit, unknown kinds, a disk an array
/// already uses, unknown keys; and the other destinations of the results
/// (serial ports, the results URL).
#[test]
fn each_invalid_layer_serial_port_or_results_url_gives_its_error() {
    assert_each_refused(&[
        (
            r#","layers":[{"name":"a","kind":"linear","on":"b"},{"name":"b","kind":"linear","on":"a"}]"#.to_string(),
            "layers[0].on: \"b\" makes a cycle (a -> b -> a); expected layers that stack without a loop",
        ),
        (
            r#","layers":[{"name":"a","kind":"linear","on":"a"}]"#.to_string(),
            "layers[0].on: \"a\" makes a cycle (a -> a)",
        ),
        (
            r#","layers":[{"name":"a","kind":"linear","on":"r9"}]"#.to_string(),
            "layers[0].on: \"r9\" is not an array, a layer or a disk; expected one of a or a disk path",
        ),
        (
            format!(
                r#","arrays":[{{"name":"r0","level":"raid0",{TWO}}}],"layers":[{{"name":"r0","kind":"crypt","on":"r0"}}]"#
            ),
            "layers[0].name: \"r0\" is already the name of arrays[0]; expected a unique name",
        ),
        (
            r#","layers":[{"name":"c","kind":"crypt","on":"sim:ssd:8M","key_bits":384}]"#.to_string(),
            "layers[0].key_bits: 384 is not an aes-xts-plain64 key size; expected 256 or 512",
        ),
        (
            r#","layers":[{"name":"c","kind":"crypt","on":"sim:ssd:8M","cipher":"des"}]"#.to_string(),
            "layers[0].cipher: \"des\" is not a supported cipher; expected \"aes-xts-plain64\"",
        ),
        (
            r#","layers":[{"name":"c","kind":"crypt","on":"sim:ssd:8M","offset":"1M"}]"#.to_string(),
            "layers[0].offset: given for a crypt layer",
        ),
        (
            r#","layers":[{"name":"c","kind":"linear","on":"sim:ssd:8M","sector_size":4096}]"#.to_string(),
            "layers[0].sector_size: given for a linear layer",
        ),
        (
            r#","layers":[{"name":"c","kind":"linear","on":"sim:ssd:8M","offset":"8M"}]"#.to_string(),
            "layers[0].offset: 8388608 B does not fit sim:ssd:8M",
        ),
        (
            r#","layers":[{"name":"c","kind":"linear","on":"sim:ssd:8M","read_ahead":"6k"}]"#.to_string(),
            "layers[0].read_ahead: 6144 B is not a readahead; expected a multiple of 4 KiB up to 1 GiB",
        ),
        (
            r#","layers":[{"name":"c","kind":"mirror","on":"sim:ssd:8M"}]"#.to_string(),
            "layers[0].kind: \"mirror\" is not a layer kind; expected crypt or linear",
        ),
        (
            format!(
                r#","arrays":[{{"name":"r0","level":"raid0",{TWO}}}],"layers":[{{"name":"c","kind":"crypt","on":"sim:ssd:64M"}}]"#
            ),
            "layers[0].on: \"sim:ssd:64M\" is already used by arrays[0].members[0]",
        ),
        (
            r#","serial_ports":["ttyS1","/dev/ttyS2"]"#.to_string(),
            "serial_ports[1]: \"/dev/ttyS2\" is not a serial port; expected a name like \"ttyS1\"",
        ),
        (
            r#","results_url":"http://10.0.2.100/{machine}/{date}.json""#.to_string(),
            "results_url: \"{date}\" is not a placeholder; expected {machine}, {run}, {n}",
        ),
        (
            r#","results_url":"s3://bucket/{machine}.json""#.to_string(),
            "results_url: \"s3://bucket/machine.json\" is not an http:// or https:// URL",
        ),
    ]);
    // Unknown keys are refused by the parser.
    assert!(parse(r#"{"layers":[{"name":"r","kind":"crypt","on":"x","key":"00"}]}"#, "t").is_err());
}
