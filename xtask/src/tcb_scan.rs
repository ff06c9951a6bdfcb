//! Finding `unsafe` in Rust source without a parser: comments and the
//! contents of string and character literals are blanked first. Shared by
//! `cargo xtask tcb` and the unsafe-boundary test (`xtask/tests`).

/// `src` with comments and the contents of string and character literals
/// replaced by spaces (newlines are kept, so line numbers stay valid).
pub fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        let prev_ident = i > 0 && is_ident(c[i - 1]);
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(&c, i, prev_ident) {
            // r"..." / r#"..."# (also after a b or c prefix, already emitted).
            let mut j = i + 1 + hashes + 1;
            out.push(' ');
            while j < c.len() {
                if c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &ch in &c[i + 1..j.min(c.len())] {
                blank(&mut out, ch);
            }
            i = j;
        } else if c[i] == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c[i] == '\'' && (next == Some('\\') || c.get(i + 2) == Some(&'\'')) {
            // A character literal (not a lifetime or label).
            out.push(' ');
            i += 1;
            if c.get(i) == Some(&'\\') {
                out.push(' ');
                i += 1;
            }
            while i < c.len() && c[i] != '\'' {
                blank(&mut out, c[i]);
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// If a raw string literal starts at `c[i]` (`r`, hashes, `"`), the number
/// of hashes.
fn raw_string_start(c: &[char], i: usize, prev_ident: bool) -> Option<usize> {
    if c[i] != 'r' {
        return None;
    }
    // `r` must begin a token, or follow a `b`/`c` literal prefix.
    let prefix_ok = !prev_ident
        || (i >= 1
            && matches!(c[i - 1], 'b' | 'c')
            && (i < 2 || !(c[i - 2].is_alphanumeric() || c[i - 2] == '_')));
    if !prefix_ok {
        return None;
    }
    let mut j = i + 1;
    while c.get(j) == Some(&'#') {
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some(j - i - 1)
}

/// 1-based line numbers where `unsafe` is used as a keyword.
pub fn unsafe_uses(src: &str) -> Vec<usize> {
    let code = code_only(src);
    let c: Vec<char> = code.chars().collect();
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut lines = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        if c[i] == '\n' {
            line += 1;
        }
        if is_ident(c[i]) && (i == 0 || !is_ident(c[i - 1])) {
            let start = i;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let raw = start >= 2 && c[start - 2] == 'r' && c[start - 1] == '#';
            // Any bare `unsafe` token is the keyword: blocks, functions,
            // impls, extern blocks, traits and `#[unsafe(..)]` attributes.
            if word == "unsafe" && !raw {
                lines.push(line);
            }
            continue;
        }
        i += 1;
    }
    lines
}

/// Lines of `SAFETY:` justifications: `// SAFETY:` comments and the
/// `# Safety` sections of the docs of unsafe functions.
pub fn safety_comments(src: &str) -> usize {
    src.lines()
        .map(str::trim_start)
        .filter(|l| {
            (l.starts_with("//") && l.contains("SAFETY"))
                || (l.starts_with("///") && l.trim_start_matches('/').trim() == "# Safety")
        })
        .count()
}

/// The `unsafe` keyword uses of every `.rs` file under `dir` that can be
/// linked into a program (skipping `target`, `tests`, `benches`,
/// `examples` and hidden directories): `(file, line)`, plus the number of
/// SAFETY comments.
pub fn scan_dir(dir: &std::path::Path) -> (Vec<(std::path::PathBuf, usize)>, usize) {
    let mut sites = Vec::new();
    let mut safety = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if !name.starts_with('.')
                    && !matches!(name.as_str(), "target" | "tests" | "benches" | "examples")
                {
                    stack.push(path);
                }
            } else if ft.is_file() && name.ends_with(".rs") {
                let Ok(src) = std::fs::read_to_string(&path) else {
                    continue;
                };
                safety += safety_comments(&src);
                sites.extend(unsafe_uses(&src).into_iter().map(|l| (path.clone(), l)));
            }
        }
    }
    (sites, safety)
}
