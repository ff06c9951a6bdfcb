//! Miri over frame/'s host tests (the frame code against a simulated
//! machine: RAM, devices and a CPU model), and how many of frame's `unsafe`
//! sites those tests reach, from line coverage of the same tests.
//!
//! `cargo xtask test` runs the Miri layer when the pinned nightly with the
//! `miri` component is installed (scripts/setup.sh tries to install it) and
//! says why it skipped otherwise. `cargo xtask miri` runs Miri, then the
//! unit tests that passed under Miri again natively with coverage
//! instrumentation, and prints the figure and every unreached site with
//! its reason (see `miri_sites`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use crate::miri_sites;
use crate::test::{Reporter, Verdict};
use crate::test_host::parse_libtest;
use crate::util::{Context, Res, run_captured, run_quiet, tail, target_dir};

/// The nightly whose Miri is known to work (see shared MACHINE-FACTS).
pub const NIGHTLY: &str = "nightly-2026-05-20";
/// Pointers into the simulated RAM keep their provenance, so Miri can
/// check strictly. The simulated machine's threads (the boot context a
/// context switch abandoned, exited tasks, the first task between jobs)
/// are still parked when the test harness ends, which Miri's leak check
/// would report; leaks of frame's memory are checked by the tests' own
/// frame accounting instead (`free_frames()` before and after).
pub const MIRIFLAGS: &str = "-Zmiri-strict-provenance -Zmiri-ignore-leaks";

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
/// per test. Returns the tests that passed (empty when skipped).
pub fn layer(root: &Path, r: &mut Reporter) -> BTreeSet<String> {
    if let Some(why) = unavailable() {
        r.skip("miri", why);
        return BTreeSet::new();
    }
    eprintln!("xtask: cargo +{NIGHTLY} miri test -p frame");
    let mut cmd = nightly_cargo(root);
    cmd.env("MIRIFLAGS", MIRIFLAGS)
        .args(["miri", "test", "--no-fail-fast", "-p", "frame"]);
    let (status, out): (ExitStatus, String) = match run_captured(&mut cmd) {
        Ok(x) => x,
        Err(e) => {
            r.fail("miri", e);
            return BTreeSet::new();
        }
    };
    let results = parse_libtest(&out);
    for (test, verdict) in &results {
        r.record(&format!("miri:frame:{test}"), verdict.clone());
    }
    let passed = results
        .iter()
        .filter(|(_, v)| *v == Verdict::Pass)
        .map(|(t, _)| t.clone())
        .collect();
    if !status.success() && !results.iter().any(|(_, v)| matches!(v, Verdict::Fail(_))) {
        // Undefined behaviour aborts the whole test binary.
        let first = out
            .lines()
            .position(|l| l.starts_with("error"))
            .map(|i| out.lines().skip(i).take(30).collect::<Vec<_>>().join("\n"))
            .unwrap_or_else(|| tail(&out, 30));
        r.fail("miri:frame", first);
    }
    passed
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

/// Runs frame's unit tests named in `tests` (those that passed under Miri)
/// natively with coverage instrumentation and returns the lcov trace.
fn coverage_trace(root: &Path, tests: &BTreeSet<String>) -> Res<String> {
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
            // The tests take the sizes they have under Miri (sim::miri_sized).
            .env("TRELLIS_MIRI_SIZES", "1")
            .env("LLVM_PROFILE_FILE", dir.join("profraw/frame-%p-%m.profraw"))
            .arg("test")
            .arg("--target-dir")
            .arg(dir.join("build"))
            .args(["-p", "frame", "--lib"])
            .args(extra);
        cmd
    };
    eprintln!(
        "xtask: the {} unit tests that passed under Miri, natively with coverage instrumentation",
        tests.len()
    );
    let mut run = test(&["--", "--exact"]);
    run.args(tests);
    run_quiet(&mut run)?;
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

/// `cargo xtask miri`: the Miri layer, then the unsafe-site coverage of
/// the unit tests that passed under Miri. Fails if Miri fails or a site's
/// note needs fixing (see `miri_sites`).
pub fn run(root: &Path) -> Res<u8> {
    let mut r = Reporter::default();
    let passed = layer(root, &mut r);
    println!("{}", r.summary());
    if passed.is_empty() {
        return Err("no test passed under Miri; nothing to measure".into());
    }
    // Doctests also run under Miri, but only the unit tests are measured.
    let unit: BTreeSet<String> = passed
        .iter()
        .filter(|t| !t.contains(' '))
        .cloned()
        .collect();
    let trace = coverage_trace(root, &unit)?;
    let cov = miri_sites::parse_lcov(&trace);
    let mut files = Vec::new();
    rs_files(&root.join("frame/src"), &mut files);
    let mut sources = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).ctx(|| format!("cannot read {}", f.display()))?;
        sources.push((f, src));
    }
    // Test-only modules (the simulated machine, the tests) are not frame's
    // code; their unsafe is checked by Miri but not counted.
    let test_only: Vec<PathBuf> = sources
        .iter()
        .flat_map(|(f, src)| miri_sites::test_module_files(f, src))
        .collect();
    let mut sites = Vec::new();
    let mut test_sites = 0;
    for (f, src) in &sources {
        let found = miri_sites::sites_in(f, src);
        if test_only.iter().any(|t| f.starts_with(t)) {
            test_sites += found.len();
        } else {
            sites.extend(found);
        }
    }
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    // The instruction layer: the file host tests replace with the CPU model.
    let layer = root.join("frame/src/arch/x86_64/cpu.rs");
    let report = miri_sites::report(&sites, &cov, &unit, &rel, &|s| s.file == layer);
    print!("{}", report.text);
    println!(
        "(not counted: {test_sites} unsafe sites in test-only modules: the simulated machine \
         and the tests)"
    );
    Ok(if r.failed > 0 || report.errors > 0 {
        1
    } else {
        0
    })
}
