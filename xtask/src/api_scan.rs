//! frame's public API, listed from its source without a parser: starting at
//! `frame/src/lib.rs`, every `pub` item of every module reachable through
//! `pub mod` (items under `#[cfg(test)]` excluded), the `pub` methods and
//! constants of inherent `impl` blocks, `pub` struct fields, `pub use`
//! re-exports and `#[macro_export]` macros. The `frame_api` test compares
//! the list with the one in `docs/frame-api.md`, so the API cannot grow
//! without review.

use std::path::{Path, PathBuf};

use crate::tcb_scan::code_only;

/// One public item: `"fn frame::boot::cmdline"`, `"field frame::user::GeneralRegs.rax"`.
pub type Item = String;

const KINDS: &[&str] = &["fn", "const", "static", "struct", "enum", "trait", "type", "union"];

/// Every public item of the crate whose root is `lib`.
pub fn public_items(lib: &Path) -> Result<Vec<Item>, String> {
    let src = std::fs::read_to_string(lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    let mut out = Vec::new();
    let dir = lib.parent().unwrap_or(Path::new(".")).to_path_buf();
    scan_module(&code_only(&src), "frame", &dir, &mut out)?;
    // Exported macros live at the crate root whatever module defines them.
    let mut files = Vec::new();
    collect_rs(&dir, &mut files);
    for f in files {
        let text = code_only(&std::fs::read_to_string(&f).unwrap_or_default());
        let words: Vec<&str> = text.split_whitespace().collect();
        for w in words.windows(3) {
            if w[0].starts_with("#[macro_export]") && w[1] == "macro_rules!" {
                out.push(format!("macro frame::{}!", ident(w[2])));
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn ident(s: &str) -> String {
    s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// The index just past the brace that closes the one at `open`.
fn matching(c: &[char], open: usize) -> usize {
    let mut depth = 0;
    for (i, &ch) in c.iter().enumerate().skip(open) {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    c.len()
}

/// Top-level items of a module body: (attributes, text up to the body or
/// `;`, the body between braces if any).
struct RawItem {
    attrs: String,
    head: String,
    body: Option<String>,
}

fn split_items(code: &str) -> Vec<RawItem> {
    let c: Vec<char> = code.chars().collect();
    let mut items = Vec::new();
    let mut i = 0;
    let mut attrs = String::new();
    while i < c.len() {
        if c[i].is_whitespace() {
            i += 1;
            continue;
        }
        if c[i] == '#' {
            // An attribute: `#[...]` or `#![...]`, brackets balanced.
            let start = i;
            while i < c.len() && c[i] != '[' {
                i += 1;
            }
            let mut depth = 0;
            while i < c.len() {
                match c[i] {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            attrs.push_str(&c[start..i].iter().collect::<String>());
            attrs.push(' ');
            continue;
        }
        // The head runs to the first `;` or `{` outside parentheses,
        // brackets and angle brackets of generics (`where` clauses too).
        let start = i;
        let mut paren = 0i32;
        while i < c.len() {
            match c[i] {
                '(' | '[' => paren += 1,
                ')' | ']' => paren -= 1,
                ';' if paren == 0 => break,
                '{' if paren == 0 => break,
                _ => {}
            }
            i += 1;
        }
        let head: String = c[start..i.min(c.len())].iter().collect();
        let body = if i < c.len() && c[i] == '{' {
            let end = matching(&c, i);
            let b: String = c[i + 1..end.saturating_sub(1)].iter().collect();
            i = end;
            // `struct S { .. }` / `const X: T = T { .. };` may continue to `;`.
            let rest: String = c[i..].iter().take_while(|ch| ch.is_whitespace()).collect();
            if c.get(i + rest.len()) == Some(&';') && !head.trim_start().starts_with("impl") {
                i += rest.len() + 1;
            }
            Some(b)
        } else {
            i += 1;
            None
        };
        items.push(RawItem {
            attrs: std::mem::take(&mut attrs),
            head: head.split_whitespace().collect::<Vec<_>>().join(" "),
            body,
        });
    }
    items
}

fn cfg_test(attrs: &str) -> bool {
    let a: String = attrs.chars().filter(|c| !c.is_whitespace()).collect();
    a.contains("#[cfg(test)]")
}

/// `pub` exactly (not `pub(crate)`/`pub(super)`): the rest of the head.
fn strip_pub(head: &str) -> Option<&str> {
    head.strip_prefix("pub ")
}

/// The kind and name of an item head after `pub`, skipping qualifiers.
fn kind_and_name(rest: &str) -> Option<(&'static str, String)> {
    let mut words = rest.split_whitespace().peekable();
    while let Some(w) = words.next() {
        if matches!(w, "unsafe" | "const" | "extern" | "async") {
            // `const fn` or an unsafe function; but `const NAME: T` is a constant.
            if w == "const" && words.peek().is_some_and(|n| *n != "fn" && *n != "unsafe") {
                return Some(("const", ident(words.next()?)));
            }
            continue;
        }
        if w.starts_with('"') {
            continue; // extern "C"
        }
        let kind = KINDS.iter().find(|k| **k == w)?;
        return Some((kind, ident(words.next()?)));
    }
    None
}

/// What a walk over all modules (public or not) collects.
#[derive(Default)]
struct Walk {
    items: Vec<Item>,
    /// `pub` methods and constants of inherent impls, by bare type name.
    methods: Vec<(String, &'static str, String)>,
    /// Types defined in public modules: bare name → public path.
    public_types: Vec<(String, String)>,
    /// `pub use` in public modules: (public path, bare name).
    reexports: Vec<(String, String)>,
}

fn scan_module(code: &str, path: &str, dir: &Path, out: &mut Vec<Item>) -> Result<(), String> {
    let mut w = Walk::default();
    walk(code, path, dir, true, &mut w)?;
    // A type's methods are public where the type is: at its defining path
    // if that module is public, else at each public re-export.
    let mut homes: Vec<(String, String)> = w.public_types.clone();
    for (at, name) in &w.reexports {
        if !w.public_types.iter().any(|(n, _)| n == name) {
            homes.push((name.clone(), at.clone()));
        }
    }
    for (ty, kind, name) in &w.methods {
        for (n, at) in homes.iter().filter(|(n, _)| n == ty) {
            let _ = n;
            w.items.push(format!("{kind} {at}::{name}"));
        }
    }
    out.append(&mut w.items);
    Ok(())
}

fn walk(code: &str, path: &str, dir: &Path, public: bool, w: &mut Walk) -> Result<(), String> {
    for item in split_items(code) {
        if cfg_test(&item.attrs) {
            continue;
        }
        let head = item.head.as_str();
        if head.starts_with("impl") {
            if let (Some(body), Some(ty)) = (&item.body, impl_self_type(head)) {
                for inner in split_items(body) {
                    if cfg_test(&inner.attrs) {
                        continue;
                    }
                    if let Some((kind, name)) = strip_pub(&inner.head).and_then(kind_and_name) {
                        w.methods.push((ty.clone(), kind, name));
                    }
                }
            }
            continue;
        }
        // Modules: public ones extend the API; private ones are walked for
        // the impls of types they define and others re-export.
        let (is_pub, rest) = match strip_pub(head) {
            Some(r) => (true, r),
            None => (false, head.strip_prefix("pub(crate) ").unwrap_or(head)),
        };
        if let Some(m) = rest.strip_prefix("mod ") {
            let name = ident(m);
            let child = format!("{path}::{name}");
            let child_public = public && is_pub;
            if child_public {
                w.items.push(format!("mod {child}"));
            }
            let text = match &item.body {
                Some(b) => b.clone(),
                None => {
                    let a = dir.join(format!("{name}.rs"));
                    let b = dir.join(&name).join("mod.rs");
                    let file = if a.is_file() { a } else { b };
                    let src = std::fs::read_to_string(&file)
                        .map_err(|e| format!("{}: {e}", file.display()))?;
                    code_only(&src)
                }
            };
            walk(&text, &child, &dir.join(&name), child_public, w)?;
            continue;
        }
        if !(public && is_pub) {
            continue;
        }
        if let Some(u) = rest.strip_prefix("use ") {
            let list = match &item.body {
                Some(b) => format!("{{{b}}}"),
                None => u.to_string(),
            };
            for name in use_names(&list) {
                w.items.push(format!("use {path}::{name}"));
                w.reexports.push((format!("{path}::{name}"), name));
            }
            continue;
        }
        let Some((kind, name)) = kind_and_name(rest) else { continue };
        w.items.push(format!("{kind} {path}::{name}"));
        if matches!(kind, "struct" | "enum" | "union" | "trait") {
            w.public_types.push((name.clone(), format!("{path}::{name}")));
        }
        match (kind, &item.body) {
            ("struct", Some(body)) => {
                for field in body.split(',') {
                    let f = field.split_whitespace().collect::<Vec<_>>().join(" ");
                    let f = f.rsplit(']').next().unwrap_or(&f).trim();
                    if let Some(fr) = f.strip_prefix("pub ") {
                        w.items.push(format!("field {path}::{name}.{}", ident(fr)));
                    }
                }
            }
            // Every method of a public trait is public.
            ("trait", Some(body)) => {
                for inner in split_items(body) {
                    if let Some((k, n)) = kind_and_name(&inner.head) {
                        w.items.push(format!("{k} {path}::{name}::{n}"));
                    }
                }
            }
            _ => {}
        }
        // A tuple struct with public fields: `pub struct S(pub T);`.
        if kind == "struct" && rest.contains("(pub ") {
            w.items.push(format!("field {path}::{name}.0"));
        }
    }
    Ok(())
}

/// `impl<T> Foo<T>` → `Foo`; trait impls (`impl X for Y`) have no `pub`
/// items of their own and yield `None`.
fn impl_self_type(head: &str) -> Option<String> {
    let mut h = head.strip_prefix("impl")?.trim_start();
    if h.starts_with('<') {
        let mut depth = 0;
        for (i, ch) in h.char_indices() {
            match ch {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        h = &h[i + 1..];
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    if h.contains(" for ") {
        return None;
    }
    Some(ident(h.trim_start()))
}

/// The names a `use` brings in: `a::b::{C, D as E}` → `C`, `E`.
fn use_names(u: &str) -> Vec<String> {
    let u: String = u.chars().filter(|c| !c.is_whitespace() || *c == ' ').collect();
    let names: Vec<&str> = match (u.find('{'), u.rfind('}')) {
        (Some(a), Some(b)) => u[a + 1..b].split(',').collect(),
        _ => vec![u.trim_end_matches(';')],
    };
    names
        .into_iter()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| match n.split_once(" as ") {
            Some((_, alias)) => alias.trim().to_string(),
            None => n.rsplit("::").next().unwrap_or(n).trim().to_string(),
        })
        .filter(|n| n != "self" && n != "*")
        .collect()
}
