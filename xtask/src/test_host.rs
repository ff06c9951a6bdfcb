//! Layer 1: `cargo test` of the host-testable packages, one package at a
//! time so that one package failing to compile does not hide the others.

use std::path::{Path, PathBuf};

use crate::test::{Reporter, Verdict};
use crate::util::{cargo, run_captured, tail};

/// Packages whose tests run on the host.
pub const HOST_PACKAGES: &[&str] = &[
    "cpio",
    "elf",
    "ext2",
    "policies",
    "frame",
    "virtio",
    "virtio-blk",
    "virtio-net",
    "xtask",
];

pub fn run(root: &Path, r: &mut Reporter) {
    let packages = workspace_packages(root);
    for &short in HOST_PACKAGES {
        let name = format!("host:{short}");
        let Some(pkg) = resolve(&packages, short) else {
            r.skip(&name, "package not in the workspace yet");
            continue;
        };
        eprintln!("xtask: cargo test -p {pkg}");
        let mut cmd = cargo();
        cmd.current_dir(root)
            .env("CARGO_TERM_COLOR", "never")
            .args(["test", "--no-fail-fast", "--color", "never", "-p", &pkg]);
        let (status, out) = match run_captured(&mut cmd) {
            Ok(x) => x,
            Err(e) => {
                r.fail(&name, e);
                continue;
            }
        };
        let results = parse_libtest(&out);
        let failed = results.iter().any(|(_, v)| matches!(v, Verdict::Fail(_)));
        for (test, verdict) in results {
            r.record(&format!("{name}:{test}"), verdict);
        }
        if !status.success() && !failed {
            r.fail(&name, build_failure(&out, status));
        }
    }
}

/// A reason for a `cargo test` that failed without a failing test (usually
/// a compile error): the first error line, then the output's tail.
fn build_failure(out: &str, status: std::process::ExitStatus) -> String {
    let first = out
        .lines()
        .find(|l| l.starts_with("error"))
        .map(str::to_string)
        .unwrap_or_else(|| format!("cargo test failed ({status})"));
    format!("{first}\n{}", tail(out, 20))
}

/// `(package name, directory)` of each workspace member.
fn workspace_packages(root: &Path) -> Vec<(String, PathBuf)> {
    let Ok(manifest) = std::fs::read_to_string(root.join("Cargo.toml")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for member in members(&manifest) {
        let dirs: Vec<PathBuf> = match member.strip_suffix("/*") {
            Some(parent) => std::fs::read_dir(root.join(parent))
                .map(|rd| rd.flatten().map(|e| e.path()).collect())
                .unwrap_or_default(),
            None => vec![root.join(&member)],
        };
        for dir in dirs {
            if let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml"))
                && let Some(name) = package_name(&text)
            {
                out.push((name, dir));
            }
        }
    }
    out
}

/// The package for `short`: the one named so, or the one in a directory
/// named so (e.g. `libs/cpio` holding `trellis-cpio`).
fn resolve(packages: &[(String, PathBuf)], short: &str) -> Option<String> {
    packages
        .iter()
        .find(|(n, _)| n == short)
        .or_else(|| {
            packages
                .iter()
                .find(|(_, d)| d.file_name().is_some_and(|f| f == short))
        })
        .map(|(n, _)| n.clone())
}

/// The strings in `members = [...]` of the `[workspace]` table.
fn members(manifest: &str) -> Vec<String> {
    // The `members` key at the start of a line (not `default-members`).
    let start = manifest
        .match_indices("members")
        .map(|(i, _)| i)
        .find(|&i| {
            let line_start = manifest[..i].rfind('\n').map_or(0, |p| p + 1);
            manifest[line_start..i].trim().is_empty()
        });
    let Some(start) = start else {
        return Vec::new();
    };
    let rest = &manifest[start..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return Vec::new();
    };
    if close < open {
        return Vec::new();
    }
    rest[open + 1..close]
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split(','))
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// `name = "..."` in the `[package]` table.
fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package
            && let Some((key, value)) = line.split_once('=')
            && key.trim() == "name"
        {
            return Some(value.trim().trim_matches('"').to_string());
        }
    }
    None
}

/// `test <path> ... ok|FAILED|ignored` lines, with the panic message of
/// failures taken from their `---- <path> stdout ----` section.
///
/// The output is stdout and stderr of `cargo test` together, so a line may
/// carry noise that a test's child process wrote: a result is also found
/// after such noise, and one whose status went to a later line is joined
/// with it. Whatever is still lost shows up against libtest's own
/// `test result:` counts, as a failure, so no test ever vanishes silently.
pub fn parse_libtest(out: &str) -> Vec<(String, Verdict)> {
    let mut results = Vec::new();
    let mut pending: Option<&str> = None;
    let (mut counted, mut parsed) = (0usize, 0usize);
    for line in out.lines() {
        if let Some(n) = summary_count(line) {
            counted += n;
            continue;
        }
        let (path, status) = match line.find("test ").map(|i| &line[i + 5..]) {
            Some(rest) if rest.contains(" ... ") => {
                let (path, status) = rest.rsplit_once(" ... ").unwrap_or((rest, ""));
                if status.trim().is_empty() {
                    pending = Some(path);
                    continue;
                }
                (path, status)
            }
            // Noise between a result and its status leaves it pending.
            _ => match pending {
                Some(path) if verdict_of(out, path, line.trim()).is_some() => (path, line),
                _ => continue,
            },
        };
        pending = None;
        if let Some(verdict) = verdict_of(out, path, status.trim()) {
            results.push((path.to_string(), verdict));
            parsed += 1;
        }
    }
    if parsed < counted {
        results.push((
            "unparsed results".to_string(),
            Verdict::Fail(format!(
                "libtest reported {counted} results, {parsed} were read (output interleaved?)"
            )),
        ));
    }
    results
}

fn verdict_of(out: &str, path: &str, status: &str) -> Option<Verdict> {
    match status {
        "ok" => Some(Verdict::Pass),
        "FAILED" => Some(Verdict::Fail(failure_reason(out, path))),
        s if s.starts_with("ignored") => Some(Verdict::Skip(
            s.strip_prefix("ignored, ").unwrap_or("ignored").to_string(),
        )),
        _ => None,
    }
}

/// passed + failed + ignored of a `test result: ok. 1 passed; 0 failed;
/// 2 ignored; ...` line.
fn summary_count(line: &str) -> Option<usize> {
    let rest = line.trim().strip_prefix("test result: ")?;
    let (_, counts) = rest.split_once(". ")?;
    let mut total = 0;
    for part in counts.split("; ") {
        let (n, what) = part.split_once(' ')?;
        if matches!(what, "passed" | "failed" | "ignored") {
            total += n.parse::<usize>().ok()?;
        }
    }
    Some(total)
}

fn failure_reason(out: &str, path: &str) -> String {
    let header = format!("---- {path} stdout ----");
    let Some(at) = out.find(&header) else {
        return "test failed".into();
    };
    let section: Vec<&str> = out[at + header.len()..]
        .lines()
        .skip(1)
        .take_while(|l| {
            !l.starts_with("---- ")
                && !l.starts_with("failures:")
                && !l.starts_with("stack backtrace:")
        })
        .filter(|l| !l.trim().is_empty() && !l.starts_with("note: run with"))
        .collect();
    match section.iter().position(|l| l.contains("panicked at")) {
        // "thread 'x' panicked at src/a.rs:1:2:" then the message.
        Some(i) => section[i..].join("\n"),
        None if !section.is_empty() => section.join("\n"),
        None => "test failed".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "\
   Compiling cpio v0.1.0 (/work/main/libs/cpio)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.50s
     Running unittests src/lib.rs (target/debug/deps/cpio-0123abcd)

running 4 tests
test tests::good ... ok
test tests::bad ... FAILED
test tests::slow ... ignored, takes a minute
test tests::plain_ignore ... ignored

failures:

---- tests::bad stdout ----

thread 'tests::bad' panicked at libs/cpio/src/lib.rs:10:5:
assertion `left == right` failed
  left: 1
 right: 2
stack backtrace:
   0: __rustc::rust_begin_unwind
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::bad

test result: FAILED. 1 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out
   Doc-tests cpio

running 1 test
test libs/cpio/src/lib.rs - Archive (line 5) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out
";

    #[test]
    fn libtest_lines_with_noise_and_losses() {
        let noisy = "\
running 3 tests
test a::one ... ok
xtask: a child wrote this test b::two ... ok
test c::three ... \nwarning: noise
ok
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out
";
        let got = parse_libtest(noisy);
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a::one", "b::two", "c::three"]);
        assert!(got.iter().all(|(_, v)| *v == Verdict::Pass));

        let lost = "\
test a::one ... ok
garbled
test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out
";
        let got = parse_libtest(lost);
        assert_eq!(got.len(), 2);
        assert!(matches!(&got[1].1, Verdict::Fail(m) if m.contains("2 results, 1 were read")));
    }

    #[test]
    fn libtest_lines() {
        let got = parse_libtest(OUTPUT);
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "tests::good",
                "tests::bad",
                "tests::slow",
                "tests::plain_ignore",
                "libs/cpio/src/lib.rs - Archive (line 5)"
            ]
        );
        assert_eq!(got[0].1, Verdict::Pass);
        let Verdict::Fail(reason) = &got[1].1 else {
            panic!("{:?}", got[1]);
        };
        assert!(reason.starts_with("thread 'tests::bad' panicked at libs/cpio/src/lib.rs:10:5:"));
        assert!(reason.contains("right: 2"));
        assert!(!reason.contains("RUST_BACKTRACE"));
        assert!(!reason.contains("rust_begin_unwind"));
        assert_eq!(got[2].1, Verdict::Skip("takes a minute".into()));
        assert_eq!(got[3].1, Verdict::Skip("ignored".into()));
        assert_eq!(got[4].1, Verdict::Pass);
    }

    #[test]
    fn manifest_parsing() {
        let ws = "[workspace]\ndefault-members = [\"xtask\"]\nmembers = [\"frame\", \"libs/cpio\", # c\n  \"xtask\",\n]\ndefault-members = [\"xtask\"]\n";
        assert_eq!(members(ws), ["frame", "libs/cpio", "xtask"]);
        let pkg = "[package]\nedition.workspace = true\nname = \"trellis-cpio\"\n[dependencies]\nname = \"x\"\n";
        assert_eq!(package_name(pkg).as_deref(), Some("trellis-cpio"));
        assert_eq!(package_name("[workspace]\nname = \"x\"\n"), None);
        let pkgs = vec![
            ("trellis-cpio".to_string(), PathBuf::from("/r/libs/cpio")),
            ("xtask".to_string(), PathBuf::from("/r/xtask")),
        ];
        assert_eq!(resolve(&pkgs, "cpio").as_deref(), Some("trellis-cpio"));
        assert_eq!(resolve(&pkgs, "xtask").as_deref(), Some("xtask"));
        assert_eq!(resolve(&pkgs, "elf"), None);
    }

    #[test]
    fn xtask_is_a_workspace_package() {
        let pkgs = workspace_packages(&crate::util::repo_root());
        assert!(pkgs.iter().any(|(n, _)| n == "xtask"), "{pkgs:?}");
    }
}
