//! The guide: README.md (the front door) and the pages of docs/. Host only,
//! nothing run but the reading of files.
//!
//! - Every example config in them fits the config schema
//!   (`schema/bootbench.config-1.schema.json`): each fenced block whose info
//!   string is exactly `json` is a config, or a fragment of one (a block
//!   that starts with `"key":` is one or more of the config's keys, checked
//!   in a config of its own beside `"profile": "quick"`). JSON that is not a
//!   config (an excerpt of a result document) is fenced as `json result`.
//! - Every relative link (`[text](path)`, `[text](path#anchor)`,
//!   `[text](#anchor)`) resolves: the file exists, and an anchor names a
//!   heading of that file, computed as GitHub computes it (lowercase, spaces
//!   to `-`, punctuation removed, `-1`, `-2`, ... for a repeated heading).
//! - `docs/config-reference.md` is rendered from the schema, the one
//!   definition of the config: every property by its path, its type, the
//!   values, pattern or range the schema allows, and its description. After
//!   a change of the schema, `UPDATE_GOLDEN=1 cargo test -p bootbench-init
//!   --test docs` writes the page anew (the name the golden files of
//!   report/tests use).
//! - The README stays a front door (at most 300 lines, `make qemu` and
//!   `make test` in it, a map to every page) and no page outgrows a reading
//!   (600 lines).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
const SCHEMA: &str = "schema/bootbench.config-1.schema.json";
const REFERENCE: &str = "docs/config-reference.md";

fn root() -> PathBuf {
    Path::new(MANIFEST).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

fn schema() -> Value {
    serde_json::from_str(&read(SCHEMA)).expect("the config schema is JSON")
}

/// README.md and every `.md` under docs/, as paths relative to the
/// workspace, sorted.
fn pages() -> Vec<String> {
    let mut out = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// The fenced code blocks of a page: (line of the opening fence, info
/// string, body).
fn fenced_blocks(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String, String)> = None;
    for (n, line) in text.lines().enumerate() {
        match open.take() {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some((n + 1, info.trim().to_string(), String::new()));
                }
            }
            Some((at, info, mut body)) => {
                if line.starts_with("```") {
                    out.push((at, info, body));
                } else {
                    body.push_str(line);
                    body.push('\n');
                    open = Some((at, info, body));
                }
            }
        }
    }
    assert!(open.is_none(), "a fenced block is never closed");
    out
}

/// The lines of a page outside its fenced code blocks, with their numbers
/// (from 1).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((n + 1, line));
        }
    }
    out
}

/// GitHub's anchor of a heading: lowercase, letters, digits, `-` and `_`
/// kept, spaces to `-`, everything else dropped (links in the heading
/// count by their text).
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // [text](target) -> text
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](").map(|i| open + i) else {
            break;
        };
        let Some(close) = rest[mid..].find(')').map(|i| mid + i) else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..mid]);
        rest = &rest[close + 1..];
    }
    text.push_str(rest);
    text.trim()
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings (ATX headings outside fenced blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let s = slug(line[hashes..].trim().trim_end_matches('#').trim());
        let n = seen.entry(s.clone()).or_insert(0);
        out.insert(if *n == 0 { s.clone() } else { format!("{s}-{n}") });
        *n += 1;
    }
    out
}

/// A line without its inline code spans (a link inside one is code).
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for part in line.split('`') {
        if !in_code {
            out.push_str(part);
        }
        in_code = !in_code;
    }
    out
}

/// The targets of a page's inline links `[text](target)`, with their lines.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push((n, after[..end].trim().to_string()));
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_resolves_to_a_file_and_a_heading() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        let dir = Path::new(&page).parent().unwrap().to_path_buf();
        for (line, target) in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                PathBuf::from(&page)
            } else if path.starts_with('/') {
                bad.push(format!(
                    "{page}:{line}: {target}: an absolute path (GitHub resolves it from the host)"
                ));
                continue;
            } else {
                dir.join(path)
            };
            let full = root().join(&file);
            if !full.exists() {
                bad.push(format!("{page}:{line}: {target}: no file {}", file.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let is_md = full.extension().is_some_and(|x| x == "md");
                let heads = if is_md {
                    anchors(&std::fs::read_to_string(&full).unwrap())
                } else {
                    BTreeSet::new()
                };
                if !heads.contains(anchor) {
                    bad.push(format!(
                        "{page}:{line}: {target}: no heading of {} has the anchor #{anchor}",
                        file.display()
                    ));
                }
            }
        }
    }
    assert!(
        checked >= 20,
        "only {checked} relative links found: is the guide there?"
    );
    assert!(bad.is_empty(), "links that do not resolve:\n{}", bad.join("\n"));
}

#[test]
fn github_anchors_as_github_computes_them() {
    assert_eq!(slug("Safety"), "safety");
    assert_eq!(
        slug("Hidden capacity: HPA, DCO, NVMe capacity outside every namespace"),
        "hidden-capacity-hpa-dco-nvme-capacity-outside-every-namespace"
    );
    assert_eq!(
        slug("The posts' experiments: `examples/`"),
        "the-posts-experiments-examples"
    );
    assert_eq!(slug("The I/O engines"), "the-io-engines");
    assert_eq!(slug("`surface_scan`"), "surface_scan");
    assert_eq!(slug("See [the page](x.md#y) here"), "see-the-page-here");
    let a = anchors("# A\n\n```\n# not a heading\n```\n## A\n### B-c\n");
    assert_eq!(a.into_iter().collect::<Vec<_>>(), ["a", "a-1", "b-c"]);
}

#[test]
fn every_example_config_in_the_guide_fits_the_schema() {
    let schema = schema();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let mut checked = Vec::new();
    let mut bad = Vec::new();
    for page in pages() {
        for (line, info, body) in fenced_blocks(&read(&page)) {
            if info != "json" {
                continue;
            }
            let at = format!("{page}:{line}");
            let trimmed = body.trim();
            let doc: Value = if trimmed.starts_with('"') {
                // A fragment: the config's keys, in a config of their own.
                let keys: Map<String, Value> = serde_json::from_str(&format!("{{{trimmed}}}"))
                    .unwrap_or_else(|e| panic!("{at}: the fragment is not a config's keys: {e}"));
                let mut cfg = Map::new();
                cfg.insert("profile".into(), "quick".into());
                cfg.extend(keys);
                Value::Object(cfg)
            } else {
                serde_json::from_str(trimmed).unwrap_or_else(|e| {
                    panic!("{at}: not JSON ({e}); a block of JSON that is not a config is fenced as `json result`")
                })
            };
            let errors: Vec<String> = v
                .iter_errors(&doc)
                .map(|e| format!("  {e} at {}", e.instance_path))
                .collect();
            if !errors.is_empty() {
                bad.push(format!(
                    "{at}: does not fit {SCHEMA} (JSON that is not a config is fenced as `json result`):\n{}",
                    errors.join("\n")
                ));
            }
            checked.push(at);
        }
    }
    assert!(
        checked.len() >= 3,
        "expected the guide's example configs (```json blocks), found {checked:?}"
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

// ---------------------------------------------------------------------
// The config reference, rendered from the schema.

/// A schema node with `$ref` (`#/$defs/NAME`) followed.
fn resolve<'a>(schema: &'a Value, v: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r
                .strip_prefix("#/$defs/")
                .unwrap_or_else(|| panic!("a $ref this renderer does not know: {r}"));
            resolve(schema, &schema["$defs"][name])
        }
        None => v,
    }
}

/// Code in a table cell: backticks around, `|` escaped.
fn code(s: &str) -> String {
    format!("`{}`", s.replace('|', "\\|"))
}

fn cell(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

fn json_code(v: &Value) -> String {
    code(&v.to_string())
}

/// The alternatives of a node (`anyOf` / `oneOf`) that say something of
/// the value (not only `required`).
fn alternatives<'a>(schema: &'a Value, v: &'a Value) -> Vec<&'a Value> {
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| v.get(*k).and_then(Value::as_array))
        .flatten()
        .map(|a| resolve(schema, a))
        .filter(|a| a.as_object().is_some_and(|o| o.keys().any(|k| k != "required")))
        .collect()
}

/// `required`-only alternatives: "at least one of".
fn one_of_required(v: &Value) -> Vec<String> {
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| v.get(*k).and_then(Value::as_array))
        .flatten()
        .filter(|a| a.as_object().is_some_and(|o| o.keys().all(|k| k == "required")))
        .filter_map(|a| a["required"].as_array())
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(code)
                .collect::<Vec<_>>()
                .join(" and ")
        })
        .collect()
}

/// The type of a node, in words.
fn type_of(schema: &Value, v: &Value) -> String {
    let v = resolve(schema, v);
    let alts = alternatives(schema, v);
    if !alts.is_empty() {
        let mut tys: Vec<String> = Vec::new();
        for a in alts {
            let t = type_of(schema, a);
            if !tys.contains(&t) {
                tys.push(t);
            }
        }
        return tys.join(" or ");
    }
    if let Some(c) = v.get("const") {
        return match c {
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Bool(_) => "boolean",
            _ => "value",
        }
        .to_string();
    }
    match v.get("type").and_then(Value::as_str) {
        Some("array") => match v.get("items") {
            Some(items) => match type_of(schema, items) {
                t if t.contains(" or ") => format!("array of ({t})"),
                t => format!("array of {t}"),
            },
            None => "array".to_string(),
        },
        Some("object") if v.get("properties").is_none() && v["additionalProperties"].is_object() => {
            format!("object of {}", type_of(schema, &v["additionalProperties"]))
        }
        Some(t) => t.to_string(),
        None => "any".to_string(),
    }
}

/// What a node allows beyond its type: values, pattern, range, lengths.
fn allowed(schema: &Value, v: &Value) -> Vec<String> {
    let v = resolve(schema, v);
    let mut out = Vec::new();
    let alts = alternatives(schema, v);
    if !alts.is_empty() {
        for a in alts {
            let inner = allowed(schema, a);
            if !inner.is_empty() {
                out.push(format!("{}: {}", type_of(schema, a), inner.join(", ")));
            }
        }
    }
    if let Some(c) = v.get("const") {
        out.push(format!("only {}", json_code(c)));
    }
    if let Some(e) = v.get("enum").and_then(Value::as_array) {
        out.push(format!(
            "one of {}",
            e.iter().map(json_code).collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(p) = v.get("pattern").and_then(Value::as_str) {
        out.push(format!("pattern {}", code(p)));
    }
    let bound = |k: &str| v.get(k).map(Value::to_string);
    let lo = bound("minimum")
        .map(|x| format!("{x} \u{2264}"))
        .or(bound("exclusiveMinimum").map(|x| format!("{x} <")));
    let hi = bound("maximum")
        .map(|x| format!("\u{2264} {x}"))
        .or(bound("exclusiveMaximum").map(|x| format!("< {x}")));
    match (lo, hi) {
        (Some(l), Some(h)) => out.push(format!("{l} value {h}")),
        (Some(l), None) => out.push(format!("{l} value")),
        (None, Some(h)) => out.push(format!("value {h}")),
        (None, None) => {}
    }
    for (k, what) in [
        ("minLength", "characters: at least {}"),
        ("maxLength", "characters: at most {}"),
        ("minItems", "items: at least {}"),
        ("maxItems", "items: at most {}"),
        ("minProperties", "keys: at least {}"),
        ("maxProperties", "keys: at most {}"),
    ] {
        if let Some(n) = v.get(k) {
            out.push(what.replace("{}", &n.to_string()));
        }
    }
    if v.get("uniqueItems") == Some(&Value::Bool(true)) {
        out.push("no item twice".to_string());
    }
    if let Some(items) = v.get("items") {
        let inner = allowed(schema, items);
        if !inner.is_empty() {
            out.push(format!("each item: {}", inner.join(", ")));
        }
    }
    if let Some(pp) = v.get("patternProperties").and_then(Value::as_object) {
        for (p, _) in pp {
            out.push(format!("keys matching {}", code(p)));
        }
    }
    let any = one_of_required(v);
    if !any.is_empty() {
        out.push(format!("needs at least one of {}", any.join(", ")));
    }
    if let Some(d) = v.get("default") {
        out.push(format!("default {}", json_code(d)));
    }
    out
}

fn description(schema: &Value, v: &Value) -> String {
    let r = resolve(schema, v);
    v.get("description")
        .or(r.get("description"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// One row of the reference: a property by its path.
struct Row {
    path: String,
    ty: String,
    allowed: Vec<String>,
    description: String,
}

/// The object nodes whose properties lie at a node's path: the node
/// itself, its alternatives, and for an array its items (path + `[]`),
/// for a map its values (path + `.*`).
fn children<'a>(schema: &'a Value, v: &'a Value, path: &str) -> Vec<(String, &'a Value)> {
    let v = resolve(schema, v);
    let mut out = Vec::new();
    if v.get("properties").is_some() {
        out.push((path.to_string(), v));
    }
    for a in alternatives(schema, v) {
        out.extend(children(schema, a, path));
    }
    if let Some(items) = v.get("items") {
        out.extend(children(schema, items, &format!("{path}[]")));
    }
    if let Some(ap) = v.get("additionalProperties").filter(|x| x.is_object()) {
        out.extend(children(schema, ap, &format!("{path}.*")));
    }
    if let Some(pp) = v.get("patternProperties").and_then(Value::as_object) {
        for x in pp.values() {
            out.extend(children(schema, x, &format!("{path}.*")));
        }
    }
    out
}

fn rows(schema: &Value, v: &Value, path: &str, required: bool, out: &mut Vec<Row>) {
    let mut allowed = allowed(schema, v);
    if required {
        allowed.insert(0, "**required**".to_string());
    }
    out.push(Row {
        path: path.to_string(),
        ty: type_of(schema, v),
        allowed,
        description: description(schema, v),
    });
    for (at, obj) in children(schema, v, path) {
        let req: Vec<&str> = obj["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (k, p) in obj["properties"].as_object().unwrap() {
            rows(schema, p, &format!("{at}.{k}"), req.contains(&k.as_str()), out);
        }
    }
}

/// docs/config-reference.md, from the schema.
fn render_reference(schema: &Value) -> String {
    let mut s = String::new();
    s.push_str("# Config reference\n\n");
    s.push_str(
        "<!-- Generated from schema/bootbench.config-1.schema.json by init/tests/docs.rs: do not edit.\n     \
         After a change of the schema: UPDATE_GOLDEN=1 cargo test -p bootbench-init --test docs -->\n\n",
    );
    s.push_str(&format!(
        "Every key of `bootbench.json`, rendered from the one definition of the config,\n\
         [`{SCHEMA}`](../{SCHEMA}) ({}). [Writing a config](writing-a-config.md)\n\
         explains the keys with examples, and each task's page says more of its own\n\
         (for example [acceptance](acceptance.md), [burn-in and scans](burn-in-and-scans.md),\n\
         [arrays and existing storage](arrays-and-existing-storage.md), [safety](safety.md)).\n\n",
        schema["title"].as_str().unwrap_or("the config schema")
    ));
    if let Some(d) = schema["description"].as_str() {
        s.push_str(&format!("{d}\n\n"));
    }
    let top = allowed(schema, schema);
    if !top.is_empty() {
        s.push_str(&format!("The config is a JSON object: {}.", top.join(", ")));
    }
    if schema["additionalProperties"] == false {
        s.push_str(" Unknown keys are errors, at every level whose keys are listed.");
    }
    s.push_str(
        "\n\nA key's path joins the keys from the top with `.`; `[]` stands for each item of a list, \
         `*` for any key of a map. Units: MB = 10^6 bytes, MiB = 2^20 bytes.\n\n",
    );
    let props = schema["properties"].as_object().expect("the schema lists its keys");
    s.push_str("## The keys\n\n");
    for (k, _) in props {
        s.push_str(&format!("- [`{k}`](#{})\n", slug(&format!("`{k}`"))));
    }
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (k, p) in props {
        let mut out = Vec::new();
        rows(schema, p, k, required.contains(&k.as_str()), &mut out);
        s.push_str(&format!("\n## `{k}`\n\n"));
        s.push_str("| key | type | allowed | description |\n| --- | --- | --- | --- |\n");
        for r in out {
            s.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                code(&r.path),
                cell(&r.ty),
                r.allowed.join("; "),
                cell(&r.description)
            ));
        }
    }
    s
}

#[test]
fn the_config_reference_is_the_schema_rendered() {
    let got = render_reference(&schema());
    let path = root().join(REFERENCE);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &got).expect("write docs/config-reference.md");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if got != want {
        let first = got
            .lines()
            .zip(want.lines())
            .position(|(g, w)| g != w)
            .map_or_else(|| "lengths differ".to_string(), |n| format!("first at line {}", n + 1));
        panic!(
            "{REFERENCE} is not {SCHEMA} rendered ({first}); run \
             `UPDATE_GOLDEN=1 cargo test -p bootbench-init --test docs` to write it anew"
        );
    }
    // Every property of the schema is in it, by its path.
    let mut missing = Vec::new();
    let schema = schema();
    for (k, p) in schema["properties"].as_object().unwrap() {
        let mut out = Vec::new();
        rows(&schema, p, k, false, &mut out);
        missing.extend(
            out.into_iter()
                .map(|r| r.path)
                .filter(|p| !got.contains(&format!("| {} |", code(p)))),
        );
    }
    assert!(missing.is_empty(), "not in the reference: {missing:?}");
}

#[test]
fn the_readme_is_a_front_door_and_every_page_reads_at_once() {
    let readme = read("README.md");
    let n = readme.lines().count();
    assert!(
        n <= 300,
        "README.md has {n} lines; the front door holds at most 300, the rest goes to docs/"
    );
    for cmd in ["make qemu", "make test"] {
        assert!(readme.contains(&format!("    {cmd}\n")), "README.md must show `{cmd}`");
    }
    let index = read("docs/README.md");
    for page in pages().iter().filter(|p| p.starts_with("docs/")) {
        let name = page.trim_start_matches("docs/");
        if name != "README.md" {
            assert!(
                readme.contains(&format!("(docs/{name})")) && index.contains(&format!("({name})")),
                "{page} must be linked from README.md's map and from docs/README.md"
            );
        }
        let n = read(page).lines().count();
        assert!(n <= 600, "{page} has {n} lines; split it so that it reads at once");
    }
}

/// The workspace's crates that have a `src/`: their folders.
fn crates() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root())
        .expect("the workspace")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file() && p.join("src").is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// What a crate's README must name: every folder under `src/` (as
/// `name/`), and every source file of `src/` and of its folders one level
/// down (as `name.rs`; a folder's `mod.rs` is the folder's).
fn owned_names(src: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![(src.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.insert(format!("{name}/"));
                stack.push((p, depth + 1));
            } else if depth <= 1 && name.ends_with(".rs") && name != "mod.rs" {
                out.insert(name);
            }
        }
    }
    out
}

/// Every crate has a README.md that names each of its folders and what
/// lies in them (`owned_names`): a file added without a word in its
/// crate's README fails here.
#[test]
fn every_crate_readme_names_its_folders_and_files() {
    let crates = crates();
    assert!(crates.len() >= 7, "the workspace's crates: {crates:?}");
    let mut missing = Vec::new();
    for c in &crates {
        let readme = root().join(c).join("README.md");
        let Ok(text) = std::fs::read_to_string(&readme) else {
            missing.push(format!("{c}/README.md: there is none"));
            continue;
        };
        for name in owned_names(&root().join(c).join("src")) {
            if !text.contains(&format!("`{name}`")) && !text.contains(&format!("`src/{name}`")) {
                missing.push(format!("{c}/README.md does not name `{name}`"));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
