//! The `debian` layer: Debian's own programs, unmodified, on Trellis, with
//! their output compared to the same commands on the host's Linux.
//!
//! 1. The default tree of `cargo xtask rootfs` (bash, coreutils, python3,
//!    perl, sqlite3...) is built once into `target/debian/tree` and kept
//!    until the package list changes (`tree.stamp`). Building it needs the
//!    Debian archive (`apt-get download`); without it the layer is skipped.
//! 2. A copy of the tree, `target/debian/stage`, gets the workload scripts
//!    of `user/debian/` in `/opt/debian-tests` and, in
//!    `/opt/debian-tests/hostroot`, the host's own `/usr/bin/bash` and
//!    `/usr/bin/python3.11` with the libraries `ldd` names and Python's
//!    standard library.
//! 3. That copy becomes an ext2 image (`target/debian/root.img`) booted as
//!    `root=/dev/vda rw`; one boot runs `driver.sh`, which runs every
//!    workload and leaves each one's output in `/opt/debian-tests/out`,
//!    read back with debugfs after the poweroff.
//! 4. The host runs the same driver in a chroot of the same copy, inside
//!    its own mount and PID namespaces (`unshare`), with /proc and a small
//!    /dev of its own: the mounts vanish with the namespace, whatever
//!    happens, and the host's devices are not reachable from the chroot.
//! 5. One `debian:<workload>` line per workload: PASS when the outputs
//!    (with the exit status) are byte for byte the same.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::initramfs;
use crate::mkimage;
use crate::qemu::{self, Console, Outcome};
use crate::rootfs;
use crate::scan::serial_tail;
use crate::test::{BootEnv, Reporter};
use crate::util::{self, Context, Res, run_captured, run_quiet, target_dir};

/// Bumped when the way the cached tree is made changes.
const TREE_FORMAT: u32 = 1;
/// Where the scripts and outputs live inside the tree.
const GUEST_DIR: &str = "opt/debian-tests";
/// The whole Trellis run; each workload has 300 s of its own (driver.sh).
const BOOT_TIMEOUT: Duration = Duration::from_secs(1800);
/// Silence this long between two finished workloads is a hang.
const QUIET: Duration = Duration::from_secs(420);

/// The workloads driver.sh runs, in its order, and what each covers.
pub const WORKLOADS: &[(&str, &str)] = &[
    (
        "bash",
        "arrays, associative arrays, here-docs, process substitution, traps, job control, coproc",
    ),
    (
        "coreutils",
        "sort|uniq -c|sort -n, find -exec, xargs -P, tar|gzip round trips, grep, sed, gawk",
    ),
    (
        "perl",
        "hashes, regexes, pack, files, fork and pipes, alarm, POSIX, Digest::MD5",
    ),
    (
        "sqlite3",
        "the sqlite3 shell on a database file: WAL, transactions, indexes, VACUUM",
    ),
    ("python-json", "json round trips and errors"),
    ("python-sqlite", "the sqlite3 module on a file, backup"),
    (
        "python-threading",
        "locks, conditions, queues, barriers, pools, timers",
    ),
    (
        "python-multiprocessing",
        "fork pool, queues, pipes, shared values",
    ),
    ("python-subprocess", "run, pipelines, timeouts, pass_fds"),
    ("python-hashlib", "hashlib, hmac, zlib, struct, decimal"),
    (
        "python-asyncio",
        "selectors and the asyncio loop on pipes and subprocesses",
    ),
    (
        "python-import",
        "python3 -c 'import sqlite3, threading, subprocess; print(42)'",
    ),
    (
        "host-bash",
        "the host's own /usr/bin/bash and its libraries, in a chroot",
    ),
    (
        "host-python",
        "the host's own /usr/bin/python3.11 and its libraries, in a chroot",
    ),
];

/// Workloads that do not work on Trellis yet: name, what Trellis's output
/// then holds (every string), and why. Such a workload is skipped only while its output
/// shows that reason; any other difference fails, and once the gap is
/// closed it passes.
const KNOWN_GAPS: &[(&str, &[&str], &str)] = &[
    (
        "python-multiprocessing",
        &["_socket.socketpair(", "OSError: [Errno "],
        "multiprocessing.Pipe needs socketpair(AF_UNIX), which fails here (ENOSYS, or EAFNOSUPPORT from the socket-layer skeleton; the `unix` branch adds it)",
    ),
    (
        "python-asyncio",
        &["_socket.socketpair(", "OSError: [Errno "],
        "the asyncio event loop's self-pipe is socketpair(AF_UNIX), which fails here (ENOSYS, or EAFNOSUPPORT from the socket-layer skeleton; the `unix` branch adds it)",
    ),
];

/// The host programs copied into `hostroot` for the host-* workloads.
const HOST_PROGRAMS: &[&str] = &["/usr/bin/bash", "/usr/bin/python3.11"];
const HOST_PYTHON_LIB: &str = "/usr/lib/python3.11";

pub fn run(env: Option<&BootEnv>, r: &mut Reporter) {
    let Some(env) = env else {
        r.skip("debian", "the kernel did not build");
        return;
    };
    if let Err(why) = prerequisites() {
        r.skip("debian", why);
        return;
    }
    eprintln!("xtask: debian layer");
    let dir = target_dir(&env.root).join("debian");
    let tree = match cached_tree(&env.root, &dir) {
        Ok(t) => t,
        Err(TreeError::Archive(e)) => {
            r.skip(
                "debian",
                format!("the Debian archive is not reachable (run scripts/setup.sh): {e}"),
            );
            return;
        }
        Err(TreeError::Other(e)) => {
            r.fail("debian:tree", e);
            return;
        }
    };
    let stage = dir.join("stage");
    let host_reason = match stage_tree(&env.root, &tree, &stage) {
        Ok(h) => h,
        Err(e) => {
            r.fail("debian:stage", e);
            return;
        }
    };
    let image = dir.join("root.img");
    if let Err(e) = make_image(&stage, &image) {
        r.fail("debian:image", e);
        return;
    }
    // The host runs in the staged copy after the image was made from it.
    let linux = run_on_host(&stage, &dir.join("linux.log"));
    let trellis = run_on_trellis(env, &dir, &image);
    match &trellis {
        Ok(_) => match mkimage::fsck_clean(&image) {
            Ok(_) => r.pass("debian:fsck"),
            Err(e) => r.fail("debian:fsck", e),
        },
        Err(e) => r.fail("debian:boot", e.clone()),
    }
    for (name, _) in WORKLOADS {
        let test = format!("debian:{name}");
        if name.starts_with("host-")
            && let Some(why) = &host_reason
        {
            r.skip(&test, why.clone());
            continue;
        }
        let (linux, trellis) = match (&linux, &trellis) {
            (Err(e), _) => {
                r.fail(&test, format!("the run on Linux failed: {e}"));
                continue;
            }
            (_, Err(_)) => {
                r.fail(&test, "the Trellis boot failed (see debian:boot)");
                continue;
            }
            (Ok(l), Ok(t)) => (l.get(*name), t.get(*name)),
        };
        let verdict = compare(name, linux, trellis);
        let gap = KNOWN_GAPS.iter().find(|(n, needles, _)| {
            n == name && trellis.is_some_and(|t| needles.iter().all(|s| t.contains(s)))
        });
        match (verdict, gap) {
            (Ok(()), _) => r.pass(&test),
            (Err(_), Some((_, _, why))) => r.skip(&test, *why),
            (Err(e), None) => r.fail(&test, e),
        }
    }
}

/// What the layer needs on the host; the reason to skip otherwise.
fn prerequisites() -> Result<(), String> {
    for tool in [
        "apt-get",
        "apt-cache",
        "dpkg-deb",
        "unshare",
        "chroot",
        "mknod",
        "ldd",
    ] {
        if !util::on_path(tool) && !Path::new("/usr/sbin").join(tool).is_file() {
            return Err(format!("`{tool}` is not installed"));
        }
    }
    for tool in ["mke2fs", "debugfs", "e2fsck"] {
        mkimage::e2fs_tool(tool)?;
    }
    let uid = run_quiet(Command::new("id").arg("-u"))?;
    if uid.trim() != "0" {
        return Err("the chroot on the host needs root".into());
    }
    Ok(())
}

enum TreeError {
    /// The packages could not be fetched.
    Archive(String),
    Other(String),
}

/// The default Debian tree, rebuilt only when its package list changes.
fn cached_tree(root: &Path, dir: &Path) -> Result<PathBuf, TreeError> {
    let tree = dir.join("tree");
    let stamp_path = dir.join("tree.stamp");
    let stamp = format!(
        "format {TREE_FORMAT}\n{}\n",
        rootfs::DEFAULT_PACKAGES.join(" ")
    );
    if tree.join("init").is_file() && std::fs::read_to_string(&stamp_path).is_ok_and(|s| s == stamp)
    {
        return Ok(tree);
    }
    let pkgs: Vec<String> = rootfs::DEFAULT_PACKAGES
        .iter()
        .map(|s| s.to_string())
        .collect();
    eprintln!("xtask: debian: building the tree of {}", pkgs.join(" "));
    let debs = rootfs::fetch(root, &pkgs).map_err(TreeError::Archive)?;
    let _ = std::fs::remove_file(&stamp_path);
    rootfs::unpack(&tree, &debs).map_err(TreeError::Other)?;
    std::fs::write(&stamp_path, stamp)
        .map_err(|e| TreeError::Other(format!("cannot write the stamp: {e}")))?;
    Ok(tree)
}

/// `stage` becomes a copy of `tree` with the workloads and the host's
/// programs. Returns why the host-* workloads cannot run, if they cannot.
fn stage_tree(root: &Path, tree: &Path, stage: &Path) -> Res<Option<String>> {
    if stage.exists() {
        std::fs::remove_dir_all(stage).ctx(|| format!("cannot remove {}", stage.display()))?;
    }
    run_quiet(Command::new("cp").arg("-a").arg(tree).arg(stage))?;
    let tests = stage.join(GUEST_DIR);
    std::fs::create_dir_all(&tests).ctx(|| format!("cannot create {}", tests.display()))?;
    let src = root.join("user/debian");
    for entry in std::fs::read_dir(&src).ctx(|| format!("cannot read {}", src.display()))? {
        let path = entry.ctx(|| "read_dir".into())?.path();
        if path.is_file() {
            let dst = tests.join(path.file_name().unwrap_or_default());
            std::fs::copy(&path, &dst).ctx(|| format!("cannot copy {}", path.display()))?;
        }
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        tests.join("driver.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .ctx(|| "chmod driver.sh".into())?;
    match host_root(&tests.join("hostroot")) {
        Ok(()) => Ok(None),
        Err(e) => {
            let _ = std::fs::remove_dir_all(tests.join("hostroot"));
            Ok(Some(e))
        }
    }
}

/// The libraries `ldd` lists for `bin` (and its interpreter), as paths.
pub fn ldd(bin: &Path) -> Res<Vec<PathBuf>> {
    let out = run_quiet(Command::new("ldd").arg(bin))?;
    Ok(parse_ldd(&out))
}

fn parse_ldd(out: &str) -> Vec<PathBuf> {
    out.lines()
        .filter_map(|l| {
            let l = l.trim();
            let path = match l.split_once("=>") {
                Some((_, rest)) => rest.trim(),
                None => l,
            };
            let path = path.split(" (").next().unwrap_or("").trim();
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

/// Copies `src` (a host file) to the same path under `root`, following
/// symbolic links for the content and keeping the link names too.
fn copy_host_file(root: &Path, src: &Path) -> Res<()> {
    let rel = src.strip_prefix("/").unwrap_or(src);
    let dst = root.join(rel);
    if dst.exists() {
        return Ok(());
    }
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent).ctx(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::copy(src, &dst).ctx(|| format!("cannot copy {}", src.display()))?;
    Ok(())
}

/// A root holding the host's own bash and python3.11 with their ldd
/// closures (and those of Python's extension modules), the standard
/// library, and the directories a chroot needs.
fn host_root(hr: &Path) -> Res<()> {
    for p in HOST_PROGRAMS {
        if !Path::new(p).is_file() {
            return Err(format!("the host has no {p}"));
        }
    }
    if !Path::new(HOST_PYTHON_LIB).is_dir() {
        return Err(format!("the host has no {HOST_PYTHON_LIB}"));
    }
    for d in ["dev", "proc", "tmp", "usr/lib", "etc"] {
        std::fs::create_dir_all(hr.join(d)).ctx(|| format!("cannot create {d}"))?;
    }
    // The Debian layout: /lib and /lib64 are links into /usr.
    for l in ["lib", "lib64", "bin", "sbin"] {
        let _ = std::os::unix::fs::symlink(format!("usr/{l}"), hr.join(l));
    }
    std::fs::create_dir_all(hr.join("usr/lib64")).ctx(|| "mkdir usr/lib64".into())?;
    std::fs::create_dir_all(hr.join("usr/bin")).ctx(|| "mkdir usr/bin".into())?;
    let mut objects: Vec<PathBuf> = HOST_PROGRAMS.iter().map(PathBuf::from).collect();
    let lib = hr.join(HOST_PYTHON_LIB.trim_start_matches('/'));
    run_quiet(
        Command::new("cp")
            .args(["-a", "--no-preserve=ownership"])
            .arg(HOST_PYTHON_LIB)
            .arg(lib.parent().unwrap_or(hr)),
    )?;
    for skip in ["test", "site-packages", "dist-packages"] {
        let _ = std::fs::remove_dir_all(lib.join(skip));
    }
    let dynload = Path::new(HOST_PYTHON_LIB).join("lib-dynload");
    if let Ok(rd) = std::fs::read_dir(&dynload) {
        objects.extend(
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "so")),
        );
    }
    let mut libs = Vec::new();
    for o in &objects {
        libs.extend(ldd(o)?);
    }
    libs.sort();
    libs.dedup();
    for p in HOST_PROGRAMS.iter().map(PathBuf::from).chain(libs) {
        // The loader's path is /lib64/...: under usrmerge it lands in /usr.
        let p = match p.strip_prefix("/lib64").or_else(|_| p.strip_prefix("/lib")) {
            Ok(rest) if p.starts_with("/lib64") => Path::new("/usr/lib64").join(rest),
            Ok(rest) => Path::new("/usr/lib").join(rest),
            Err(_) => p.clone(),
        };
        let real = std::fs::canonicalize(&p).unwrap_or(p.clone());
        let bytes = std::fs::read(&real).ctx(|| format!("cannot read {}", real.display()))?;
        let dst = hr.join(p.strip_prefix("/").unwrap_or(&p));
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent)
                .ctx(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&dst, bytes).ctx(|| format!("cannot write {}", dst.display()))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o755))
            .ctx(|| "chmod".into())?;
    }
    copy_host_file(hr, Path::new("/etc/ld.so.cache")).ok();
    std::fs::write(
        hr.join("etc/passwd"),
        "root:x:0:0:root:/root:/usr/bin/bash\n",
    )
    .ctx(|| "passwd".into())?;
    Ok(())
}

/// `target/debian/root.img` from the stage, with `/.trellis/argv` naming
/// the driver.
fn make_image(stage: &Path, image: &Path) -> Res<()> {
    let argv = ["/init".to_string(), format!("/{GUEST_DIR}/driver.sh")];
    let argv_dir = stage.join(".trellis");
    std::fs::create_dir_all(&argv_dir).ctx(|| format!("cannot create {}", argv_dir.display()))?;
    std::fs::write(argv_dir.join("argv"), initramfs::argv_blob(&argv))
        .ctx(|| "cannot write /.trellis/argv".into())?;
    let made = mkimage::make(stage, image, None, 4096);
    let _ = std::fs::remove_dir_all(&argv_dir);
    made
}

/// The shell that sets up the chroot on the host: run by `unshare` in new
/// mount and PID namespaces, so every mount goes away with it.
const HOST_SETUP: &str = r#"set -e
R=$1
mount --make-rprivate /
mount -t proc proc "$R/proc"
mount -t tmpfs -o mode=755,size=16m trellis-dev "$R/dev"
for n in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do
    set -- $n
    mknod -m 666 "$R/dev/$1" c "$2" "$3"
done
mkdir -m 1777 "$R/dev/shm" "$R/dev/pts"
mount -t tmpfs -o mode=1777 trellis-shm "$R/dev/shm"
ln -s /proc/self/fd "$R/dev/fd"
ln -s /proc/self/fd/0 "$R/dev/stdin"
ln -s /proc/self/fd/1 "$R/dev/stdout"
ln -s /proc/self/fd/2 "$R/dev/stderr"
exec chroot "$R" /usr/bin/env -i /init /opt/debian-tests/driver.sh
"#;

/// Runs the driver in a chroot of `stage` on the host; the outputs.
fn run_on_host(stage: &Path, log: &Path) -> Res<BTreeMap<String, String>> {
    let out_dir = stage.join(GUEST_DIR).join("out");
    let _ = std::fs::remove_dir_all(&out_dir);
    let mut cmd = Command::new("timeout");
    cmd.args([
        "-k", "10", "1200", "unshare", "--mount", "--pid", "--fork", "--", "/bin/sh", "-c",
        HOST_SETUP, "sh",
    ])
    .arg(stage)
    .stdin(std::process::Stdio::null());
    let (status, out) = run_captured(&mut cmd)?;
    let _ = std::fs::write(log, &out);
    if !status.success() || !out.contains("DEBIAN-ALL-DONE") {
        return Err(format!(
            "the driver in the chroot exited with {status}:\n{}",
            util::tail(&out, 20)
        ));
    }
    read_outputs(&out_dir)
}

/// One boot of the image; the outputs the driver left in it.
fn run_on_trellis(env: &BootEnv, dir: &Path, image: &Path) -> Res<BTreeMap<String, String>> {
    let initrd = dir.join("initramfs.cpio");
    let spec = initramfs::Spec {
        user: None,
        adds: &[],
        argv: None,
    };
    initramfs::write(&spec, &initrd)?;
    let append = ["root=/dev/vda rw".to_string()];
    let disks = [image.to_path_buf()];
    let progress = |l: &str| l.contains("DEBIAN-DONE") || l.contains("DEBIAN-ALL-DONE");
    let boot = qemu::Boot {
        kernel: &env.kernel,
        initrd: &initrd,
        append: &append,
        timeout: Some(BOOT_TIMEOUT),
        console: Console::Capture,
        watch: Some(qemu::Watch {
            is_progress: &progress,
            quiet: QUIET,
        }),
        disks: &disks,
        net: None,
    };
    let res = qemu::boot(&boot, &mut |l| {
        if l.contains("DEBIAN-DONE") {
            eprintln!("xtask: debian: trellis: {}", l.trim());
        }
    })?;
    let _ = env.write_log("debian", &res);
    match &res.outcome {
        Outcome::Poweroff(_) if res.lines.iter().any(|l| l.contains("DEBIAN-ALL-DONE")) => {}
        other => {
            return Err(format!(
                "{}\n{}",
                other
                    .problem()
                    .unwrap_or_else(|| "the driver did not finish".into()),
                serial_tail(&res.lines, 30)
            ));
        }
    }
    let got = dir.join("out-trellis");
    let _ = std::fs::remove_dir_all(&got);
    std::fs::create_dir_all(&got).ctx(|| format!("cannot create {}", got.display()))?;
    let debugfs = mkimage::e2fs_tool("debugfs")?;
    run_quiet(
        Command::new(debugfs)
            .arg("-R")
            .arg(format!("rdump /{GUEST_DIR}/out {}", got.display()))
            .arg(image),
    )?;
    read_outputs(&got.join("out"))
}

/// `NAME.out` files of a directory.
fn read_outputs(dir: &Path) -> Res<BTreeMap<String, String>> {
    let mut map = BTreeMap::new();
    for entry in std::fs::read_dir(dir).ctx(|| format!("cannot read {}", dir.display()))? {
        let path = entry.ctx(|| "read_dir".into())?.path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".out"))
        else {
            continue;
        };
        let bytes = std::fs::read(&path).ctx(|| format!("cannot read {}", path.display()))?;
        map.insert(
            name.to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        );
    }
    Ok(map)
}

/// The verdict of one workload: Linux's output must end in `exit 0` and
/// Trellis's must be the same, byte for byte.
fn compare(name: &str, linux: Option<&String>, trellis: Option<&String>) -> Result<(), String> {
    let Some(linux) = linux else {
        return Err(format!("{name} left no output on Linux"));
    };
    if !linux.ends_with("exit 0\n") {
        return Err(format!(
            "{name} failed on Linux (the reference):\n{}",
            util::tail(linux, 20)
        ));
    }
    let Some(trellis) = trellis else {
        return Err(format!("{name} left no output on Trellis"));
    };
    if linux == trellis {
        return Ok(());
    }
    Err(first_difference(linux, trellis))
}

/// A short report of where two outputs part.
fn first_difference(linux: &str, trellis: &str) -> String {
    let l: Vec<&str> = linux.lines().collect();
    let t: Vec<&str> = trellis.lines().collect();
    let at = l
        .iter()
        .zip(&t)
        .position(|(a, b)| a != b)
        .unwrap_or(l.len().min(t.len()));
    let last = |v: &Vec<&str>| v.last().copied().unwrap_or("").to_string();
    let mut s = format!(
        "output differs from Linux at line {} (Trellis: {}; Linux: {})",
        at + 1,
        last(&t),
        last(&l)
    );
    let from = at.saturating_sub(3);
    for (side, v) in [("linux", &l), ("trellis", &t)] {
        for line in v.iter().skip(from).take(12) {
            s.push_str(&format!("\n{side}: {line}"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_output_is_parsed() {
        let out = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibtinfo.so.6 => /lib/x86_64-linux-gnu/libtinfo.so.6 (0x00007f)\n\
                   \t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n\tlibfoo.so => not found\n";
        assert_eq!(
            parse_ldd(out),
            [
                PathBuf::from("/lib/x86_64-linux-gnu/libtinfo.so.6"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2")
            ]
        );
    }

    #[test]
    fn outputs_are_compared_exactly() {
        let ok = "a\nexit 0\n".to_string();
        assert!(compare("w", Some(&ok), Some(&ok)).is_ok());
        assert!(
            compare("w", None, Some(&ok))
                .unwrap_err()
                .contains("no output on Linux")
        );
        assert!(
            compare("w", Some(&ok), None)
                .unwrap_err()
                .contains("no output on Trellis")
        );
        let bad = "a\nexit 1\n".to_string();
        assert!(
            compare("w", Some(&bad), Some(&bad))
                .unwrap_err()
                .contains("failed on Linux")
        );
        let e = compare("w", Some(&ok), Some(&"b\nexit 0\n".to_string())).unwrap_err();
        assert!(e.starts_with("output differs from Linux at line 1"), "{e}");
        assert!(e.contains("trellis: b"), "{e}");
    }

    #[test]
    fn every_workload_is_in_the_driver() {
        let driver = include_str!("../../user/debian/driver.sh");
        for (name, _) in WORKLOADS {
            let stem = name.strip_prefix("python-").unwrap_or(name);
            assert!(
                driver.contains(name) || driver.contains(stem),
                "{name} is not run by driver.sh"
            );
        }
    }
}
