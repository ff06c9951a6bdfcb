//! Layer 2: the user-space tests, run in the guest by `/sbin/test-runner`.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::args::AddSpec;
use crate::builder::{self, UserBuild};

use crate::qemu::Outcome;
use crate::scan::{serial_tail, strip_ansi};
use crate::test::{BootEnv, Reporter, Verdict};

/// A hang guard for a whole suite's boot, not a performance bound.
const TIMEOUT: Duration = Duration::from_secs(2400);
/// The runner kills a test that runs longer than this (a hang guard).
const PER_TEST_SECS: u32 = 300;

/// Parses a guest line `TEST <name> PASS`, `TEST <name> FAIL[: reason]` or
/// `TEST <name> SKIP[: reason]`.
pub fn parse_test_line(line: &str) -> Option<(String, Verdict)> {
    let clean = strip_ansi(line);
    let rest = clean.trim_end().strip_prefix("TEST ")?;
    let (name, result) = rest.split_once(' ')?;
    let reason = |word: &str| {
        let r = result[word.len()..].trim_start_matches(':').trim();
        if r.is_empty() {
            "no reason given".to_string()
        } else {
            r.to_string()
        }
    };
    let verdict = if result == "PASS" || result.starts_with("PASS ") {
        Verdict::Pass
    } else if result.starts_with("FAIL") {
        Verdict::Fail(reason("FAIL"))
    } else if result.starts_with("SKIP") {
        Verdict::Skip(reason("SKIP"))
    } else {
        return None;
    };
    let name = name.strip_prefix("/tests/").unwrap_or(name);
    if name.is_empty() {
        return None;
    }
    Some((name.to_string(), verdict))
}

/// The host run of `runner DIR SECS`: inside `script(1)` when there is
/// one, so that the runner's stdin is a terminal and the terminal tests
/// (line discipline, job control, /dev/tty) run on Linux too instead of
/// skipping.
fn host_runner(runner: &Path, dir: &Path) -> Command {
    let plain = format!("{} {} {PER_TEST_SECS}", runner.display(), dir.display());
    let has_script = Command::new("script")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if has_script && !plain.contains(['\'', '"', '$', '`', '\\']) {
        let mut cmd = Command::new("script");
        cmd.args(["-q", "-e", "-c", &plain, "/dev/null"]);
        cmd
    } else {
        let mut cmd = Command::new(runner);
        cmd.arg(dir).arg(PER_TEST_SECS.to_string());
        cmd
    }
}

/// [`parse_test_line`], with a SKIP's reason taken from the test's last
/// `note: skipped: REASON` line (kept in `note` between calls).
fn parse_result(line: &str, note: &mut Option<String>) -> Option<(String, Verdict)> {
    let clean = strip_ansi(line);
    if let Some(reason) = clean.trim().strip_prefix("note: skipped: ") {
        *note = Some(reason.to_string());
        return None;
    }
    let (name, verdict) = parse_test_line(line)?;
    let verdict = match (verdict, note.take()) {
        (Verdict::Skip(_), Some(reason)) => Verdict::Skip(reason),
        (v, _) => v,
    };
    Some((name, verdict))
}

/// Executable files directly in `dir`: the tests the runner should run.
fn test_binaries(dir: &Path) -> BTreeSet<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    rd.flatten()
        .filter(|e| {
            e.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// One directory of test programs and the layer that runs it.
pub struct Suite {
    /// The layer name, also the prefix of every result line.
    pub layer: &'static str,
    /// Where the binaries are in the guest.
    guest_dir: &'static str,
    /// The serial log under target/test-logs.
    log: &'static str,
    /// Whether the binaries are the glibc build (else musl).
    glibc: bool,
}

/// The musl suite (every test) and the glibc subset.
pub const SUITES: &[Suite] = &[
    Suite {
        layer: "user",
        guest_dir: "/tests",
        log: "user.log",
        glibc: false,
    },
    Suite {
        layer: "glibc",
        guest_dir: "/tests-glibc",
        log: "glibc.log",
        glibc: true,
    },
];

impl Suite {
    fn host_dir<'a>(&self, user: &'a UserBuild) -> &'a Path {
        if self.glibc { &user.glibc } else { &user.tests }
    }
}

pub fn run(env: &BootEnv, suite: &Suite, r: &mut Reporter) {
    let layer = suite.layer;
    let Some(user) = &env.user else {
        r.skip(&format!("{layer}:boot"), env.no_user);
        return;
    };
    if !user.runner.is_file() {
        r.fail(
            &format!("{layer}:boot"),
            format!("{} was not built", user.runner.display()),
        );
        return;
    }
    let host_dir = suite.host_dir(user);
    let expected = test_binaries(host_dir);
    eprintln!(
        "xtask: booting /sbin/test-runner {} ({} test programs)",
        suite.guest_dir,
        expected.len()
    );
    let argv = [
        "/sbin/test-runner".to_string(),
        suite.guest_dir.to_string(),
        PER_TEST_SECS.to_string(),
    ];
    // The musl suite is part of every initramfs; the glibc one is large
    // and only copied in for its own boot.
    let adds = if suite.glibc {
        vec![AddSpec {
            host: host_dir.to_path_buf(),
            guest: suite.guest_dir.to_string(),
        }]
    } else {
        Vec::new()
    };
    let mut reported = BTreeSet::new();
    let mut guest_failed = false;
    let mut skip_note = None;
    let result = env.boot_with(&argv, &adds, TIMEOUT, &mut |line| {
        if let Some((name, verdict)) = parse_result(line, &mut skip_note) {
            guest_failed |= matches!(verdict, Verdict::Fail(_));
            r.record(&format!("{layer}:{name}"), verdict);
            reported.insert(name);
        }
    });
    let result = match result {
        Ok(res) => res,
        Err(e) => {
            r.fail(&format!("{layer}:boot"), e);
            report_missing(r, layer, &expected, &reported);
            return;
        }
    };
    let log = match env.write_log(suite.log, &result) {
        Ok(p) => p.display().to_string(),
        Err(e) => format!("(no log: {e})"),
    };
    let log_tail = serial_tail(&result.lines, 30);
    match &result.outcome {
        Outcome::Poweroff(0) => {}
        Outcome::Poweroff(n) if !guest_failed => r.fail(
            &format!("{layer}:runner"),
            format!("test-runner exited with status {n} (log: {log})\n{log_tail}"),
        ),
        Outcome::Poweroff(_) => {}
        other => {
            let problem = other.problem().unwrap_or_default();
            r.fail(
                &format!("{layer}:boot"),
                format!("{problem} (log: {log})\n{log_tail}"),
            );
        }
    }
    report_missing(r, layer, &expected, &reported);
}

/// The `linux` layer: the same binaries run on the host's Linux kernel, so
/// every test is shown to encode Linux's behaviour and not only ours.
pub fn run_on_host(root: &Path, r: &mut Reporter) {
    let user = match builder::build_user(root, true) {
        Ok(Some(u)) => u,
        Ok(None) => {
            r.skip("linux:build", "user/Makefile does not exist yet");
            return;
        }
        Err(e) => {
            r.fail("linux:build", e);
            return;
        }
    };
    for (layer, dir) in [("linux", &user.tests), ("linux-glibc", &user.glibc)] {
        let expected = test_binaries(dir);
        eprintln!(
            "xtask: running {} test programs on the host kernel ({layer})",
            expected.len()
        );
        let mut reported = BTreeSet::new();
        let out = host_runner(&user.runner, dir)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output();
        let out = match out {
            Ok(o) => o,
            Err(e) => {
                r.fail(&format!("{layer}:runner"), format!("cannot run the runner: {e}"));
                continue;
            }
        };
        let mut skip_note = None;
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if let Some((name, verdict)) = parse_result(line, &mut skip_note) {
                r.record(&format!("{layer}:{name}"), verdict);
                reported.insert(name);
            }
        }
        report_missing(r, layer, &expected, &reported);
    }
}

fn report_missing(
    r: &mut Reporter,
    layer: &str,
    expected: &BTreeSet<String>,
    reported: &BTreeSet<String>,
) {
    for name in expected.difference(reported) {
        r.fail(&format!("{layer}:{name}"), "did not run");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str) -> Option<(String, Verdict)> {
        parse_test_line(line)
    }

    #[test]
    fn guest_test_lines() {
        assert_eq!(p("TEST fork PASS"), Some(("fork".into(), Verdict::Pass)));
        assert_eq!(p("TEST fork PASS\r"), Some(("fork".into(), Verdict::Pass)));
        assert_eq!(
            p("TEST /tests/pipe FAIL: read returned -1"),
            Some(("pipe".into(), Verdict::Fail("read returned -1".into())))
        );
        assert_eq!(
            p("TEST mmap FAIL"),
            Some(("mmap".into(), Verdict::Fail("no reason given".into())))
        );
        assert_eq!(
            p("TEST net SKIP: no network"),
            Some(("net".into(), Verdict::Skip("no network".into())))
        );
        assert_eq!(p("TEST x PASSED"), None);
        assert_eq!(p("TEST x"), None);
        assert_eq!(p("12 passed, 0 failed"), None);
        assert_eq!(p("[ 0.1] TEST x PASS"), None);
    }

    #[test]
    fn skip_reason_from_note() {
        let mut note = None;
        assert_eq!(parse_result("  note: skipped: no ptys", &mut note), None);
        assert_eq!(
            parse_result("TEST pty SKIP: exit status 77", &mut note),
            Some(("pty".into(), Verdict::Skip("no ptys".into())))
        );
        assert_eq!(
            parse_result("TEST b SKIP: exit status 77", &mut note),
            Some(("b".into(), Verdict::Skip("exit status 77".into())))
        );
    }

    #[test]
    fn only_executables_are_tests() {
        let dir = std::env::temp_dir().join(format!("xtask-user-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("subdir")).unwrap();
        for (name, mode) in [("a", 0o755), ("b.d", 0o644), ("c", 0o700)] {
            std::fs::write(dir.join(name), b"").unwrap();
            std::fs::set_permissions(dir.join(name), PermissionsExt::from_mode(mode)).unwrap();
        }
        let got = test_binaries(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got.into_iter().collect::<Vec<_>>(), ["a", "c"]);
    }
}
