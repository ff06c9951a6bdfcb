#![forbid(unsafe_code)]
//! frame's public API is exactly the list in `docs/frame-api.md` (the
//! fenced block after "## Public items"). A new public item needs a line
//! there, which is where a reviewer sees it; the list is regenerated with
//! `cargo xtask api`.

use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "../src/tcb_scan.rs"]
mod tcb_scan;

#[allow(dead_code)]
#[path = "../src/api_scan.rs"]
mod api_scan;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the repository").to_path_buf()
}

fn documented(root: &Path) -> Vec<String> {
    let doc = std::fs::read_to_string(root.join("docs/frame-api.md")).expect("docs/frame-api.md");
    let start = doc.find("## Public items").expect("docs/frame-api.md has a `## Public items` section");
    let rest = &doc[start..];
    let open = rest.find("```").expect("a fenced block after `## Public items`");
    let body = &rest[open + 3..];
    let body = &body[body.find('\n').map_or(0, |i| i + 1)..];
    let close = body.find("```").expect("the fenced block is closed");
    body[..close].lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect()
}

#[test]
fn frame_public_api_matches_the_documented_list() {
    let root = repo_root();
    let actual = api_scan::public_items(&root.join("frame/src/lib.rs")).expect("scan frame");
    let doc = documented(&root);
    let undocumented: Vec<&String> = actual.iter().filter(|i| !doc.contains(i)).collect();
    let gone: Vec<&String> = doc.iter().filter(|i| !actual.contains(i)).collect();
    assert!(
        undocumented.is_empty() && gone.is_empty(),
        "frame's public API differs from docs/frame-api.md\n\
         public but not documented:\n  {}\n\
         documented but not public:\n  {}",
        undocumented.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  "),
        gone.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n  "),
    );
}

#[test]
fn scanner_sees_items_and_skips_private_ones() {
    let dir = std::env::temp_dir().join(format!("api-scan-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("inner")).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        concat!(
            "pub mod a;\nmod hidden;\npub(crate) mod b;\n#[cfg(test)]\npub mod t;\n\
         pub use a::X as Y;\npub struct S { pub f: u8, g: u8 }\n\
         impl S { pub fn m(&self) {} fn p(&self) {} pub(crate) fn q() {} }\n\
         impl Clone for S { fn clone(&self) -> S { todo!() } }\n\
         pub const fn cf() {}\npub const C: u8 = 1;\npub unsafe",
            " trait Pod {}\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("a.rs"), "pub fn x() {}\nfn y() {}\n/// doc: pub fn z\npub struct X;\n").unwrap();
    std::fs::write(dir.join("hidden.rs"), "pub fn h() {}\n").unwrap();
    std::fs::write(dir.join("b.rs"), "pub fn bb() {}\n").unwrap();
    let items = api_scan::public_items(&dir.join("lib.rs")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let want = [
        "const frame::C",
        "field frame::S.f",
        "fn frame::S::m",
        "fn frame::a::x",
        "fn frame::cf",
        "mod frame::a",
        "struct frame::S",
        "struct frame::a::X",
        "trait frame::Pod",
        "use frame::Y",
    ];
    assert_eq!(items, want.map(String::from).to_vec());
}
