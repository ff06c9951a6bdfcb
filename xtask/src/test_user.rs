//! Layer 2: the user-space tests, run in the guest by `/sbin/test-runner`.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use crate::qemu::Outcome;
use crate::scan::{serial_tail, strip_ansi};
use crate::test::{BootEnv, Reporter, Verdict};

const TIMEOUT: Duration = Duration::from_secs(600);
const LOG: &str = "user.log";

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

pub fn run(env: &BootEnv, r: &mut Reporter) {
    let Some(user) = &env.user else {
        r.skip("user:boot", env.no_user);
        return;
    };
    if !user.runner.is_file() {
        r.fail(
            "user:boot",
            format!("{} was not built", user.runner.display()),
        );
        return;
    }
    let expected = test_binaries(&user.tests);
    eprintln!(
        "xtask: booting /sbin/test-runner /tests ({} test programs)",
        expected.len()
    );
    let argv = ["/sbin/test-runner".to_string(), "/tests".to_string()];
    let mut reported = BTreeSet::new();
    let mut guest_failed = false;
    let result = env.boot_command(&argv, TIMEOUT, &mut |line| {
        if let Some((name, verdict)) = parse_test_line(line) {
            guest_failed |= matches!(verdict, Verdict::Fail(_));
            r.record(&format!("user:{name}"), verdict);
            reported.insert(name);
        }
    });
    let result = match result {
        Ok(res) => res,
        Err(e) => {
            r.fail("user:boot", e);
            report_missing(r, &expected, &reported);
            return;
        }
    };
    let log = match env.write_log(LOG, &result) {
        Ok(p) => p.display().to_string(),
        Err(e) => format!("(no log: {e})"),
    };
    let log_tail = serial_tail(&result.lines, 30);
    match &result.outcome {
        Outcome::Poweroff(0) => {}
        Outcome::Poweroff(n) if !guest_failed => r.fail(
            "user:runner",
            format!("test-runner exited with status {n} (log: {log})\n{log_tail}"),
        ),
        Outcome::Poweroff(_) => {}
        other => {
            let problem = other.problem().unwrap_or_default();
            r.fail("user:boot", format!("{problem} (log: {log})\n{log_tail}"));
        }
    }
    report_missing(r, &expected, &reported);
}

fn report_missing(r: &mut Reporter, expected: &BTreeSet<String>, reported: &BTreeSet<String>) {
    for name in expected.difference(reported) {
        r.fail(&format!("user:{name}"), "did not run");
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
