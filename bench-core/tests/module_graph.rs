//! No import circles between the modules of the workspace's crates: every
//! `crate::` and `super::` path in the code (not comments, not `#[cfg(test)]`
//! modules) is an edge from the file that names it to the deepest module file
//! the path reaches; between the entries of each folder (a subfolder counting
//! as one), the graph must have no cycle. One checker for every crate with
//! more than a handful of modules, listed in [`CRATES`]; init's layers and
//! report's stages are checked on top. Run it alone with
//! `cargo test -p bench-core --test module_graph -- --nocapture`, which also
//! prints every crate's graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The crates checked: each one's folder in the workspace, and the fewest
/// module files the scan must find there (so a moved `src` fails the test
/// instead of passing empty). A crate added to the workspace with more than
/// a handful of modules is added here.
const CRATES: &[(&str, usize)] = &[
    ("bench-core", 20),
    ("init", 30),
    ("report", 10),
    ("image", 10),
    ("qemu", 5),
];

/// The workspace's root: this crate's parent folder.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Module path (`boot::stick`) of each source file under `src`, the crate
/// root (`lib.rs`, or `main.rs` when there is no `lib.rs`) being `crate`.
/// A `main.rs` beside a `lib.rs` is a binary crate of its own that reaches
/// the library by the library's name: it is left out, and must then declare
/// no module of its own (which the scan would not see). Modules declared
/// `#[cfg(test)] mod name;` are left out with the test modules.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let lib = src.join("lib.rs").is_file();
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let name = match (parts.join("::").as_str(), lib) {
                ("lib", true) | ("main", false) => "crate".to_owned(),
                ("main", true) => {
                    let text = fs::read_to_string(&path).unwrap();
                    assert!(
                        declared(&code(&text)).is_empty(),
                        "{}: a binary beside a library declares modules the scan does not see",
                        path.display()
                    );
                    continue;
                }
                (n, _) => n.to_owned(),
            };
            out.insert(name, path);
        }
    }
    let test_only: Vec<String> = out
        .iter()
        .flat_map(|(me, path)| {
            let text = fs::read_to_string(path).unwrap();
            test_modules(&text)
                .into_iter()
                .map(move |m| if me == "crate" { m } else { format!("{me}::{m}") })
        })
        .collect();
    for m in test_only {
        out.retain(|name, _| name != &m && !name.starts_with(&format!("{m}::")));
    }
    out
}

/// What follows `mod ` in a module's declaration (`mod x;`, `pub(crate) mod
/// x {`, ...), or `None` if the line declares none.
fn mod_decl(line: &str) -> Option<&str> {
    let mut l = line.trim_start();
    if let Some(rest) = l.strip_prefix("pub") {
        l = match rest.strip_prefix('(') {
            Some(scope) => scope.split_once(')')?.1,
            None => rest,
        }
        .trim_start();
    }
    l.strip_prefix("mod ")
}

/// The names of the `mod name;` lines of a file's code.
fn declared(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| mod_decl(l)?.strip_suffix(';').map(|n| n.trim().to_owned()))
        .collect()
}

/// The modules a file declares `#[cfg(test)] mod name;` (in files of their own).
fn test_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line == "#[cfg(test)]" {
            if let Some(name) = lines.next().and_then(|n| mod_decl(n)?.trim_end().strip_suffix(';')) {
                out.push(name.trim().to_owned());
            }
        }
    }
    out
}

/// The code of a file without comments and without its test modules.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") && lines.peek().is_some_and(|n| mod_decl(n).is_some()) {
            // A test module runs to the end of its braces; `mod x;` has none.
            let mut depth = 0i32;
            let mut opened = false;
            for l in lines.by_ref() {
                for c in l.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if !opened && l.trim_end().ends_with(';') || opened && depth <= 0 {
                    break;
                }
            }
            continue;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line.split(" //").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

/// The modules a file's code names: `crate::a::b` and `super::c` paths,
/// also inside `use crate::{a::x, b}` groups, resolved to the deepest module
/// that is a file.
fn edges(me: &str, code: &str, files: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let here: Vec<&str> = if me == "crate" {
        vec![]
    } else {
        me.split("::").collect()
    };
    // The module `super` names: the parent of this file's module.
    let parent = &here[..here.len().saturating_sub(1)];
    let bytes = code.as_bytes();
    for (root, base) in [("crate::", Vec::<&str>::new()), ("super::", parent.to_vec())] {
        let mut from = 0;
        while let Some(i) = code[from..].find(root) {
            let at = from + i;
            from = at + root.len();
            // Not a name that ends so (`my_crate::`), nor the second
            // `super` of `super::super::` (counted with the first).
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') || code[..at].ends_with("::")
            {
                continue;
            }
            for path in expand(&code[from..]) {
                let mut segs: Vec<String> = base.iter().map(|s| (*s).to_owned()).collect();
                for seg in path {
                    if seg == "super" {
                        segs.pop();
                    } else {
                        segs.push(seg);
                    }
                }
                // Deepest prefix that is a module file.
                for n in (1..=segs.len()).rev() {
                    let name = segs[..n].join("::");
                    if files.contains_key(&name) {
                        if name != me {
                            out.insert(name);
                        }
                        break;
                    }
                }
            }
        }
    }
    out
}

/// The paths after `crate::`: `a::b::C` or a `{a::x, b::{y, z}}` group.
fn expand(rest: &str) -> Vec<Vec<String>> {
    let mut segs = Vec::new();
    let mut s = rest;
    loop {
        if let Some(group) = s.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            let mut out = Vec::new();
            let mut depth = 0;
            let mut start = 0;
            let inner = &group[..end];
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.extend(prefixed(&segs, &inner[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            out.extend(prefixed(&segs, &inner[start..]));
            return out;
        }
        let len = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        if len == 0 {
            break;
        }
        segs.push(s[..len].to_owned());
        s = &s[len..];
        match s.strip_prefix("::") {
            Some(next) => s = next,
            None => break,
        }
    }
    vec![segs]
}

fn prefixed(head: &[String], item: &str) -> Vec<Vec<String>> {
    let item = item.trim();
    if item.is_empty() || item == "self" {
        return vec![head.to_vec()];
    }
    expand(item)
        .into_iter()
        .map(|tail| {
            head.iter()
                .cloned()
                .chain(tail.into_iter().filter(|s| s != "self"))
                .collect()
        })
        .collect()
}

/// The import graph of the crate whose sources are in `src`.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = modules(src);
    files
        .iter()
        .map(|(name, path)| {
            let text = fs::read_to_string(path).unwrap();
            (name.clone(), edges(name, &code(&text), &files))
        })
        .collect()
}

/// A cycle in `g`, if there is one (depth-first search).
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        n: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(2) => return None,
            Some(1) => {
                let i = path.iter().position(|p| *p == n).unwrap();
                let mut c: Vec<String> = path[i..].iter().map(|s| (*s).to_owned()).collect();
                c.push(n.to_owned());
                return Some(c);
            }
            _ => {}
        }
        state.insert(n, 1);
        path.push(n);
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n, 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

/// The graph the rule applies to: an edge between two files is one between
/// the two entries (file or folder) of their nearest common folder that hold
/// them, so a folder counts as one module to its siblings. An edge between a
/// folder's `mod.rs` and a file inside it is containment, not an import
/// circle, and is left out.
fn between_entries(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, es) in g {
        for b in es {
            let (sa, sb): (Vec<&str>, Vec<&str>) = (a.split("::").collect(), b.split("::").collect());
            let k = sa.iter().zip(&sb).take_while(|(x, y)| x == y).count();
            if a == "crate" || k == sa.len() || k == sb.len() {
                continue;
            }
            out.entry(sa[..=k].join("::")).or_default().insert(sb[..=k].join("::"));
        }
    }
    out
}

#[test]
fn no_import_circle_between_modules() {
    let mut circles = Vec::new();
    for &(krate, fewest) in CRATES {
        let g = graph(&workspace().join(krate).join("src"));
        println!("== {krate}");
        for (n, es) in &g {
            println!("{n} -> {}", es.iter().cloned().collect::<Vec<_>>().join(" "));
        }
        assert!(g.len() >= fewest, "the scan found {krate}'s files: {:?}", g.keys());
        assert!(g.values().any(|es| !es.is_empty()), "the scan sees {krate}'s imports");
        if let Some(c) = cycle(&between_entries(&g)) {
            circles.push(format!("{krate}: {}", c.join(" -> ")));
        }
    }
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
}

/// init's layers: the two callers of the executor (PID 1's unattended run
/// and the live command) do not import each other, and `sys` (all of the
/// unsafe code) imports nothing of the crate.
#[test]
fn init_callers_sit_above_the_executor() {
    let g = graph(&workspace().join("init/src"));
    assert!(
        g["boot::unattended"].contains("run"),
        "the scan sees imports: the unattended run calls the executor"
    );
    let e = between_entries(&g);
    let top = |n: &str| e.get(n).cloned().unwrap_or_default();
    assert!(!top("cli").contains("boot") && !top("boot").contains("cli"), "{e:?}");
    assert!(!top("run").contains("boot") && !top("run").contains("cli"), "{e:?}");
    assert!(
        top("sys").is_empty(),
        "sys imports nothing of the crate: {:?}",
        top("sys")
    );
}

/// report's stages (report/README.md): documents are read (`read`), their
/// figures taken (`figures`), then rendered for a person (`render`) or
/// exported for other tools (`export`). Each stage imports only the stages
/// before it: `read` none of the others, `figures` only `read`, `export`
/// no renderer; `render` may read an export back (`fleet` reads the tidy
/// Parquet table). `output` (writing files) and `cli` import nothing;
/// `verify` (what a document's attestation proves) imports none of them
/// for now.
#[test]
fn report_stages_import_only_the_stages_before_them() {
    let g = graph(&workspace().join("report/src"));
    assert!(
        g["render::compare"].contains("figures::metric"),
        "the scan sees the stage folders' imports: {:?}",
        g.keys()
    );
    let e = between_entries(&g);
    let may: &[(&str, &[&str])] = &[
        ("read", &["output"]),
        ("figures", &["read"]),
        ("export", &["read", "figures", "output", "cli"]),
        ("render", &["read", "figures", "export", "output"]),
        ("output", &[]),
        ("cli", &[]),
        ("verify", &[]),
    ];
    for &(stage, allowed) in may {
        for to in e.get(stage).into_iter().flatten() {
            assert!(
                allowed.contains(&to.as_str()),
                "report: {stage} imports {to}, which it may not: {e:?}"
            );
        }
    }
    let tops: BTreeSet<&str> = g.keys().map(|k| k.split("::").next().unwrap()).collect();
    assert_eq!(
        tops,
        BTreeSet::from(["cli", "crate", "export", "figures", "output", "read", "render", "verify"]),
        "report/src's top: the four stages, cli, output, verify and the crate root"
    );
}

/// The scanner itself: it must see a circle that is there.
#[test]
fn the_scanner_finds_a_planted_circle() {
    let files: BTreeMap<String, PathBuf> = ["crate", "a", "a::x", "b"]
        .iter()
        .map(|n| ((*n).to_owned(), PathBuf::new()))
        .collect();
    let a = edges("a", "use crate::b::Thing;\nuse super::c;", &files);
    let b = edges("b", "pub use crate::{a::x::{self, Y}, c};\n", &files);
    assert_eq!(a, BTreeSet::from(["b".to_owned()]));
    assert_eq!(b, BTreeSet::from(["a::x".to_owned()]));
    let x = edges("a::x", "fn f() { super::super::b::g() }", &files);
    assert_eq!(
        x,
        BTreeSet::from(["b".to_owned()]),
        "super::super reaches the crate root"
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_owned(), a);
    g.insert("b".to_owned(), b);
    g.insert("a::x".to_owned(), BTreeSet::from(["b".to_owned()]));
    assert_eq!(cycle(&g), Some(vec!["b".into(), "a::x".into(), "b".into()]));
    // Between entries, a -> b and b -> a::x are a circle between a and b;
    // a file that uses its folder's mod.rs is not.
    let e = between_entries(&g);
    assert_eq!(cycle(&e), Some(vec!["a".into(), "b".into(), "a".into()]));
    g.insert("a::x".to_owned(), BTreeSet::from(["a".to_owned()]));
    g.insert("b".to_owned(), BTreeSet::new());
    assert_eq!(cycle(&between_entries(&g)), None);
    let stripped = code("use crate::a;\n// crate::b\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\n");
    assert!(
        !stripped.contains("crate::b") && stripped.contains("crate::a"),
        "{stripped}"
    );
    // A test module that other test modules reach is a test module too.
    for vis in ["pub ", "pub(crate) ", "pub(super) ", "pub(in crate::a) "] {
        let stripped = code(&format!(
            "use crate::a;\n#[cfg(test)]\n{vis}mod tests {{\n    use crate::b;\n}}\n"
        ));
        assert!(!stripped.contains("crate::b"), "{vis}: {stripped}");
    }
}

/// The whole scan on a crate written to a temporary folder: the library
/// root, a folder with a `mod.rs`, a test-only module file, a binary beside
/// the library; the circle `a -> b -> a::x` is found, and goes when it is cut.
#[test]
fn the_scan_finds_a_planted_circle_in_files() {
    let src = std::env::temp_dir().join(format!("module-graph-{}", std::process::id()));
    let _ = fs::remove_dir_all(&src);
    fs::create_dir_all(src.join("a")).unwrap();
    let write = |p: &str, t: &str| fs::write(src.join(p), t).unwrap();
    write("lib.rs", "pub mod a;\npub mod b;\n#[cfg(test)]\nmod testutil;\n");
    write("main.rs", "use lib::a;\nfn main() {}\n");
    write("a/mod.rs", "pub mod x;\nuse crate::b::B;\n");
    write("a/x.rs", "pub struct X;\nfn f() { super::super::testutil::t() }\n");
    write("b.rs", "pub struct B;\nuse crate::{a::x::X, testutil};\n");
    write("testutil.rs", "use crate::a;\nuse crate::b;\n");
    let g = graph(&src);
    assert_eq!(
        g.keys().cloned().collect::<Vec<_>>(),
        ["a", "a::x", "b", "crate"],
        "main.rs beside lib.rs and the test-only module are left out"
    );
    assert_eq!(g["a"], BTreeSet::from(["b".to_owned()]));
    assert_eq!(g["b"], BTreeSet::from(["a::x".to_owned()]));
    assert_eq!(
        cycle(&between_entries(&g)),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
    write("b.rs", "pub struct B;\n");
    assert_eq!(cycle(&between_entries(&graph(&src))), None);
    // A binary beside the library may not hide modules from the scan.
    write("main.rs", "mod hidden;\nfn main() {}\n");
    let hidden = std::panic::catch_unwind(|| modules(&src));
    fs::remove_dir_all(&src).unwrap();
    assert!(hidden.is_err(), "main.rs's own modules are refused");
}
