//! /proc/pid/mounts (and /proc/mounts, a link to /proc/self/mounts) and
//! /proc/pid/mountinfo: the mount table as the process sees it from its
//! root directory.

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::Write;

use super::pid::Target;
use crate::error::{Errno, Error, Result};
use crate::fs::inode::{dev_major, dev_minor};
use crate::fs::path::path_of;
use crate::fs::{FsContext, mount};

/// Mount points visible from `fs`'s root, with the path each has there;
/// the root file system first.
fn visible_mounts(fs: &FsContext) -> Vec<(String, mount::MountInfo)> {
    mount::mounts()
        .into_iter()
        .filter_map(|m| {
            let path = path_of(fs, &m.mountpoint).ok()?;
            (!path.starts_with('(')).then_some((path, m))
        })
        .collect()
}

/// Escapes what would break the space-separated fields (proc(5)).
fn escape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            ' ' => out.push_str("\\040"),
            '\t' => out.push_str("\\011"),
            '\n' => out.push_str("\\012"),
            '\\' => out.push_str("\\134"),
            c => out.push(c),
        }
    }
    out
}

/// Mount options as /proc/mounts shows them: the mount's flags (in
/// Linux's order), then what the type adds.
pub(super) fn mount_options(fstype: &str, flags: u32) -> String {
    let mut s = String::from(if flags & mount::ST_RDONLY != 0 { "ro" } else { "rw" });
    let names = [
        (mount::ST_SYNCHRONOUS, ",sync"),
        (mount::ST_MANDLOCK, ",mand"),
        (mount::ST_NOSUID, ",nosuid"),
        (mount::ST_NODEV, ",nodev"),
        (mount::ST_NOEXEC, ",noexec"),
        (mount::ST_NOATIME, ",noatime"),
        (mount::ST_NODIRATIME, ",nodiratime"),
        (mount::ST_RELATIME, ",relatime"),
    ];
    for (flag, name) in names {
        if flags & flag != 0 {
            s.push_str(name);
        }
    }
    match fstype {
        "devtmpfs" => s.push_str(",mode=755"),
        "devpts" => s.push_str(&crate::fs::devpts::mount_options()),
        _ => {}
    }
    s
}

fn process_fs(t: Target) -> Result<FsContext> {
    let p = t.process()?;
    if p.exit_status().is_some() {
        return Err(Error::new(Errno::EINVAL));
    }
    let fs = p.fs().lock().clone();
    Ok(fs)
}

/// /proc/pid/mounts (and /proc/mounts): one fstab-style line per mount.
pub(super) fn mounts(t: Target) -> Result<String> {
    let fs = process_fs(t)?;
    let (source, fstype, flags) = mount::root_description();
    let mut s = format!("{} / {fstype} {} 0 0\n", escape(&source), mount_options(&fstype, flags));
    for (path, m) in visible_mounts(&fs) {
        let _ = writeln!(
            s,
            "{} {} {} {} 0 0",
            escape(&m.source),
            escape(&path),
            m.fstype,
            mount_options(&m.fstype, m.flags)
        );
    }
    Ok(s)
}

/// /proc/pid/mountinfo: mount ids, parents, devices and options.
pub(super) fn mountinfo(t: Target) -> Result<String> {
    const ROOT_ID: usize = 1;
    let fs = process_fs(t)?;
    let root_dev = fs.root().metadata().dev;
    let (source, fstype, flags) = mount::root_description();
    let opts = mount_options(&fstype, flags);
    let mut s = format!(
        "{ROOT_ID} {ROOT_ID} {}:{} / / {opts} - {fstype} {} {opts}\n",
        dev_major(root_dev),
        dev_minor(root_dev),
        escape(&source)
    );
    let all = mount::mounts();
    for (path, m) in visible_mounts(&fs) {
        let dev = m.root.metadata().dev;
        let on_dev = m.mountpoint.metadata().dev;
        let id = all.iter().position(|x| Arc::ptr_eq(&x.root, &m.root));
        let parent = all
            .iter()
            .position(|x| x.root.metadata().dev == on_dev)
            .map_or(ROOT_ID, |i| 20 + i);
        let _ = writeln!(
            s,
            "{} {} {}:{} / {} {} - {} {} rw",
            20 + id.unwrap_or(0),
            parent,
            dev_major(dev),
            dev_minor(dev),
            escape(&path),
            mount_options(&m.fstype, m.flags),
            m.fstype,
            escape(&m.source)
        );
    }
    Ok(s)
}
