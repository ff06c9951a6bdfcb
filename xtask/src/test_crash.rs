//! The `crash` layer: ext2 over virtio-blk while the virtio-blk driver,
//! which runs in a driver domain behind a shadow, is made to crash
//! (docs/domains.md, "Shadow drivers and recovery").
//!
//! - `crash:workload`: a boot with `drivers.crash=virtio-blk:1s` runs
//!   `crashwork run` (user/storage/crashwork.c) for 60 guest seconds: a
//!   writer (256 KiB files, fsync after each) and a reader (seed files
//!   the host put in the image, checked byte for byte). Passes when no
//!   system call failed, every check matched, the kernel injected at
//!   least 30 crashes and recovered from them (its log), and the boot
//!   ended in a clean poweroff.
//! - `crash:fsck`: the host's `e2fsck -fn` finds the image clean.
//! - `crash:verify`: a second boot, without crashes, reads every file the
//!   writer wrote (cold, from the disk) and the seed files back.
//! - `crash:fail-cleanly`: with the driver made to crash at every point
//!   (`/sys/kernel/debug/domains/virtio-blk/crash`), it is restarted with
//!   back-off, then the device is failed: two reads end with EIO, the
//!   kernel logs it, nothing panics or hangs.
//! - `crash:net-transfer`, `crash:net-fail-cleanly`: the same for the
//!   virtio-net driver (xtask/src/test_crash_net.rs).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::args::AddSpec;
use crate::initramfs;
use crate::mkimage;
use crate::qemu::{self, BootResult, Console};
use crate::scan::guest_output;
use crate::test::{BootEnv, Reporter};
use crate::test_storage::boot_problem;
use crate::util::{Context, Res, run_quiet, target_dir};

pub(crate) const PROGS: &str = "/opt/storage";
const SEED_FILES: u64 = 64;
const SEED_SIZE: usize = 512 * 1024;
/// Guest seconds of the workload under crashes.
const SECONDS: u32 = 60;
/// Fewest injected crashes the workload boot must show (one per second is
/// asked; a second without a request gets none).
const MIN_CRASHES: u64 = 30;
const TIMEOUT: Duration = Duration::from_secs(600);

/// The same generator as crashwork.c's `fill`.
pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn content(seed: u64, len: usize) -> Vec<u8> {
    (0..len / 8)
        .flat_map(|i| splitmix64((seed << 40) ^ i as u64).to_le_bytes())
        .collect()
}

pub fn run(env: Option<&BootEnv>, r: &mut Reporter) {
    let Some(env) = env else {
        r.skip("crash", "the kernel did not build");
        return;
    };
    if env.user.is_none() {
        r.skip("crash", env.no_user);
        return;
    }
    eprintln!("xtask: crash layer");
    let dir = target_dir(&env.root).join("crash");
    let progs = match build_programs(&env.root) {
        Ok(p) => p,
        Err(e) => return r.fail("crash:build", e),
    };
    let image = dir.join("crash.img");
    if let Err(e) = make_image(&dir, &image) {
        return r.fail("crash:mkimage", e);
    }
    let ok = workload(env, &dir, &progs, &image, r);
    match mkimage::fsck_clean(&image) {
        Ok(_) => r.pass("crash:fsck"),
        Err(e) => r.fail("crash:fsck", e),
    }
    if ok {
        verify(env, &dir, &progs, &image, r);
    }
    fail_cleanly(env, &dir, &progs, r);
    crate::test_crash_net::run(env, &dir, &progs, r);
}

fn build_programs(root: &Path) -> Res<PathBuf> {
    let build = target_dir(root).join("user/storage");
    run_quiet(
        Command::new("make")
            .current_dir(root)
            .args(["-C", "user/storage"])
            .arg(format!("BUILD={}", build.display())),
    )?;
    Ok(build)
}

/// A 160 MiB ext2 image (4 KiB blocks) holding the seed files.
fn make_image(dir: &Path, image: &Path) -> Res<()> {
    let tree = dir.join("tree");
    let _ = std::fs::remove_dir_all(&tree);
    let seed = tree.join("seed");
    std::fs::create_dir_all(&seed).ctx(|| format!("cannot create {}", seed.display()))?;
    for k in 0..SEED_FILES {
        let p = seed.join(format!("f{k}"));
        std::fs::write(&p, content(k + 1, SEED_SIZE))
            .ctx(|| format!("cannot write {}", p.display()))?;
    }
    mkimage::make(&tree, image, Some(160), 4096)
}

/// Boots `script` under `/bin/sh -c` with the crash programs at [`PROGS`],
/// /proc and /sys mounted; shared with the network cases.
#[allow(clippy::too_many_arguments)]
pub(crate) fn boot(
    env: &BootEnv,
    dir: &Path,
    progs: &Path,
    name: &str,
    script: &str,
    append: &[String],
    disks: &[PathBuf],
    net: Option<&qemu::Net>,
) -> Res<BootResult> {
    let adds = [AddSpec {
        host: progs.to_path_buf(),
        guest: PROGS.into(),
    }];
    let script = format!(
        "mkdir -p /proc /sys /mnt/c; mount -t proc proc /proc 2>/dev/null; \
         mount -t sysfs sysfs /sys 2>/dev/null; {script}"
    );
    let argv = ["/bin/sh".to_string(), "-c".to_string(), script];
    let initrd = dir.join(format!("initramfs-{name}.cpio"));
    let spec = initramfs::Spec {
        user: env.user.as_ref(),
        adds: &adds,
        argv: Some(&argv),
    };
    initramfs::write(&spec, &initrd)?;
    let b = qemu::Boot {
        kernel: &env.kernel,
        initrd: &initrd,
        append,
        timeout: Some(TIMEOUT),
        console: Console::Capture,
        watch: None,
        disks,
        net,
    };
    let result = qemu::boot(&b, &mut |_| {})?;
    let _ = env.write_log(&format!("crash_{name}"), &result);
    Ok(result)
}

/// What a domain's debugfs files and /proc/domains said at the end of a
/// crash boot (the script echoes `INJECTED n` and cats `recovery_ns`).
pub(crate) struct Crashes {
    pub injected: u64,
    pub recoveries: u64,
    last_ns: u64,
    max_ns: u64,
}

impl Crashes {
    pub(crate) fn of(out: &str) -> Crashes {
        Crashes {
            injected: figure(out, "INJECTED").unwrap_or(0),
            recoveries: figure(out, "recoveries").unwrap_or(0),
            last_ns: figure(out, "last_ns").unwrap_or(0),
            max_ns: figure(out, "max_ns").unwrap_or(0),
        }
    }
}

impl std::fmt::Display for Crashes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} crashes injected, {} recoveries, last recovery {} ns, longest {} ns",
            self.injected, self.recoveries, self.last_ns, self.max_ns
        )
    }
}

/// The number after `key ` on a line of the guest's output.
fn figure(out: &str, key: &str) -> Option<u64> {
    out.lines()
        .find_map(|l| l.trim().strip_prefix(key)?.trim().parse().ok())
}

fn workload(env: &BootEnv, dir: &Path, progs: &Path, image: &Path, r: &mut Reporter) -> bool {
    let test = "crash:workload";
    let script = format!(
        "{PROGS}/crashwork run /dev/vda /mnt/c {SECONDS}; echo CRASH-RUN=$?; \
         echo INJECTED $(cat /sys/kernel/debug/domains/virtio-blk/injected); \
         cat /sys/kernel/debug/domains/virtio-blk/recovery_ns; cat /proc/domains"
    );
    let append = ["drivers.crash=virtio-blk:1s".to_string()];
    let res = match boot(
        env,
        dir,
        progs,
        "workload",
        &script,
        &append,
        &[image.to_path_buf()],
        None,
    ) {
        Ok(res) => res,
        Err(e) => {
            r.fail(test, e);
            return false;
        }
    };
    if let Some(p) = boot_problem(&res) {
        r.fail(test, p);
        return false;
    }
    let out = guest_output(&res.lines);
    let all = res.lines.join("\n");
    let crashes = Crashes::of(&out);
    let (injected, recoveries) = (crashes.injected, crashes.recoveries);
    let summary = crashes.to_string();
    eprintln!("xtask: crash:workload: {summary}");
    if !out.contains("CRASH-RUN=0") || !out.contains("CRASHWORK run OK") {
        r.fail(
            test,
            format!(
                "the workload failed ({summary}):\n{}",
                crate::util::tail(&out, 40)
            ),
        );
        return false;
    }
    if injected < MIN_CRASHES || recoveries == 0 {
        r.fail(test, format!("too few crashes: {summary}"));
        return false;
    }
    if all.contains("device failed") {
        r.fail(
            test,
            format!("the device was failed during the workload ({summary})"),
        );
        return false;
    }
    r.pass(test);
    true
}

fn verify(env: &BootEnv, dir: &Path, progs: &Path, image: &Path, r: &mut Reporter) {
    let test = "crash:verify";
    let script = format!("{PROGS}/crashwork verify /dev/vda /mnt/c; echo CRASH-VERIFY=$?");
    match boot(
        env,
        dir,
        progs,
        "verify",
        &script,
        &[],
        &[image.to_path_buf()],
        None,
    ) {
        Err(e) => r.fail(test, e),
        Ok(res) => match boot_problem(&res) {
            Some(p) => r.fail(test, p),
            None => {
                let out = guest_output(&res.lines);
                if out.contains("CRASH-VERIFY=0") && out.contains("CRASHWORK verify OK") {
                    r.pass(test);
                } else {
                    r.fail(test, crate::util::tail(&out, 40));
                }
            }
        },
    }
}

fn fail_cleanly(env: &BootEnv, dir: &Path, progs: &Path, r: &mut Reporter) {
    let test = "crash:fail-cleanly";
    let image = dir.join("fail.img");
    let made = std::fs::File::create(&image)
        .and_then(|f| f.set_len(16 << 20))
        .ctx(|| format!("cannot create {}", image.display()));
    if let Err(e) = made {
        return r.fail(test, e);
    }
    let script = format!(
        "echo 1000 > /sys/kernel/debug/domains/virtio-blk/crash; \
         {PROGS}/crashwork fail /dev/vda; echo CRASH-FAIL=$?; cat /proc/domains"
    );
    let res = match boot(env, dir, progs, "fail", &script, &[], &[image], None) {
        Ok(res) => res,
        Err(e) => return r.fail(test, e),
    };
    if let Some(p) = boot_problem(&res) {
        return r.fail(test, p);
    }
    let out = guest_output(&res.lines);
    let all = res.lines.join("\n");
    if !out.contains("CRASH-FAIL=0") {
        return r.fail(test, crate::util::tail(&out, 40));
    }
    if !all.contains("device failed, requests end with EIO") {
        return r.fail(test, "no kernel log line says the device was failed");
    }
    r.pass(test);
}
