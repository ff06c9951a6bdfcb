//! The `storage` layer: boots Trellis with ext2 disk images made by
//! `mkimage`, runs workloads on them (user/storage), powers off, and checks
//! the images on the host.
//!
//! - `write`: `fswork write` on /dev/vda (4 KiB blocks) and /dev/vdb
//!   (1 KiB blocks): 300 files, a 16 MiB random file and its checksum,
//!   hard links, symlinks, renames, deletes, truncates.
//! - `fsck-after-write`: the host's `e2fsck -fn` finds each image clean.
//! - `host-reads-big`: the host's debugfs reads the 16 MiB file back and
//!   its FNV-1a checksum is the one the guest wrote beside it.
//! - `readback`: a second boot mounts the images read-only and checks every
//!   name, size, link count, symlink target and byte (`fswork verify`).
//! - `ro-mount-unchanged`: that read-only boot left each image byte for byte
//!   as it was; `e2fsck -fn` still finds it clean.
//! - `busybox-mount-loop`: busybox `mount -o loop` of an image file (no
//!   `-t`), the files read, umount, and the loop device cleared itself.
//! - `ext2-workload`: user/tests/ext2_workload.c `write` on an empty
//!   disk, `e2fsck -fn`, then `verify` after a reboot.
//! - `root-disk`: `root=/dev/vda rw` boots an image's /init; what it wrote
//!   is in the image, which is clean.
//! - `virtio-blk-pattern`: a pattern the host wrote with dd reads back in
//!   the guest with several requests in flight, and the guest's writes
//!   land in the image (user/tests/virtio_blk_pattern.c).
//! - `damaged`: 220 mutated images (fixed seeds, 1 and 4 KiB blocks)
//!   mounted through a loop device and walked in one boot (`fsdamage`):
//!   no panic, no hang, every image accounted for.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::args::AddSpec;
use crate::initramfs;
use crate::mkimage;
use crate::qemu::{self, BootResult, Console, Outcome};
use crate::scan::{guest_output, serial_tail};
use crate::test::{BootEnv, Reporter};
use crate::util::{Context, Res, run_quiet, target_dir};

/// Where the guest programs are installed.
const PROGS: &str = "/opt/storage";
/// Images mutated per block size in the damaged-image test.
const DAMAGED_PER_SIZE: u32 = 110;
const BOOT_TIMEOUT: Duration = Duration::from_secs(300);
const DAMAGED_TIMEOUT: Duration = Duration::from_secs(900);
/// The damaged-image boot prints a line per image; silence this long is a
/// hang.
const DAMAGED_QUIET: Duration = Duration::from_secs(180);

/// The two workload images: name, block size.
const WORK: &[(&str, u32, &str, &str)] = &[
    ("4k", 4096, "/dev/vda", "/mnt/a"),
    ("1k", 1024, "/dev/vdb", "/mnt/b"),
];

struct Ctx<'a> {
    env: &'a BootEnv,
    dir: PathBuf,
    progs: PathBuf,
}

pub fn run(env: Option<&BootEnv>, r: &mut Reporter) {
    let Some(env) = env else {
        r.skip("storage", "the kernel did not build");
        return;
    };
    if env.user.is_none() {
        r.skip("storage", env.no_user);
        return;
    }
    for tool in ["mke2fs", "e2fsck", "debugfs"] {
        if let Err(e) = mkimage::e2fs_tool(tool) {
            r.fail("storage:e2fsprogs", e);
            return;
        }
    }
    eprintln!("xtask: storage layer");
    let dir = target_dir(&env.root).join("storage");
    let progs = match build_programs(&env.root) {
        Ok(p) => p,
        Err(e) => {
            r.fail("storage:build", e);
            return;
        }
    };
    let c = Ctx { env, dir, progs };
    match make_images(&c) {
        Ok(()) => r.pass("storage:mkimage"),
        Err(e) => {
            r.fail("storage:mkimage", e);
            return;
        }
    }
    if workload(&c, r) {
        readback(&c, r);
    }
    loop_mount(&c, r);
    pattern(&c, r);
    ext2_workload(&c, r);
    root_disk(&c, r);
    damaged(&c, r);
}

/// `root=/dev/vda rw`: an ext2 image holding busybox and an /init script
/// is the root file system; the script's write is in the image after
/// poweroff, which `e2fsck -fn` finds clean.
fn root_disk(c: &Ctx, r: &mut Reporter) {
    let test = "storage:root-disk";
    let tree = c.dir.join("root-tree");
    let image = img(c, "root");
    let init = "#!/bin/busybox sh\n/bin/busybox echo ROOT-DISK-UP\n/bin/busybox grep ' / ' /proc/mounts\n\
                /bin/busybox echo from-the-guest > /written\n";
    let made = (|| -> Res<()> {
        let _ = std::fs::remove_dir_all(&tree);
        for d in ["bin", "dev", "proc", "sys", "tmp"] {
            std::fs::create_dir_all(tree.join(d)).ctx(|| format!("cannot create {d}"))?;
        }
        std::fs::copy(initramfs::BUSYBOX, tree.join("bin/busybox")).ctx(|| "cannot copy busybox".into())?;
        std::fs::write(tree.join("init"), init).ctx(|| "cannot write /init".into())?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tree.join("init"), std::fs::Permissions::from_mode(0o755))
            .ctx(|| "chmod /init".into())?;
        mkimage::make(&tree, &image, Some(16), 1024)
    })();
    if let Err(e) = made {
        return r.fail(test, e);
    }
    let initrd = c.dir.join("initramfs-root.cpio");
    let spec = initramfs::Spec { user: None, adds: &[], argv: None };
    let append = ["root=/dev/vda rw init=/init".to_string()];
    let res = initramfs::write(&spec, &initrd).and_then(|_| {
        let b = qemu::Boot {
            kernel: &c.env.kernel,
            initrd: &initrd,
            append: &append,
            timeout: Some(BOOT_TIMEOUT),
            console: Console::Capture,
            watch: None,
            disks: std::slice::from_ref(&image),
            net: None,
        };
        qemu::boot(&b, &mut |_| {})
    });
    let res = match res {
        Ok(res) => res,
        Err(e) => return r.fail(test, e),
    };
    let _ = c.env.write_log("storage_root", &res);
    if let Some(p) = boot_problem(&res) {
        return r.fail(test, p);
    }
    let out = guest_output(&res.lines);
    if !out.contains("ROOT-DISK-UP") || !out.contains("/dev/root / ext2 rw") {
        return r.fail(test, format!("/init did not run from the disk, read-write:\n{out}"));
    }
    if let Err(e) = mkimage::fsck_clean(&image) {
        return r.fail(test, e);
    }
    let debugfs = match mkimage::e2fs_tool("debugfs") {
        Ok(d) => d,
        Err(e) => return r.fail(test, e),
    };
    match run_quiet(Command::new(&debugfs).args(["-R", "cat /written"]).arg(&image)) {
        Ok(s) if s.contains("from-the-guest") => r.pass(test),
        Ok(s) => r.fail(test, format!("/written in the image: {s}")),
        Err(e) => r.fail(test, e),
    }
}

/// user/tests/ext2_workload.c on a fresh, empty ext2 disk: `write` (mmap,
/// attributes, remounts ro/nodev/noexec besides the files), the host's
/// `e2fsck -fn`, then `verify` in a second boot.
fn ext2_workload(c: &Ctx, r: &mut Reporter) {
    let test = "storage:ext2-workload";
    let empty = c.dir.join("empty-tree");
    let image = img(c, "workload");
    let made = std::fs::create_dir_all(&empty)
        .ctx(|| format!("cannot create {}", empty.display()))
        .and_then(|()| mkimage::make(&empty, &image, Some(96), 4096));
    if let Err(e) = made {
        return r.fail(test, e);
    }
    for (mode, name) in [("write", "workload-write"), ("verify", "workload-verify")] {
        let script = format!("/tests/ext2_workload {mode} /dev/vda; echo EXT2-WORKLOAD={mode}:$?");
        let res = match boot(c, name, &script, &[], std::slice::from_ref(&image), BOOT_TIMEOUT, None) {
            Ok(res) => res,
            Err(e) => return r.fail(test, e),
        };
        if let Some(p) = boot_problem(&res) {
            return r.fail(test, format!("{mode}: {p}"));
        }
        let out = guest_output(&res.lines);
        if !out.contains(&format!("EXT2-WORKLOAD={mode}:0")) {
            return r.fail(test, format!("{mode} failed:\n{out}"));
        }
        if mode == "write"
            && let Err(e) = mkimage::fsck_clean(&image)
        {
            return r.fail(test, format!("after write: {e}"));
        }
    }
    r.pass(test);
}

/// virtio-blk end to end (user/tests/virtio_blk_pattern.c): a pattern
/// written into an image on the host with dd reads back in the guest,
/// with several requests in flight, and the guest's writes land in the
/// image (checked on the host by scripts/virtio_blk_pattern.py).
fn pattern(c: &Ctx, r: &mut Reporter) {
    let test = "storage:virtio-blk-pattern";
    let image = img(c, "pattern");
    let script = c.env.root.join("scripts/virtio_blk_pattern.py");
    if let Err(e) = run_quiet(Command::new("python3").arg(&script).arg("make").arg(&image)) {
        return r.fail(test, e);
    }
    let res = match boot(
        c,
        "pattern",
        "/tests/virtio_blk_pattern; echo PATTERN-STATUS=$?",
        &[],
        std::slice::from_ref(&image),
        BOOT_TIMEOUT,
        None,
    ) {
        Ok(res) => res,
        Err(e) => return r.fail(test, e),
    };
    if let Some(p) = boot_problem(&res) {
        return r.fail(test, p);
    }
    let out = guest_output(&res.lines);
    if !out.contains("PATTERN-STATUS=0") {
        return r.fail(test, format!("the guest test failed:\n{out}"));
    }
    match run_quiet(Command::new("python3").arg(&script).arg("check").arg(&image)) {
        Ok(_) => r.pass(test),
        Err(e) => r.fail(test, format!("the image after the guest's writes: {e}")),
    }
}

/// `make -C user/storage BUILD=target/user/storage`.
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

fn img(c: &Ctx, name: &str) -> PathBuf {
    c.dir.join(format!("{name}.img"))
}

/// xorshift64 for the seed trees: the same bytes on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// The tree the damaged images start from: directories three deep, files
/// of 0 bytes to 300 KiB (direct, indirect and, with 1 KiB blocks, double
/// indirect blocks), 40 small files, fast and slow symlinks, a hard link.
fn damage_seed(dir: &Path) -> Res<()> {
    let _ = std::fs::remove_dir_all(dir);
    let mut rng = Rng(0x5eed_da3a_6e00_0001);
    let mk = |p: &Path| std::fs::create_dir_all(p).ctx(|| format!("cannot create {}", p.display()));
    mk(&dir.join("a/b/c"))?;
    mk(&dir.join("d"))?;
    let write = |p: PathBuf, data: Vec<u8>| {
        std::fs::write(&p, data).ctx(|| format!("cannot write {}", p.display()))
    };
    write(dir.join("empty"), Vec::new())?;
    write(dir.join("a/small"), b"hi\n".to_vec())?;
    write(dir.join("a/b/mid"), rng.bytes(70_000))?;
    write(dir.join("a/b/c/big"), rng.bytes(300_000))?;
    for i in 0..40 {
        write(dir.join(format!("d/f{i}")), rng.bytes(i * 37))?;
    }
    let link = |t: &str, p: PathBuf| {
        std::os::unix::fs::symlink(t, &p).ctx(|| format!("cannot link {}", p.display()))
    };
    link("a/small", dir.join("fastlink"))?;
    link(&"x".repeat(120), dir.join("slowlink"))?;
    std::fs::hard_link(dir.join("a/small"), dir.join("d/hard"))
        .ctx(|| "cannot make a hard link".into())?;
    Ok(())
}

fn make_images(c: &Ctx) -> Res<()> {
    std::fs::create_dir_all(&c.dir).ctx(|| format!("cannot create {}", c.dir.display()))?;
    let seed = c.dir.join("seed-work");
    let _ = std::fs::remove_dir_all(&seed);
    std::fs::create_dir_all(&seed).ctx(|| format!("cannot create {}", seed.display()))?;
    std::fs::write(seed.join("README"), "made by cargo xtask mkimage\n")
        .ctx(|| "cannot write README".into())?;
    for (name, bs, _, _) in WORK {
        mkimage::make(&seed, &img(c, &format!("work{name}")), Some(64), *bs)?;
    }
    let dseed = c.dir.join("seed-damage");
    damage_seed(&dseed)?;
    mkimage::make(&dseed, &img(c, "dmg1k"), Some(2), 1024)?;
    mkimage::make(&dseed, &img(c, "dmg4k"), Some(4), 4096)?;
    for name in ["dmg1k", "dmg4k"] {
        mkimage::fsck_clean(&img(c, name))
            .map_err(|e| format!("{name}: the base image is not clean: {e}"))?;
    }
    Ok(())
}

/// One boot of `script` (run by /bin/sh -c) with the storage programs and
/// `adds` in the initramfs and `disks` attached.
fn boot(
    c: &Ctx,
    name: &str,
    script: &str,
    adds: &[AddSpec],
    disks: &[PathBuf],
    timeout: Duration,
    watch: Option<qemu::Watch>,
) -> Res<BootResult> {
    let mut all = vec![AddSpec {
        host: c.progs.clone(),
        guest: PROGS.into(),
    }];
    all.extend(adds.iter().cloned());
    let argv = ["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
    let initrd = c.dir.join(format!("initramfs-{name}.cpio"));
    let spec = initramfs::Spec {
        user: c.env.user.as_ref(),
        adds: &all,
        argv: Some(&argv),
    };
    initramfs::write(&spec, &initrd)?;
    let b = qemu::Boot {
        kernel: &c.env.kernel,
        initrd: &initrd,
        append: &[],
        timeout: Some(timeout),
        console: Console::Capture,
        watch,
        disks,
        net: None,
    };
    let result = qemu::boot(&b, &mut |_| {})?;
    let _ = c.env.write_log(&format!("storage_{name}"), &result);
    Ok(result)
}

/// Why a boot did not end in a clean poweroff, with the serial tail
/// (the crash layer uses it too).
pub(crate) fn boot_problem(res: &BootResult) -> Option<String> {
    match &res.outcome {
        Outcome::Poweroff(_) => None,
        other => Some(format!(
            "{}\n{}",
            other.problem().unwrap_or_default(),
            serial_tail(&res.lines, 30)
        )),
    }
}

/// The `FSWORK <mode> ...` verdict of `label` in the guest output.
fn fswork_verdict(out: &str, mode: &str, label: &str) -> Result<(), String> {
    let marker = format!("STORAGE-RUN {label}");
    let Some(start) = out.find(&marker) else {
        return Err(format!("{label}: never ran"));
    };
    let section = &out[start..];
    let end = section[marker.len()..]
        .find("STORAGE-RUN ")
        .map_or(section.len(), |i| i + marker.len());
    let section = &section[..end];
    if section
        .lines()
        .any(|l| l.starts_with(&format!("FSWORK {mode} OK")))
    {
        Ok(())
    } else {
        Err(format!("{label}: no `FSWORK {mode} OK` line\n{section}"))
    }
}

fn fswork_script(mode: &str) -> String {
    let mut s = String::new();
    for (name, _, dev, mnt) in WORK {
        s.push_str(&format!(
            "echo STORAGE-RUN {name}; {PROGS}/fswork {mode} {dev} {mnt}; "
        ));
    }
    s.push_str("echo STORAGE-END");
    s
}

fn disks(c: &Ctx) -> Vec<PathBuf> {
    WORK.iter()
        .map(|(name, ..)| img(c, &format!("work{name}")))
        .collect()
}

/// Boot 1 and the host's checks. False when nothing is left to read back.
fn workload(c: &Ctx, r: &mut Reporter) -> bool {
    let res = match boot(
        c,
        "write",
        &fswork_script("write"),
        &[],
        &disks(c),
        BOOT_TIMEOUT,
        None,
    ) {
        Ok(res) => res,
        Err(e) => {
            r.fail("storage:write", e);
            return false;
        }
    };
    let out = guest_output(&res.lines);
    let problem = boot_problem(&res);
    let mut any = false;
    for (name, ..) in WORK {
        let test = format!("storage:write:{name}");
        match (&problem, fswork_verdict(&out, "write", name)) {
            (None, Ok(())) => {
                any = true;
                r.pass(&test)
            }
            (Some(p), _) => r.fail(&test, p.clone()),
            (None, Err(e)) => r.fail(&test, e),
        }
    }
    for (name, ..) in WORK {
        let image = img(c, &format!("work{name}"));
        match mkimage::fsck_clean(&image) {
            Ok(_) => r.pass(&format!("storage:fsck-after-write:{name}")),
            Err(e) => r.fail(&format!("storage:fsck-after-write:{name}"), e),
        }
        match host_checksum(c, &image) {
            Ok(()) => r.pass(&format!("storage:host-reads-big:{name}")),
            Err(e) => r.fail(&format!("storage:host-reads-big:{name}"), e),
        }
    }
    any
}

/// FNV-1a 64, as user/storage/fswork.c computes it.
fn fnv1a(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// debugfs dumps /w/big.bin; its checksum must be the one in /w/big.sum.
fn host_checksum(c: &Ctx, image: &Path) -> Res<()> {
    let debugfs = mkimage::e2fs_tool("debugfs")?;
    let out = c.dir.join("big.bin");
    let _ = std::fs::remove_file(&out);
    run_quiet(
        Command::new(&debugfs)
            .arg("-R")
            .arg(format!("dump /w/big.bin {}", out.display()))
            .arg(image),
    )?;
    let data = std::fs::read(&out).ctx(|| "debugfs wrote no /w/big.bin".into())?;
    let _ = std::fs::remove_file(&out);
    let sum = run_quiet(
        Command::new(&debugfs)
            .args(["-R", "cat /w/big.sum"])
            .arg(image),
    )?;
    let want = sum
        .lines()
        .map(str::trim)
        .find(|l| l.len() == 16 && l.chars().all(|c| c.is_ascii_hexdigit()));
    let got = format!("{:016x}", fnv1a(&data));
    match want {
        _ if data.len() != 16 << 20 => Err(format!("big.bin has {} bytes, not 16 MiB", data.len())),
        Some(w) if w == got => Ok(()),
        Some(w) => Err(format!("big.sum says {w}, the host computes {got}")),
        None => Err(format!("no checksum in big.sum: {sum}")),
    }
}

/// Boot 2: read everything back read-only; the images must not change.
fn readback(c: &Ctx, r: &mut Reporter) {
    let before: Vec<Option<Vec<u8>>> = disks(c).iter().map(|p| std::fs::read(p).ok()).collect();
    let res = match boot(
        c,
        "verify",
        &fswork_script("verify"),
        &[],
        &disks(c),
        BOOT_TIMEOUT,
        None,
    ) {
        Ok(res) => res,
        Err(e) => {
            r.fail("storage:readback", e);
            return;
        }
    };
    let out = guest_output(&res.lines);
    let problem = boot_problem(&res);
    for (i, (name, ..)) in WORK.iter().enumerate() {
        let test = format!("storage:readback:{name}");
        match (&problem, fswork_verdict(&out, "verify", name)) {
            (None, Ok(())) => r.pass(&test),
            (Some(p), _) => r.fail(&test, p.clone()),
            (None, Err(e)) => r.fail(&test, e),
        }
        let image = img(c, &format!("work{name}"));
        let test = format!("storage:ro-mount-unchanged:{name}");
        let after = std::fs::read(&image).ok();
        match (&before[i], &after) {
            (Some(b), Some(a)) if a == b => match mkimage::fsck_clean(&image) {
                Ok(_) => r.pass(&test),
                Err(e) => r.fail(&test, e),
            },
            (Some(b), Some(a)) => {
                let first = b
                    .iter()
                    .zip(a.iter())
                    .position(|(x, y)| x != y)
                    .unwrap_or(b.len().min(a.len()));
                r.fail(
                    &test,
                    format!("the image changed under a read-only mount (first at byte {first})"),
                );
            }
            _ => r.fail(&test, "cannot read the image"),
        }
    }
}

/// busybox `mount -o loop` of an image file without `-t`.
fn loop_mount(c: &Ctx, r: &mut Reporter) {
    let test = "storage:busybox-mount-loop";
    let adds = [AddSpec {
        host: img(c, "dmg4k"),
        guest: "/opt/clean.img".into(),
    }];
    let script = "mkdir -p /mnt/l && mount -o loop /opt/clean.img /mnt/l && echo MOUNTED && \
                  losetup -a && cat /mnt/l/a/small /mnt/l/d/hard && readlink /mnt/l/fastlink && \
                  wc -c /mnt/l/a/b/c/big && umount /mnt/l && echo UNMOUNTED; \
                  losetup -a; echo LOOPS-LISTED";
    let res = match boot(c, "loop", script, &adds, &[], BOOT_TIMEOUT, None) {
        Ok(res) => res,
        Err(e) => return r.fail(test, e),
    };
    if let Some(p) = boot_problem(&res) {
        return r.fail(test, p);
    }
    let out = guest_output(&res.lines);
    let want = "MOUNTED\n/dev/loop0: 0 /opt/clean.img\nhi\nhi\na/small\n300000 /mnt/l/a/b/c/big\nUNMOUNTED\nLOOPS-LISTED\n";
    if out.ends_with(want) || out.contains(want) {
        r.pass(test);
    } else {
        r.fail(test, format!("unexpected output; wanted\n{want}got\n{out}"));
    }
}

/// The damaged-image test: one boot, `fsdamage` over both base images.
fn damaged(c: &Ctx, r: &mut Reporter) {
    let test = "storage:damaged";
    let adds = [
        AddSpec {
            host: img(c, "dmg1k"),
            guest: "/opt/dmg1k.img".into(),
        },
        AddSpec {
            host: img(c, "dmg4k"),
            guest: "/opt/dmg4k.img".into(),
        },
    ];
    let n = DAMAGED_PER_SIZE;
    let script = format!(
        "{PROGS}/fsdamage /opt/dmg1k.img {n} 1 /opt/dmg4k.img {n} 100001; echo FSDAMAGE-EXIT $?"
    );
    let progress = |l: &str| l.starts_with("DMG ") || l.starts_with("FSDAMAGE");
    let watch = qemu::Watch {
        is_progress: &progress,
        quiet: DAMAGED_QUIET,
    };
    let res = match boot(
        c,
        "damaged",
        &script,
        &adds,
        &[],
        DAMAGED_TIMEOUT,
        Some(watch),
    ) {
        Ok(res) => res,
        Err(e) => return r.fail(test, e),
    };
    let out = guest_output(&res.lines);
    let images = out.lines().filter(|l| l.starts_with("DMG ")).count();
    let done = out
        .lines()
        .find(|l| l.starts_with("FSDAMAGE DONE"))
        .map(str::to_string);
    if let Some(p) = boot_problem(&res) {
        return r.fail(test, format!("after {images} images: {p}"));
    }
    match done {
        Some(line) if images == 2 * n as usize && out.contains("FSDAMAGE-EXIT 0") => {
            eprintln!("xtask: storage: {line}");
            r.pass(test)
        }
        Some(line) => r.fail(test, format!("{images} images of {}: {line}", 2 * n)),
        None => r.fail(
            test,
            format!(
                "no summary after {images} images\n{}",
                serial_tail(&res.lines, 20)
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_the_guest() {
        // FNV-1a 64 of "a" (the published test vector).
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn fswork_sections() {
        let out = "STORAGE-RUN 4k\nFSWORK write OK 3 checks\nSTORAGE-RUN 1k\nFSWORK write FAIL x\nSTORAGE-END\n";
        assert!(fswork_verdict(out, "write", "4k").is_ok());
        assert!(fswork_verdict(out, "write", "1k").is_err());
        assert!(fswork_verdict(out, "verify", "4k").is_err());
        assert!(
            fswork_verdict("", "write", "4k")
                .unwrap_err()
                .contains("never ran")
        );
    }
}
