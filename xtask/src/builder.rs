//! Building the kernel and the user-space programs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::args::Options;
use crate::ksyms;
use crate::util::{Res, cargo, run_inherit, run_quiet, target_dir};

pub const KERNEL_PACKAGE: &str = "trellis-kernel";
pub const KERNEL_BIN: &str = "trellis";
pub const KERNEL_TARGET: &str = "x86_64-unknown-none";

/// Builds the kernel with cargo and returns the path of the ELF.
/// `quiet` captures cargo's output and only shows its tail on failure.
pub fn build_kernel(root: &Path, release: bool, quiet: bool) -> Res<PathBuf> {
    let mut cmd = cargo();
    // The ELF must land in <root>/target, where ksyms and QEMU look for it.
    cmd.current_dir(root).env_remove("CARGO_TARGET_DIR").args([
        "build",
        "-p",
        KERNEL_PACKAGE,
        "--target",
        KERNEL_TARGET,
    ]);
    if release {
        cmd.arg("--release");
    }
    if quiet {
        cmd.args(["--color", "never"]);
        run_quiet(&mut cmd)?;
    } else {
        eprintln!(
            "xtask: building the kernel ({})",
            if release { "release" } else { "debug" }
        );
        run_inherit(&mut cmd)?;
    }
    let profile = if release { "release" } else { "debug" };
    let elf = target_dir(root)
        .join(KERNEL_TARGET)
        .join(profile)
        .join(KERNEL_BIN);
    if !elf.is_file() {
        return Err(format!(
            "cargo succeeded but {} does not exist",
            elf.display()
        ));
    }
    Ok(elf)
}

/// The image QEMU should boot: `--kernel ELF` as given, or a freshly built
/// kernel with its `.ksyms` section filled in.
pub fn kernel_for_boot(root: &Path, opts: &Options, quiet: bool) -> Res<PathBuf> {
    if let Some(k) = &opts.kernel {
        if !k.is_file() {
            return Err(format!("--kernel {}: no such file", k.display()));
        }
        return Ok(k.clone());
    }
    let elf = build_kernel(root, opts.release, quiet)?;
    ksyms::embed(&elf)
}

/// Where `make -C user` put its results.
#[derive(Debug, Clone)]
pub struct UserBuild {
    /// `$(BUILD)/tests`: the test binaries (static musl).
    pub tests: PathBuf,
    /// `$(BUILD)/tests-glibc`: the glibc subset (static glibc).
    pub glibc: PathBuf,
    /// `$(BUILD)/runner`: installed as `/sbin/test-runner`.
    pub runner: PathBuf,
    /// `$(BUILD)/fuzz`: the syscall fuzzer, installed as `/sbin/fuzz`.
    pub fuzz: PathBuf,
    /// `$(BUILD)/dyn`: dynamically linked programs, installed in `/dyn`
    /// with the host's musl and glibc dynamic linkers.
    pub dyn_progs: PathBuf,
}

impl UserBuild {
    /// The locations under `<root>/target/user`.
    pub fn at(root: &Path) -> Self {
        let build = target_dir(root).join("user");
        UserBuild {
            tests: build.join("tests"),
            glibc: build.join("tests-glibc"),
            runner: build.join("runner"),
            fuzz: build.join("fuzz"),
            dyn_progs: build.join("dyn"),
        }
    }
}

/// Runs `make -C user BUILD=<root>/target/user all glibc`. Returns `None` (after a
/// warning) when `user/Makefile` does not exist yet.
pub fn build_user(root: &Path, quiet: bool) -> Res<Option<UserBuild>> {
    if !root.join("user/Makefile").is_file() {
        eprintln!("xtask: warning: user/Makefile does not exist; no user-space tests");
        return Ok(None);
    }
    let build = target_dir(root).join("user");
    let mut cmd = Command::new("make");
    cmd.current_dir(root)
        .arg("-C")
        .arg("user")
        .arg(format!("BUILD={}", build.display()))
        .args(["all", "glibc"]);
    if quiet {
        run_quiet(&mut cmd)?;
    } else {
        eprintln!("xtask: building user programs");
        // Keep stdout for the guest's output (`run -- CMD`).
        cmd.stdout(std::io::stderr());
        run_inherit(&mut cmd)?;
    }
    Ok(Some(UserBuild::at(root)))
}
