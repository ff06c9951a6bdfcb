//! Miri over frame/'s host tests (the memory core against simulated RAM),
//! and how many of frame's `unsafe` sites those tests reach, from line
//! coverage of the same tests.
//!
//! `cargo xtask test` runs the Miri layer when the pinned nightly with the
//! `miri` component is installed (scripts/setup.sh tries to install it) and
//! says why it skipped otherwise. `cargo xtask miri` runs Miri and then the
//! coverage report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::tcb_scan;
use crate::test::Reporter;
use crate::test_host::parse_libtest;
use crate::util::{Context, Res, run_captured, run_quiet, tail, target_dir};

/// The nightly whose Miri is known to work (see shared MACHINE-FACTS).
pub const NIGHTLY: &str = "nightly-2026-05-20";
/// Pointers into the simulated RAM keep their provenance, so Miri can
/// check strictly.
const MIRIFLAGS: &str = "-Zmiri-strict-provenance";

/// A `cargo +NIGHTLY` command with the outer toolchain's variables removed.
fn nightly_cargo(root: &Path) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(root)
        .arg(format!("+{NIGHTLY}"))
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("CARGO")
        .env("CARGO_TERM_COLOR", "never");
    cmd
}

/// Why Miri cannot run here, if it cannot.
pub fn unavailable() -> Option<String> {
    let out = Command::new("rustup")
        .args(["component", "list", "--installed", "--toolchain", NIGHTLY])
        .output();
    match out {
        Err(e) => Some(format!("rustup not available: {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "toolchain {NIGHTLY} is not installed (scripts/setup.sh installs it with \
             `rustup toolchain install {NIGHTLY} --profile minimal -c miri,rust-src`)"
        )),
        Ok(o) => {
            let list = String::from_utf8_lossy(&o.stdout);
            let has = |c: &str| list.lines().any(|l| l.starts_with(c));
            let missing: Vec<&str> = ["miri", "rust-src"]
                .into_iter()
                .filter(|c| !has(c))
                .collect();
            (!missing.is_empty()).then(|| {
                format!(
                    "toolchain {NIGHTLY} lacks the component(s) {}",
                    missing.join(", ")
                )
            })
        }
    }
}

/// The `miri` test layer: `cargo +NIGHTLY miri test -p frame`, one verdict
/// per test.
pub fn layer(root: &Path, r: &mut Reporter) {
    if let Some(why) = unavailable() {
        r.skip("miri", why);
        return;
    }
    eprintln!("xtask: cargo +{NIGHTLY} miri test -p frame");
    let mut cmd = nightly_cargo(root);
    cmd.env("MIRIFLAGS", MIRIFLAGS)
        .args(["miri", "test", "--no-fail-fast", "-p", "frame"]);
    let (status, out) = match run_captured(&mut cmd) {
        Ok(x) => x,
        Err(e) => {
            r.fail("miri", e);
            return;
        }
    };
    let results = parse_libtest(&out);
    for (test, verdict) in &results {
        r.record(&format!("miri:frame:{test}"), verdict.clone());
    }
    if !status.success()
        && !results
            .iter()
            .any(|(_, v)| matches!(v, crate::test::Verdict::Fail(_)))
    {
        // Undefined behaviour aborts the whole test binary.
        let first = out
            .lines()
            .position(|l| l.starts_with("error"))
            .map(|i| out.lines().skip(i).take(30).collect::<Vec<_>>().join("\n"))
            .unwrap_or_else(|| tail(&out, 30));
        r.fail("miri:frame", first);
    }
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
}

/// The sites of one file: each `unsafe` up to the end of the braces that
/// follow it (a block, or the body of an unsafe function or impl); an attribute such as
/// `#[unsafe(no_mangle)]` covers only its own line.
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
            .any(|t| t.contains("target_os = \"none\""));
        out.push(Site {
            file: file.to_path_buf(),
            line: l,
            end,
            bare_metal,
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

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Runs frame's host tests with coverage instrumentation and returns the
/// lcov trace.
fn coverage_trace(root: &Path) -> Res<String> {
    let dir = target_dir(root).join("coverage");
    let _ = std::fs::remove_dir_all(dir.join("profraw"));
    std::fs::create_dir_all(dir.join("profraw"))
        .ctx(|| format!("cannot create {}", dir.display()))?;
    let sysroot = run_quiet(
        Command::new("rustc")
            .arg(format!("+{NIGHTLY}"))
            .env_remove("RUSTUP_TOOLCHAIN")
            .args(["--print", "sysroot"]),
    )?;
    let bin = PathBuf::from(sysroot.trim()).join("lib/rustlib/x86_64-unknown-linux-gnu/bin");
    if !bin.join("llvm-cov").is_file() {
        return Err(format!(
            "{} has no llvm-cov: rustup component add llvm-tools --toolchain {NIGHTLY}",
            bin.display()
        ));
    }
    let test = |extra: &[&str]| {
        let mut cmd = nightly_cargo(root);
        cmd.env("RUSTFLAGS", "-C instrument-coverage")
            .env("LLVM_PROFILE_FILE", dir.join("profraw/frame-%p-%m.profraw"))
            .arg("test")
            .arg("--target-dir")
            .arg(dir.join("build"))
            .args(["-p", "frame"])
            .args(extra);
        cmd
    };
    eprintln!("xtask: frame host tests with coverage instrumentation");
    run_quiet(&mut test(&[]))?;
    let json = run_quiet(&mut test(&["--no-run", "--message-format=json"]))?;
    let exe = json
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["executable"].as_str().map(str::to_string))
        .find(|e| !e.is_empty())
        .ok_or("no test executable for frame")?;
    let profraw: Vec<PathBuf> = std::fs::read_dir(dir.join("profraw"))
        .ctx(|| "no profiles".into())?
        .flatten()
        .map(|e| e.path())
        .collect();
    let profdata = dir.join("frame.profdata");
    run_quiet(
        Command::new(bin.join("llvm-profdata"))
            .args(["merge", "-sparse", "-o"])
            .arg(&profdata)
            .args(&profraw),
    )?;
    run_quiet(
        Command::new(bin.join("llvm-cov"))
            .args(["export", "-format=lcov"])
            .arg(format!("-instr-profile={}", profdata.display()))
            .arg(&exe),
    )
}

/// `cargo xtask miri`: the Miri layer, then the unsafe-site coverage.
pub fn run(root: &Path) -> Res<u8> {
    let mut r = Reporter::default();
    layer(root, &mut r);
    println!("{}", r.summary());
    let trace = coverage_trace(root)?;
    let cov = parse_lcov(&trace);
    let mut files = Vec::new();
    rs_files(&root.join("frame/src"), &mut files);
    let mut sites = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).ctx(|| format!("cannot read {}", f.display()))?;
        sites.extend(sites_in(f, &src));
    }
    let mut by: BTreeMap<&str, Vec<&Site>> = BTreeMap::new();
    for s in &sites {
        let key = match reach(s, &cov) {
            Reach::Reached => "reached",
            Reach::NotReached => "not reached (host code, never executed)",
            Reach::NoHostCode => "not reached (no host code: bare-metal only or no code)",
        };
        by.entry(key).or_default().push(s);
    }
    let reached = by.get("reached").map_or(0, Vec::len);
    println!(
        "unsafe sites in frame/ reached by its host tests (the tests Miri runs): {reached} of {}",
        sites.len()
    );
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    for (key, list) in &by {
        if *key == "reached" {
            continue;
        }
        println!("{key}: {}", list.len());
        for s in list {
            println!("  {}:{}", rel(&s.file), s.line);
        }
    }
    Ok(if r.failed > 0 { 1 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_span_their_blocks() {
        let src = "fn a() {\n    // SAFETY: x\n    @KW@ {\n        f();\n    }\n}\n\
                   @KW@ impl Send for X {}\n#[@KW@(no_mangle)]\nfn b() {}\n\
                   pub @KW@ fn c() -> u8 {\n    1\n}\nfn d() { @KW@ { g() }; @KW@ { h() } }\n";
        let src = src.replace("@KW@", concat!("un", "safe"));
        let s = sites_in(Path::new("f.rs"), &src);
        let spans: Vec<(usize, usize)> = s.iter().map(|s| (s.line, s.end)).collect();
        assert_eq!(
            spans,
            [(3, 5), (7, 7), (8, 8), (10, 12), (13, 13), (13, 13)]
        );
    }

    #[test]
    fn lcov_and_reach() {
        let cov = parse_lcov(
            "SF:/f.rs\nDA:3,0\nDA:4,2\nDA:10,0\nend_of_record\nSF:/g.rs\nDA:1,1\nend_of_record\n",
        );
        let site = |line, end| Site {
            file: PathBuf::from("/f.rs"),
            line,
            end,
            bare_metal: false,
        };
        assert_eq!(reach(&site(3, 5), &cov), Reach::Reached);
        assert_eq!(reach(&site(10, 12), &cov), Reach::NotReached);
        assert_eq!(reach(&site(7, 7), &cov), Reach::NoHostCode);
        let other = Site {
            file: PathBuf::from("/h.rs"),
            line: 1,
            end: 1,
            bare_metal: false,
        };
        assert_eq!(reach(&other, &cov), Reach::NoHostCode);
        let gated = Site {
            bare_metal: true,
            ..site(3, 5)
        };
        assert_eq!(reach(&gated, &cov), Reach::NoHostCode);
    }
}
