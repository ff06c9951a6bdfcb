//! frame's `unsafe` sites, the `MIRI:` notes next to them, and whether the
//! tests that pass under Miri reach each one.
//!
//! A site is every `unsafe` keyword (blocks, functions, impls, extern
//! blocks, traits, `#[unsafe(..)]` attributes), spanning the braces that
//! follow it. It counts as *reached* when
//! - one of its lines ran in the coverage run of the tests that passed
//!   under Miri, or
//! - it governs no code (an unsafe marker-trait impl, say) and its
//!   note names the Miri-run tests that rely on it and exercise what it
//!   vouches for: `// MIRI: relied on by sync::tests::a, sync::tests::b`.
//!   Every named test must have passed under Miri.
//!
//! A site that is not reached must say why, in the comment block just
//! above it: `// MIRI: not reached: <reason>`. `cargo xtask miri` fails on
//! an unreached site without a reason and on a reason left on a site that
//! is reached (so the notes cannot go stale).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::tcb_scan;

/// What the comment block above a site says about Miri.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// `// MIRI: not reached: <reason>`
    NotReached(String),
    /// `// MIRI: relied on by <test>, <test>`
    ReliedOnBy(Vec<String>),
    /// A `MIRI:` line that is neither.
    Malformed(String),
}

/// One `unsafe` keyword in frame's source, and the lines it governs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub file: PathBuf,
    pub line: usize,
    /// The lines of the block or item body (`line..=end`).
    pub end: usize,
    /// Under `#[cfg(target_os = "none")]`: never compiled for the host.
    pub bare_metal: bool,
    pub note: Option<Note>,
}

/// Whether a comment line starts another tagged paragraph (`SAFETY:`).
fn starts_tag(text: &str) -> bool {
    text.split_once(':').is_some_and(|(tag, _)| {
        !tag.is_empty() && tag.chars().all(|c| c.is_ascii_uppercase() || c == '-')
    })
}

/// Parses the `MIRI:` paragraph of the comment/attribute block right above
/// line `line` (1-based), if any. The note runs from `MIRI:` to the next
/// tagged paragraph (such as `SAFETY:`) or the end of the block.
fn note_above(src_lines: &[&str], line: usize) -> Option<Note> {
    let mut block = Vec::new();
    for l in src_lines[..line - 1].iter().rev().map(|t| t.trim()) {
        if l.starts_with("#[") {
            continue;
        }
        let Some(comment) = l.strip_prefix("//") else {
            break;
        };
        if comment.starts_with('/') || comment.starts_with('!') {
            break; // doc comments belong to the item, not to the site
        }
        block.push(comment.trim());
    }
    block.reverse();
    let at = block.iter().position(|c| c.starts_with("MIRI:"))?;
    let mut text = block[at]["MIRI:".len()..].trim().to_string();
    for c in &block[at + 1..] {
        if starts_tag(c) {
            break;
        }
        text.push(' ');
        text.push_str(c);
    }
    let text = text.trim();
    Some(if let Some(reason) = text.strip_prefix("not reached:") {
        Note::NotReached(reason.trim().to_string())
    } else if let Some(tests) = text.strip_prefix("relied on by") {
        // Each item is a test path, optionally followed by words.
        let tests: Vec<String> = tests
            .split(',')
            .filter_map(|t| t.split_whitespace().next())
            .map(|t| t.trim_end_matches('.').to_string())
            .collect();
        if tests.is_empty() {
            Note::Malformed(text.to_string())
        } else {
            Note::ReliedOnBy(tests)
        }
    } else {
        Note::Malformed(text.to_string())
    })
}

/// The module a `#[cfg(test)]` attribute on line `at` (0-based) applies
/// to, if the next item is `mod NAME` (`;` or `{`): its name, and whether
/// it is inline.
fn test_module_after(code_lines: &[&str], at: usize) -> Option<(String, bool)> {
    let item = code_lines[at + 1..]
        .iter()
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && !l.starts_with("#["))?;
    let rest = item
        .strip_prefix("pub(crate) ")
        .or_else(|| item.strip_prefix("pub "))
        .unwrap_or(item)
        .strip_prefix("mod ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let after = rest[name.len()..].trim_start();
    Some((name, after.starts_with('{')))
}

fn is_cfg_test(line: &str) -> bool {
    line.split_whitespace().collect::<String>() == "#[cfg(test)]"
}

/// The files of modules declared `#[cfg(test)] mod NAME;` in `file`:
/// test-only code (with everything below it).
pub fn test_module_files(file: &Path, src: &str) -> Vec<PathBuf> {
    let code = tcb_scan::code_only(src);
    let lines: Vec<&str> = code.lines().collect();
    let dir = match file.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs" | "lib.rs" | "main.rs") => file.parent().map(Path::to_path_buf),
        _ => file
            .parent()
            .map(|p| p.join(file.file_stem().unwrap_or_default())),
    }
    .unwrap_or_default();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if is_cfg_test(l)
            && let Some((name, false)) = test_module_after(&lines, i)
        {
            out.push(dir.join(format!("{name}.rs")));
            out.push(dir.join(&name));
        }
    }
    out
}

/// Line ranges (1-based, inclusive) of inline `#[cfg(test)] mod NAME { }`.
fn test_module_ranges(code: &str) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if !is_cfg_test(l) || !matches!(test_module_after(&lines, i), Some((_, true))) {
            continue;
        }
        let mut depth = 0usize;
        let mut opened = false;
        for (j, l) in lines.iter().enumerate().skip(i + 1) {
            for c in l.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            if opened && depth == 0 {
                out.push((i + 1, j + 1));
                break;
            }
        }
    }
    out
}

/// The sites of one file: each `unsafe` up to the end of the braces that
/// follow it (a block, or the body of an unsafe function or impl); an
/// attribute such as `#[unsafe(no_mangle)]` covers only its own line.
/// Sites in inline `#[cfg(test)]` modules are test code, not frame's, and
/// are left out.
pub fn sites_in(file: &Path, src: &str) -> Vec<Site> {
    let code = tcb_scan::code_only(src);
    let chars: Vec<char> = code.chars().collect();
    let mut line_of = Vec::with_capacity(chars.len());
    let mut line = 1;
    for &c in &chars {
        line_of.push(line);
        if c == '\n' {
            line += 1;
        }
    }
    let src_lines: Vec<&str> = src.lines().collect();
    let tests = test_module_ranges(&code);
    let mut out = Vec::new();
    let mut from = 0;
    for l in tcb_scan::unsafe_uses(src) {
        // The keyword's position: the first `unsafe` token on line `l`
        // at or after the previous one.
        let Some(at) = (from..chars.len())
            .find(|&i| line_of[i] == l && chars[i..].starts_with(&['u', 'n', 's', 'a', 'f', 'e']))
        else {
            continue;
        };
        from = at + 6;
        let mut i = at + 6;
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        let mut end = l;
        if chars.get(i) != Some(&'(') {
            // Find the opening brace of the block or item, then its match.
            while i < chars.len() && chars[i] != '{' && chars[i] != ';' {
                i += 1;
            }
            if chars.get(i) == Some(&'{') {
                let mut depth = 0;
                while i < chars.len() {
                    match chars[i] {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = line_of[i];
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
        }
        // An attribute on the lines just above (comments skipped).
        let bare_metal = src_lines[..l - 1]
            .iter()
            .rev()
            .map(|t| t.trim())
            .filter(|t| !t.starts_with("//"))
            .take(3)
            .take_while(|t| t.starts_with("#["))
            .any(|t| t.contains("cfg(target_os = \"none\")"));
        if tests.iter().any(|&(a, b)| (a..=b).contains(&l)) {
            continue;
        }
        out.push(Site {
            file: file.to_path_buf(),
            line: l,
            end,
            bare_metal,
            note: note_above(&src_lines, l),
        });
    }
    out
}

/// `file -> line -> execution count` from an lcov trace.
pub fn parse_lcov(text: &str) -> BTreeMap<PathBuf, BTreeMap<usize, u64>> {
    let mut out: BTreeMap<PathBuf, BTreeMap<usize, u64>> = BTreeMap::new();
    let mut file: Option<PathBuf> = None;
    for line in text.lines() {
        if let Some(f) = line.strip_prefix("SF:") {
            file = Some(PathBuf::from(f));
        } else if let Some(da) = line.strip_prefix("DA:") {
            let mut parts = da.split(',');
            let (Some(l), Some(n)) = (parts.next(), parts.next()) else {
                continue;
            };
            if let (Some(f), Ok(l), Ok(n)) = (&file, l.parse::<usize>(), n.parse::<u64>()) {
                *out.entry(f.clone()).or_default().entry(l).or_default() += n;
            }
        } else if line == "end_of_record" {
            file = None;
        }
    }
    out
}

#[derive(Debug, PartialEq, Eq)]
pub enum Reach {
    Reached,
    /// Compiled for the host and instrumented, never executed.
    NotReached,
    /// No instrumented line: not compiled for the host (bare-metal only)
    /// or no executable code (e.g. an unsafe `impl Send`).
    NoHostCode,
}

pub fn reach(site: &Site, cov: &BTreeMap<PathBuf, BTreeMap<usize, u64>>) -> Reach {
    let Some(lines) = cov.get(&site.file).filter(|_| !site.bare_metal) else {
        return Reach::NoHostCode;
    };
    let mut instrumented = false;
    for (_, n) in lines.range(site.line..=site.end) {
        instrumented = true;
        if *n > 0 {
            return Reach::Reached;
        }
    }
    if instrumented {
        Reach::NotReached
    } else {
        Reach::NoHostCode
    }
}

/// Where a site stands, all things considered.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Some of its lines ran.
    Executed,
    /// A declaration that the named Miri-run tests rely on.
    ReliedOn(Vec<String>),
    /// Not reached, for the reason in its note.
    Unreached(String),
    /// Something to fix before the figure means anything.
    Error(String),
}

/// Combines line coverage, the site's note and the tests that passed
/// under Miri.
pub fn judge(
    site: &Site,
    cov: &BTreeMap<PathBuf, BTreeMap<usize, u64>>,
    miri_passed: &BTreeSet<String>,
) -> Verdict {
    let r = reach(site, cov);
    match (&site.note, r) {
        (Some(Note::Malformed(text)), _) => Verdict::Error(format!(
            "malformed note `MIRI: {text}` (expected `not reached: <reason>` or \
             `relied on by <test>, ...`)"
        )),
        (Some(Note::NotReached(reason)), Reach::Reached) => Verdict::Error(format!(
            "stale note: says `not reached: {reason}`, but the tests reach it"
        )),
        (Some(Note::ReliedOnBy(_)), Reach::Reached | Reach::NotReached) => Verdict::Error(
            "`relied on by` is for declarations without code; this site has code, \
             so a test has to run it"
                .into(),
        ),
        (_, Reach::Reached) => Verdict::Executed,
        (Some(Note::NotReached(reason)), _) if reason.is_empty() => {
            Verdict::Error("`not reached:` without a reason".into())
        }
        (Some(Note::NotReached(reason)), _) => Verdict::Unreached(reason.clone()),
        (Some(Note::ReliedOnBy(tests)), Reach::NoHostCode) => {
            if !cov.contains_key(&site.file) || site.bare_metal {
                return Verdict::Error(
                    "`relied on by`, but the site is not compiled for the host tests".into(),
                );
            }
            let missing: Vec<&str> = tests
                .iter()
                .filter(|t| !miri_passed.contains(*t))
                .map(String::as_str)
                .collect();
            if missing.is_empty() {
                Verdict::ReliedOn(tests.clone())
            } else {
                Verdict::Error(format!(
                    "relied on by test(s) that did not pass under Miri: {}",
                    missing.join(", ")
                ))
            }
        }
        (None, Reach::NotReached) => Verdict::Error(
            "not reached (host code that no Miri-run test executes) and no \
             `// MIRI: not reached: <reason>` note"
                .into(),
        ),
        (None, Reach::NoHostCode) => Verdict::Error(
            "not reached (no host code) and no `// MIRI: not reached: <reason>` note".into(),
        ),
    }
}

/// The report `cargo xtask miri` prints, and whether it is clean.
pub struct Report {
    pub text: String,
    pub errors: usize,
}

fn percent(n: usize, of: usize) -> f64 {
    if of == 0 {
        100.0
    } else {
        n as f64 * 100.0 / of as f64
    }
}

/// The figure, every unreached site with its reason (the instruction
/// layer's first: `in_layer` says which those are), the same figure
/// without the instruction layer, and the notes to fix.
pub fn report(
    sites: &[Site],
    cov: &BTreeMap<PathBuf, BTreeMap<usize, u64>>,
    miri_passed: &BTreeSet<String>,
    rel: &dyn Fn(&Path) -> String,
    in_layer: &dyn Fn(&Site) -> bool,
) -> Report {
    let verdicts: Vec<(&Site, Verdict)> = sites
        .iter()
        .map(|s| (s, judge(s, cov, miri_passed)))
        .collect();
    let count =
        |f: &dyn Fn(&Site, &Verdict) -> bool| verdicts.iter().filter(|(s, v)| f(s, v)).count();
    let executed = count(&|_, v| *v == Verdict::Executed);
    let relied = count(&|_, v| matches!(v, Verdict::ReliedOn(_)));
    let reached = executed + relied;
    let total = sites.len();
    let mut text = format!(
        "unsafe sites in frame/ reached by the tests that pass under Miri: {reached} of {total} \
         ({:.1}%)\n  executed: {executed}\n  declarations relied on by named Miri-run tests: \
         {relied}\n",
        percent(reached, total)
    );
    let unreached: Vec<(&Site, &String)> = verdicts
        .iter()
        .filter_map(|(s, v)| match v {
            Verdict::Unreached(r) => Some((*s, r)),
            _ => None,
        })
        .collect();
    text.push_str(&format!("not reached: {}\n", unreached.len()));
    for (title, layer) in [
        (
            "in the instruction layer (inline assembly, bare metal only)",
            true,
        ),
        ("elsewhere", false),
    ] {
        let group: Vec<_> = unreached
            .iter()
            .filter(|(s, _)| in_layer(s) == layer)
            .collect();
        text.push_str(&format!("  {title}: {}\n", group.len()));
        for (s, reason) in group {
            text.push_str(&format!("    {}:{}  {reason}\n", rel(&s.file), s.line));
        }
    }
    let outside = count(&|s, _| !in_layer(s));
    let outside_reached =
        count(&|s, v| !in_layer(s) && matches!(v, Verdict::Executed | Verdict::ReliedOn(_)));
    text.push_str(&format!(
        "outside the instruction layer: {outside_reached} of {outside} reached ({:.1}%)\n",
        percent(outside_reached, outside)
    ));
    let errors: Vec<_> = verdicts
        .iter()
        .filter_map(|(s, v)| match v {
            Verdict::Error(e) => Some((s, e)),
            _ => None,
        })
        .collect();
    if !errors.is_empty() {
        text.push_str(&format!(
            "PROBLEMS (fix these notes or tests): {}\n",
            errors.len()
        ));
        for (s, e) in &errors {
            text.push_str(&format!("  {}:{}  {e}\n", rel(&s.file), s.line));
        }
    }
    Report {
        text,
        errors: errors.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(src: &str) -> String {
        src.replace("@KW@", concat!("un", "safe"))
    }

    #[test]
    fn sites_span_their_blocks() {
        let src = kw(
            "fn a() {\n    // SAFETY: x\n    @KW@ {\n        f();\n    }\n}\n\
             @KW@ impl Send for X {}\n#[@KW@(no_mangle)]\nfn b() {}\n\
             pub @KW@ fn c() -> u8 {\n    1\n}\nfn d() { @KW@ { g() }; @KW@ { h() } }\n",
        );
        let s = sites_in(Path::new("f.rs"), &src);
        let spans: Vec<(usize, usize)> = s.iter().map(|s| (s.line, s.end)).collect();
        assert_eq!(
            spans,
            [(3, 5), (7, 7), (8, 8), (10, 12), (13, 13), (13, 13)]
        );
    }

    #[test]
    fn test_modules_are_not_frame_code() {
        let src = kw(
            "fn a() { @KW@ { x() } }\n#[cfg(test)]\nmod tests {\n    fn t() {\n        \
             @KW@ { y() }\n    }\n}\n#[cfg(test)]\npub(crate) mod sim;\n#[cfg(test)]\n\
             #[path = \"t.rs\"]\nmod other;\nmod real;\n@KW@ fn z() {}\n",
        );
        let lines: Vec<usize> = sites_in(Path::new("src/lib.rs"), &src)
            .iter()
            .map(|s| s.line)
            .collect();
        assert_eq!(lines, [1, 14]);
        let files = test_module_files(Path::new("src/mm/mod.rs"), &src);
        assert!(files.contains(&PathBuf::from("src/mm/sim.rs")));
        assert!(files.contains(&PathBuf::from("src/mm/sim")));
        assert!(files.contains(&PathBuf::from("src/mm/other.rs")));
        assert!(!files.iter().any(|f| f.ends_with("real.rs")));
        let files = test_module_files(Path::new("src/task.rs"), "#[cfg(test)]\nmod tests;\n");
        assert_eq!(files[0], PathBuf::from("src/task/tests.rs"));
    }

    #[test]
    fn notes_are_read_from_the_comment_block_above() {
        let src = kw("// MIRI: not reached: the `hlt` instruction,\n\
             //   which stops the CPU\n// SAFETY: parks the CPU.\n@KW@ { hlt() }\n\n\
             // SAFETY: one holder at a time.\n\
             // MIRI: relied on by sync::tests::a, sync::tests::b\n\
             #[allow(dead_code)]\n@KW@ impl Sync for L {}\n\
             // MIRI: not reached: old note\nfn x() {}\n@KW@ { y() }\n\
             // MIRI: reached, trust me\n@KW@ { z() }\n");
        let notes: Vec<Option<Note>> = sites_in(Path::new("f.rs"), &src)
            .into_iter()
            .map(|s| s.note)
            .collect();
        assert_eq!(
            notes,
            [
                Some(Note::NotReached(
                    "the `hlt` instruction, which stops the CPU".into()
                )),
                Some(Note::ReliedOnBy(vec![
                    "sync::tests::a".into(),
                    "sync::tests::b".into()
                ])),
                // A note above an unrelated item does not carry over.
                None,
                Some(Note::Malformed("reached, trust me".into())),
            ]
        );
    }

    fn site(line: usize, end: usize, note: Option<Note>) -> Site {
        Site {
            file: PathBuf::from("/f.rs"),
            line,
            end,
            bare_metal: false,
            note,
        }
    }

    #[test]
    fn lcov_and_reach() {
        let cov = parse_lcov(
            "SF:/f.rs\nDA:3,0\nDA:4,2\nDA:10,0\nend_of_record\nSF:/g.rs\nDA:1,1\nend_of_record\n",
        );
        assert_eq!(reach(&site(3, 5, None), &cov), Reach::Reached);
        assert_eq!(reach(&site(10, 12, None), &cov), Reach::NotReached);
        assert_eq!(reach(&site(7, 7, None), &cov), Reach::NoHostCode);
        let other = Site {
            file: PathBuf::from("/h.rs"),
            ..site(1, 1, None)
        };
        assert_eq!(reach(&other, &cov), Reach::NoHostCode);
        let gated = Site {
            bare_metal: true,
            ..site(3, 5, None)
        };
        assert_eq!(reach(&gated, &cov), Reach::NoHostCode);
    }

    #[test]
    fn verdicts_follow_coverage_notes_and_miri_results() {
        let cov = parse_lcov("SF:/f.rs\nDA:3,0\nDA:4,2\nDA:10,0\nend_of_record\n");
        let passed: BTreeSet<String> = ["t::ok".to_string()].into();
        let why = || Some(Note::NotReached("asm".into()));
        let relied = |t: &str| Some(Note::ReliedOnBy(vec![t.into()]));
        let j = |s: Site| judge(&s, &cov, &passed);
        assert_eq!(j(site(3, 5, None)), Verdict::Executed);
        assert_eq!(j(site(10, 12, why())), Verdict::Unreached("asm".into()));
        assert_eq!(j(site(7, 7, why())), Verdict::Unreached("asm".into()));
        assert_eq!(
            j(site(7, 7, relied("t::ok"))),
            Verdict::ReliedOn(vec!["t::ok".into()])
        );
        // Every one of these is a problem to fix, not a reason.
        assert!(matches!(j(site(3, 5, why())), Verdict::Error(_)), "stale");
        assert!(matches!(j(site(10, 12, None)), Verdict::Error(_)));
        assert!(matches!(j(site(7, 7, None)), Verdict::Error(_)));
        assert!(matches!(
            j(site(7, 7, relied("t::gone"))),
            Verdict::Error(_)
        ));
        assert!(matches!(
            j(site(10, 12, relied("t::ok"))),
            Verdict::Error(_)
        ));
        let far = Site {
            file: PathBuf::from("/h.rs"),
            ..site(1, 1, relied("t::ok"))
        };
        assert!(matches!(j(far), Verdict::Error(_)));
        assert!(matches!(
            j(site(7, 7, Some(Note::NotReached(String::new())))),
            Verdict::Error(_)
        ));
    }

    #[test]
    fn report_counts_declarations_and_lists_reasons() {
        let cov = parse_lcov("SF:/f.rs\nDA:3,1\nend_of_record\n");
        let passed: BTreeSet<String> = ["t::ok".to_string()].into();
        let sites = [
            site(3, 3, None),
            site(7, 7, Some(Note::ReliedOnBy(vec!["t::ok".into()]))),
            site(8, 8, Some(Note::NotReached("the `in` instruction".into()))),
            site(9, 9, None),
        ];
        let layer = |s: &Site| s.line == 8;
        let r = report(&sites, &cov, &passed, &|p| p.display().to_string(), &layer);
        assert_eq!(r.errors, 1);
        assert!(r.text.starts_with(
            "unsafe sites in frame/ reached by the tests that pass under Miri: 2 of 4 (50.0%)"
        ));
        assert!(r.text.contains(
            "  in the instruction layer (inline assembly, bare metal only): 1\n    \
             /f.rs:8  the `in` instruction\n  elsewhere: 0\n"
        ));
        assert!(
            r.text
                .contains("outside the instruction layer: 2 of 3 reached (66.7%)\n")
        );
        assert!(r.text.contains("PROBLEMS"));
    }
}
