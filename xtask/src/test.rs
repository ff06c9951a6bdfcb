//! `cargo xtask test`: runs the test layers and reports one line per test.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::args::{AddSpec, Options};
use crate::builder::{self, UserBuild};
use crate::qemu::{self, BootResult, Console};
use crate::util::{Context, Res, target_dir};
use crate::{
    bench, compile_fail, fuzz, initramfs, miri, test_busybox, test_debian, test_host,
    test_crash, test_interactive, test_ktest, test_net, test_storage, test_user,
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail(String),
    Skip(String),
}

/// Prints `TEST <name> PASS|FAIL: ..|SKIP: ..` lines and counts them.
#[derive(Default)]
pub struct Reporter {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

/// The first line of `reason` (shortened) and the remaining lines.
fn split_reason(reason: &str) -> (String, Vec<&str>) {
    let mut lines = reason.lines().filter(|l| !l.trim().is_empty());
    let head = lines.next().unwrap_or("no reason given").trim();
    let head = if head.chars().count() > 200 {
        format!("{}...", head.chars().take(200).collect::<String>())
    } else {
        head.to_string()
    };
    (head, lines.collect())
}

/// Formats one report line plus indented detail lines.
pub fn format_verdict(name: &str, v: &Verdict) -> String {
    let (word, reason) = match v {
        Verdict::Pass => return format!("TEST {name} PASS"),
        Verdict::Fail(r) => ("FAIL", r),
        Verdict::Skip(r) => ("SKIP", r),
    };
    let (head, rest) = split_reason(reason);
    let mut s = format!("TEST {name} {word}: {head}");
    for line in rest.iter().rev().take(40).rev() {
        s.push_str("\n    | ");
        s.push_str(line);
    }
    s
}

impl Reporter {
    pub fn record(&mut self, name: &str, v: Verdict) {
        match v {
            Verdict::Pass => self.passed += 1,
            Verdict::Fail(_) => self.failed += 1,
            Verdict::Skip(_) => self.skipped += 1,
        }
        // Through `println!`, not a raw stdout handle: libtest captures it in
        // xtask's own unit tests, whose result lines it would otherwise cut
        // (bench::tests::smoke_verdicts printed into the line of the test
        // running beside it, and the host layer lost that result).
        println!("{}", format_verdict(name, &v));
    }

    pub fn pass(&mut self, name: &str) {
        self.record(name, Verdict::Pass);
    }

    pub fn fail(&mut self, name: &str, reason: impl Into<String>) {
        self.record(name, Verdict::Fail(reason.into()));
    }

    pub fn skip(&mut self, name: &str, reason: impl Into<String>) {
        self.record(name, Verdict::Skip(reason.into()));
    }

    pub fn summary(&self) -> String {
        let mut s = format!("{} passed, {} failed", self.passed, self.failed);
        if self.skipped > 0 {
            s.push_str(&format!(", {} skipped", self.skipped));
        }
        s
    }
}

/// What the QEMU layers share: one kernel build per `xtask test`.
pub struct BootEnv {
    pub root: PathBuf,
    pub kernel: PathBuf,
    pub user: Option<UserBuild>,
    /// Why `user` is `None`.
    pub no_user: &'static str,
}

impl BootEnv {
    pub fn log_dir(&self) -> PathBuf {
        target_dir(&self.root).join("test-logs")
    }

    /// Boots `argv` exactly like `run -- ARGV` does, collecting the output.
    pub fn boot_command(
        &self,
        argv: &[String],
        timeout: Duration,
        on_line: &mut dyn FnMut(&str),
    ) -> Res<BootResult> {
        self.boot_with(argv, &[], timeout, on_line)
    }

    /// [`Self::boot_command`] with extra host files or directories copied in.
    pub fn boot_with(
        &self,
        argv: &[String],
        adds: &[AddSpec],
        timeout: Duration,
        on_line: &mut dyn FnMut(&str),
    ) -> Res<BootResult> {
        let initrd = target_dir(&self.root).join("initramfs.cpio");
        let spec = initramfs::Spec {
            user: self.user.as_ref(),
            adds,
            argv: Some(argv),
        };
        initramfs::write(&spec, &initrd)?;
        let append = test_cmdline();
        let boot = qemu::Boot {
            kernel: &self.kernel,
            initrd: &initrd,
            append: &append,
            timeout: Some(timeout),
            console: Console::Capture,
            watch: None,
            disks: &[],
            net: None,
        };
        qemu::boot(&boot, on_line)
    }

    /// Boots `argv` from its own initramfs file `initrd` (so that boots of
    /// several xtask processes do not share one), with a progress watchdog.
    pub fn boot_watched(
        &self,
        argv: &[String],
        initrd: &Path,
        timeout: Option<Duration>,
        watch: qemu::Watch<'_>,
        on_line: &mut dyn FnMut(&str),
    ) -> Res<BootResult> {
        let spec = initramfs::Spec {
            user: self.user.as_ref(),
            adds: &[],
            argv: Some(argv),
        };
        initramfs::write(&spec, initrd)?;
        let append = test_cmdline();
        let boot = qemu::Boot {
            kernel: &self.kernel,
            initrd,
            append: &append,
            timeout,
            console: Console::Capture,
            watch: Some(watch),
            disks: &[],
            net: None,
        };
        qemu::boot(&boot, on_line)
    }

    /// Writes a boot's serial output (and QEMU's stderr) to `<log_dir>/<name>`.
    pub fn write_log(&self, name: &str, result: &BootResult) -> Res<PathBuf> {
        let dir = self.log_dir();
        std::fs::create_dir_all(&dir).ctx(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(name);
        let mut text = result.lines.join("\n");
        text.push('\n');
        if !result.stderr.is_empty() {
            text.push_str("--- QEMU stderr ---\n");
            text.push_str(&result.stderr);
        }
        std::fs::write(&path, text).ctx(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }
}

fn prepare(root: &Path, opts: &Options, r: &mut Reporter) -> Option<BootEnv> {
    eprintln!("xtask: building the kernel");
    let kernel = match builder::kernel_for_boot(root, opts, true) {
        Ok(k) => k,
        Err(e) => {
            r.fail("build:kernel", e);
            return None;
        }
    };
    eprintln!("xtask: building user programs");
    let (user, no_user) = match builder::build_user(root, true) {
        Ok(u) => (u, "user/Makefile does not exist yet"),
        Err(e) => {
            r.fail("build:user", e);
            (None, "the user programs did not build")
        }
    };
    Some(BootEnv {
        root: root.to_path_buf(),
        kernel,
        user,
        no_user,
    })
}

pub fn run_all(root: &Path, opts: &Options) -> Res<u8> {
    let want = |layer: &str| opts.only.is_empty() || opts.only.iter().any(|l| l == layer);
    let mut r = Reporter::default();
    if want("host") {
        test_host::run(root, &mut r);
    }
    if want("miri") {
        let _ = miri::layer(root, &mut r);
    }
    if want("compile-fail") {
        compile_fail::run(root, &mut r);
    }
    if want("linux") {
        test_user::run_on_host(root, &mut r);
    }
    let guest_layers = [
        "user",
        "glibc",
        "busybox",
        "interactive",
        "ktest",
        "storage",
        "crash",
        "net",
        "debian",
        "fuzz",
        "bench",
    ];
    if guest_layers.iter().any(|l| want(l)) {
        let env = prepare(root, opts, &mut r);
        for suite in test_user::SUITES {
            if want(suite.layer) {
                match &env {
                    Some(env) => test_user::run(env, suite, &mut r),
                    None => r.skip(&format!("{}:boot", suite.layer), "the kernel did not build"),
                }
            }
        }
        if want("busybox") {
            test_busybox::run(env.as_ref(), &mut r);
        }
        if want("interactive") {
            test_interactive::run(env.as_ref(), &mut r);
        }
        if want("ktest") {
            test_ktest::run(env.as_ref(), &mut r);
        }
        if want("storage") {
            test_storage::run(env.as_ref(), &mut r);
        }
        if want("crash") {
            test_crash::run(env.as_ref(), &mut r);
        }
        if want("net") {
            test_net::run(env.as_ref(), &mut r);
        }
        if want("debian") {
            test_debian::run(env.as_ref(), &mut r);
        }
        if want("fuzz") {
            fuzz::layer(env.as_ref(), &mut r);
        }
        if want("bench") {
            bench::smoke_layer(env.as_ref(), &mut r);
        }
    }
    println!("{}", r.summary());
    Ok(if r.failed > 0 { 1 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_lines() {
        assert_eq!(
            format_verdict("host:x:a", &Verdict::Pass),
            "TEST host:x:a PASS"
        );
        assert_eq!(
            format_verdict("a", &Verdict::Skip("why".into())),
            "TEST a SKIP: why"
        );
        assert_eq!(
            format_verdict("a", &Verdict::Fail("\nfirst\nsecond\n".into())),
            "TEST a FAIL: first\n    | second"
        );
        assert_eq!(
            format_verdict("a", &Verdict::Fail(String::new())),
            "TEST a FAIL: no reason given"
        );
    }

    #[test]
    fn summary_line() {
        let mut r = Reporter {
            passed: 3,
            failed: 1,
            skipped: 0,
        };
        assert_eq!(r.summary(), "3 passed, 1 failed");
        r.skipped = 2;
        assert_eq!(r.summary(), "3 passed, 1 failed, 2 skipped");
    }
}

/// Kernel parameters of test boots: two 16 MiB RAM disks (/dev/ram0,
/// /dev/ram1) for the block-layer tests; their pages are allocated only
/// when written.
fn test_cmdline() -> Vec<String> {
    vec!["brd.rd_nr=2 brd.rd_size=16384".to_string()]
}
