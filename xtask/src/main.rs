#![forbid(unsafe_code)]
//! `cargo xtask`: builds the Trellis kernel, its initramfs and user-space
//! tests, boots them in QEMU and runs the test suite.
//!
//! Exit codes:
//! - `run -- CMD`: the status `N` from the kernel's `trellis: poweroff status=N`
//!   line; 124 on timeout, 125 on a kernel panic, 126 when QEMU exited without
//!   a poweroff line.
//! - 1 when something could not be built or started, 2 on a usage error.
//! - `test`: 0 when every test passed, 1 otherwise.

mod api_scan;
mod args;
mod bench;
mod bench_profile;
mod bench_report;
mod bench_wall;
mod builder;
mod compile_fail;
mod cpio;
mod fuzz;
mod initramfs;
mod ksyms;
mod miri;
mod miri_sites;
mod mkimage;
mod qemu;
mod rootfs;
mod scan;
mod tcb;
mod tcb_lines;
mod tcb_scan;
mod test;
mod test_busybox;
mod test_debian;
mod test_host;
mod test_interactive;
mod test_ktest;
mod test_net;
mod test_crash;
mod test_crash_net;
mod test_storage;
mod test_user;
mod util;

use std::process::ExitCode;

use args::{Invocation, Options, Sub};

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let inv = match args::parse(&argv) {
        Ok(inv) => inv,
        Err(msg) => {
            eprintln!("xtask: {msg}");
            eprintln!("{}", args::USAGE);
            return ExitCode::from(util::EXIT_USAGE);
        }
    };
    let code = match dispatch(&inv) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("xtask: error: {msg}");
            util::EXIT_ERROR
        }
    };
    ExitCode::from(code)
}

fn dispatch(inv: &Invocation) -> util::Res<u8> {
    let root = util::repo_root();
    match inv.sub {
        Sub::Help => {
            println!("{}", args::USAGE);
            Ok(0)
        }
        Sub::Build => {
            let kernel = builder::kernel_for_boot(&root, &inv.opts, false)?;
            build_initramfs(&root, &inv.opts, false)?;
            eprintln!("xtask: kernel image: {}", kernel.display());
            Ok(0)
        }
        Sub::Initramfs => {
            build_initramfs(&root, &inv.opts, false)?;
            Ok(0)
        }
        Sub::Run => {
            let kernel = builder::kernel_for_boot(&root, &inv.opts, false)?;
            let initrd = build_initramfs(&root, &inv.opts, true)?;
            match &inv.opts.root {
                Some(dir) => run(&kernel, &initrd, &rootfs::boot_options(&root, dir, &inv.opts)?),
                None => run(&kernel, &initrd, &inv.opts),
            }
        }
        Sub::Test => test::run_all(&root, &inv.opts),
        Sub::Bench => bench::run(&root, &inv.opts),
        Sub::Fuzz => fuzz::run(&root, &inv.opts),
        Sub::Mkimage => mkimage::run(&inv.opts),
        Sub::Rootfs => {
            let pkgs: Vec<String> = if inv.opts.positional.is_empty() {
                rootfs::DEFAULT_PACKAGES.iter().map(|s| s.to_string()).collect()
            } else {
                inv.opts.positional.clone()
            };
            let out = inv.opts.out.clone().unwrap_or_else(|| rootfs::default_out(&root));
            let n = rootfs::build(&root, &out, &pkgs)?;
            eprintln!("xtask: {} holds {n} Debian packages; boot it with `cargo xtask run --root {}`", out.display(), out.display());
            Ok(0)
        }
        Sub::Tcb => tcb::run(&root),
        Sub::Miri => miri::run(&root),
        Sub::Api => api_scan::public_items(&root.join("frame/src/lib.rs")).map(|items| {
            for i in items {
                println!("{i}");
            }
            0
        }),
    }
}

/// Builds the user programs and writes `target/initramfs.cpio`. With
/// `lenient`, a failing user build only warns and the previously built
/// programs are used, so one broken test does not block `run`.
fn build_initramfs(
    root: &std::path::Path,
    opts: &Options,
    lenient: bool,
) -> util::Res<std::path::PathBuf> {
    let user = match builder::build_user(root, false) {
        Ok(user) => user,
        Err(e) if lenient => {
            eprintln!("xtask: warning: {e}");
            eprintln!("xtask: warning: continuing with the previously built user programs");
            Some(builder::UserBuild::at(root))
        }
        Err(e) => return Err(e),
    };
    let out = util::target_dir(root).join("initramfs.cpio");
    let spec = initramfs::Spec {
        user: user.as_ref(),
        adds: &opts.adds,
        argv: opts.command.as_deref(),
    };
    let stats = initramfs::write(&spec, &out)?;
    eprintln!(
        "xtask: wrote {} ({} entries, {} bytes)",
        out.display(),
        stats.entries,
        stats.bytes
    );
    Ok(out)
}

/// Boots the kernel: interactively, or running the command after `--`.
fn run(kernel: &std::path::Path, initrd: &std::path::Path, opts: &Options) -> util::Res<u8> {
    let console = if opts.command.is_some() {
        qemu::Console::Command
    } else {
        qemu::Console::Interactive
    };
    let timeout = match (opts.timeout, &opts.command) {
        (Some(t), _) => t,
        (None, Some(_)) => Some(std::time::Duration::from_secs(300)),
        (None, None) => None,
    };
    let net = opts.net.then(|| qemu::Net {
        forwards: opts.forwards.clone(),
        intx: false,
    });
    let mut append = opts.append.clone();
    if net.is_some() {
        append.insert(0, qemu::NET_CMDLINE.to_string());
    }
    let boot = qemu::Boot {
        kernel,
        initrd,
        append: &append,
        timeout,
        console,
        watch: None,
        disks: &opts.disks,
        net: net.as_ref(),
    };
    let result = qemu::boot(&boot, &mut |_| {})?;
    if let Some(msg) = result.outcome.problem() {
        eprintln!("xtask: {msg}");
    }
    Ok(result.outcome.exit_code())
}
