#![forbid(unsafe_code)]
//! Drivers run in domains (docs/domains.md): a domain's heap is freed
//! wholesale when it dies, so a driver crate must not keep heap data in a
//! `static`. A `Box`, `Vec` or `Arc` stored there during a call would
//! point into freed memory once the domain is gone. This test refuses, in
//! `drivers/*/src`, any `static` item whose type names an owning heap type.

use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "../src/tcb_scan.rs"]
mod tcb_scan;

use tcb_scan::code_only;

/// Types that own heap memory (or share it), by the names code uses.
const HEAP_TYPES: &[&str] = &[
    "Box", "Vec", "String", "Arc", "Rc", "BTreeMap", "BTreeSet", "VecDeque", "HashMap",
    "BinaryHeap", "LinkedList",
];

/// The `static` items of `src` (comments and strings removed) whose type
/// mentions a heap type: `(line, text)`.
fn heap_statics(src: &str) -> Vec<(usize, String)> {
    let code = code_only(src);
    let mut out = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let t = line.trim_start();
        let t = t.strip_prefix("pub(crate) ").unwrap_or(t);
        let t = t.strip_prefix("pub ").unwrap_or(t);
        let Some(rest) = t.strip_prefix("static ") else {
            continue;
        };
        let ty = rest.split_once(':').map_or("", |(_, ty)| ty);
        let ty = ty.split_once('=').map_or(ty, |(ty, _)| ty);
        let words: Vec<&str> = ty
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .collect();
        if HEAP_TYPES.iter().any(|h| words.contains(h)) {
            out.push((i + 1, line.trim().to_string()));
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn the_detector_sees_heap_statics_and_nothing_else() {
    let src = "static A: SpinLock<Vec<u8>> = SpinLock::new(Vec::new());\n\
               pub static B: AtomicU64 = AtomicU64::new(0);\n\
               // static C: Box<u8>\n\
               pub(crate) static D: Once<Arc<Dev>> = Once::new();\n\
               static E: [u8; 4] = [0; 4];\n\
               let s = \"static F: Vec<u8>\";\n";
    let found: Vec<usize> = heap_statics(src).into_iter().map(|(l, _)| l).collect();
    assert_eq!(found, vec![1, 4]);
}

#[test]
fn driver_crates_keep_no_heap_data_in_statics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the repository")
        .join("drivers");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(!files.is_empty(), "no driver sources under {}", root.display());
    let mut bad = Vec::new();
    for f in files {
        let src = std::fs::read_to_string(&f).expect("readable source");
        for (line, text) in heap_statics(&src) {
            bad.push(format!("{}:{line}: {text}", f.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "heap data in statics of driver crates (a domain's heap is freed wholesale; docs/domains.md):\n{}",
        bad.join("\n")
    );
}
