//! `cargo xtask rootfs [PKG...]`: a Debian root file system made of the
//! named packages and everything they depend on, unpacked the way dpkg
//! would leave the files (maintainer scripts are not run; the few links
//! they would make are made here), with an `/init` for Trellis.
//!
//! The packages come from the host's apt sources (`apt-get download`, kept
//! in `target/debs/`); dependencies are resolved with `apt-cache depends
//! --recurse` over Depends and Pre-Depends, every alternative included.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Context, Res, run_quiet, target_dir};

/// What `cargo xtask rootfs` installs when no package is named: the
/// programs issue 9 asks for.
pub const DEFAULT_PACKAGES: &[&str] = &[
    "bash", "coreutils", "findutils", "grep", "sed", "gawk", "tar", "gzip", "python3", "sqlite3", "perl",
];

/// Where the tree goes by default.
pub fn default_out(root: &Path) -> PathBuf {
    target_dir(root).join("rootfs")
}

/// The dependency closure of `pkgs`: every package `apt-cache depends
/// --recurse` names (virtual packages, shown as `<name>`, are left out:
/// their providers are listed too).
pub fn closure(pkgs: &[String]) -> Res<Vec<String>> {
    let mut cmd = Command::new("apt-cache");
    cmd.args([
        "depends",
        "--recurse",
        "--no-recommends",
        "--no-suggests",
        "--no-conflicts",
        "--no-breaks",
        "--no-replaces",
        "--no-enhances",
    ]);
    cmd.args(pkgs);
    Ok(parse_depends(&run_quiet(&mut cmd)?))
}

/// The package names of `apt-cache depends` output: its unindented lines.
fn parse_depends(out: &str) -> Vec<String> {
    let set: BTreeSet<String> = out
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(' ') && !l.starts_with('<'))
        .map(|l| l.trim().split(':').next().unwrap_or("").to_string())
        .filter(|l| valid_name(l))
        .collect();
    set.into_iter().collect()
}

/// A Debian package name (policy §5.6.1): lower-case letters, digits and
/// `+ - .`, starting with a letter or digit, at least two characters.
fn valid_name(n: &str) -> bool {
    n.len() >= 2
        && n.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
}

/// Downloads what `debs` lacks of `pkgs`; returns the .deb files.
fn download(debs: &Path, pkgs: &[String]) -> Res<Vec<PathBuf>> {
    std::fs::create_dir_all(debs).ctx(|| format!("cannot create {}", debs.display()))?;
    let have = |p: &str| -> Option<PathBuf> {
        let prefix = format!("{p}_");
        std::fs::read_dir(debs).ok()?.flatten().map(|e| e.path()).find(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".deb"))
        })
    };
    let missing: Vec<&String> = pkgs.iter().filter(|p| have(p).is_none()).collect();
    if !missing.is_empty() {
        eprintln!("xtask: downloading {} Debian packages into {}", missing.len(), debs.display());
        let mut cmd = Command::new("apt-get");
        cmd.current_dir(debs).arg("download").args(&missing);
        run_quiet(&mut cmd)?;
    }
    pkgs.iter()
        .map(|p| have(p).ok_or_else(|| format!("apt-get download did not fetch {p}")))
        .collect()
}

/// Links maintainer scripts would make (update-alternatives, dash's
/// /bin/sh), as `(link, target)`: made only where the target exists and
/// the link does not.
const LINKS: &[(&str, &str)] = &[
    ("usr/bin/awk", "gawk"),
    ("usr/bin/awk", "mawk"),
    ("bin/sh", "dash"),
    ("bin/sh", "bash"),
    ("usr/bin/pager", "/bin/more"),
];

/// The `/init` of the tree: the environment a login shell would have, then
/// the command `cargo xtask run -- CMD` left, else an interactive bash.
const INIT: &str = "#!/bin/bash
# Trellis: the init of a Debian tree made by `cargo xtask rootfs`.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=${TERM:-vt100}
cd /root
if [ $# -gt 0 ]; then
    exec \"$@\"
fi
exec /bin/bash -l
";

/// Builds the tree in `out` (emptied first) from `pkgs` and their
/// dependencies; returns how many packages went in.
pub fn build(root: &Path, out: &Path, pkgs: &[String]) -> Res<usize> {
    let debs = fetch(root, pkgs)?;
    unpack(out, &debs)?;
    Ok(debs.len())
}

/// The .deb files of `pkgs` and their dependency closure, downloaded into
/// `target/debs` where missing (this step needs the Debian archive).
pub fn fetch(root: &Path, pkgs: &[String]) -> Res<Vec<PathBuf>> {
    let all = closure(pkgs)?;
    download(&target_dir(root).join("debs"), &all)
}

/// Unpacks `debs` into `out` (emptied first) and finishes the tree.
pub fn unpack(out: &Path, debs: &[PathBuf]) -> Res<()> {
    if out.exists() {
        std::fs::remove_dir_all(out).ctx(|| format!("cannot empty {}", out.display()))?;
    }
    std::fs::create_dir_all(out).ctx(|| format!("cannot create {}", out.display()))?;
    for deb in debs {
        let mut cmd = Command::new("dpkg-deb");
        cmd.arg("-x").arg(deb).arg(out);
        run_quiet(&mut cmd)?;
    }
    finish_tree(out)
}

/// What dpkg's configuration step would leave: directories, the account
/// files, the links of [`LINKS`] and `/init`.
fn finish_tree(out: &Path) -> Res<()> {
    use std::os::unix::fs::PermissionsExt;
    for (dir, mode) in [("dev", 0o755), ("proc", 0o555), ("sys", 0o555), ("tmp", 0o1777), ("root", 0o700), ("run", 0o755), ("etc", 0o755)] {
        let p = out.join(dir);
        std::fs::create_dir_all(&p).ctx(|| format!("cannot create {}", p.display()))?;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).ctx(|| format!("chmod {}", p.display()))?;
    }
    // base-passwd ships the master copies; without it, a root account.
    for (file, master, fallback) in [
        ("etc/passwd", "usr/share/base-passwd/passwd.master", "root:x:0:0:root:/root:/bin/bash\n"),
        ("etc/group", "usr/share/base-passwd/group.master", "root:x:0:\n"),
    ] {
        let dst = out.join(file);
        if !dst.exists() {
            let text = std::fs::read_to_string(out.join(master)).unwrap_or_else(|_| fallback.to_string());
            std::fs::write(&dst, text).ctx(|| format!("cannot write {}", dst.display()))?;
        }
    }
    let hosts = out.join("etc/hosts");
    if !hosts.exists() {
        std::fs::write(&hosts, "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
            .ctx(|| format!("cannot write {}", hosts.display()))?;
    }
    for (link, target) in LINKS {
        let l = out.join(link);
        let dir = l.parent().unwrap_or(out);
        let t = if let Some(abs) = target.strip_prefix('/') { out.join(abs) } else { dir.join(target) };
        if t.exists() && std::fs::symlink_metadata(&l).is_err() {
            std::os::unix::fs::symlink(target, &l).ctx(|| format!("cannot link {}", l.display()))?;
        }
    }
    let init = out.join("init");
    std::fs::write(&init, INIT).ctx(|| format!("cannot write {}", init.display()))?;
    std::fs::set_permissions(&init, std::fs::Permissions::from_mode(0o755)).ctx(|| "chmod init".into())?;
    Ok(())
}

/// `run --root DIR`: the options of a boot with DIR as the root file
/// system. DIR becomes `target/root.img` (ext2), attached before the
/// other disks as /dev/vda; the kernel mounts it read-write as / and runs
/// what `/.trellis/argv` names, as it does from the initramfs: `/init`,
/// with the command after `--` as its arguments.
pub fn boot_options(root: &Path, dir: &Path, opts: &crate::args::Options) -> Res<crate::args::Options> {
    if !dir.join("init").is_file() {
        return Err(format!("{} has no /init (make it with `cargo xtask rootfs`)", dir.display()));
    }
    let mut argv = vec!["/init".to_string()];
    argv.extend(opts.command.iter().flatten().cloned());
    let argv_dir = dir.join(".trellis");
    std::fs::create_dir_all(&argv_dir).ctx(|| format!("cannot create {}", argv_dir.display()))?;
    std::fs::write(argv_dir.join("argv"), crate::initramfs::argv_blob(&argv)).ctx(|| "cannot write /.trellis/argv".into())?;
    let img = target_dir(root).join("root.img");
    eprintln!("xtask: making {} from {}", img.display(), dir.display());
    let made = crate::mkimage::make(dir, &img, None, 4096);
    let _ = std::fs::remove_dir_all(&argv_dir);
    made?;
    let mut o = opts.clone();
    o.disks.insert(0, img);
    o.append.push("root=/dev/vda rw".into());
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depends_output_is_parsed_into_real_packages() {
        let out = "bash\n  PreDepends: libc6\n  Depends: base-files\n |Depends: <awk>\n    mawk\nlibc6\n  Depends: libgcc-s1\n<awk>\nlibgcc-s1\nbase-files\nmawk\n";
        assert_eq!(parse_depends(out), ["base-files", "bash", "libc6", "libgcc-s1", "mawk"]);
    }

    #[test]
    fn package_names_follow_policy() {
        assert!(valid_name("libstdc++6"));
        assert!(valid_name("python3.11-minimal"));
        assert!(!valid_name("Bash"));
        assert!(!valid_name("a"));
        assert!(!valid_name("-x"));
    }
}
