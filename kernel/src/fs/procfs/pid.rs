//! /proc/<pid> and /proc/<pid>/task/<tid>: one directory per process
//! (and per thread), owned by the process's effective ids (which is what
//! ps reports as its user).

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::{caller, fd, mounts, parse_id, pid_ino, pid_text};
use crate::error::{Errno, Error, Result};
use crate::fs::inode::{FileType, Inode, MagicLink, Timespec};
use crate::fs::name;
use crate::fs::path::path_of;
use crate::fs::pseudo::{Attr, DirSource, FIRST_KEY, GenDir, GenFile, GenLink, Item, TreeDir, boot_time};
use crate::process::{self, Pid, Process};

/// Whose directory: a process, or one of its threads.
#[derive(Clone, Copy)]
pub(super) struct Target {
    pub pid: Pid,
    /// The thread of a /proc/pid/task/tid directory.
    pub tid: Option<Pid>,
}

impl Target {
    /// The process, if it still exists (ESRCH once it has been reaped).
    pub fn process(&self) -> Result<Arc<Process>> {
        process::find_process(self.pid).ok_or(Error::new(Errno::ESRCH))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    Auxv,
    Cmdline,
    Comm,
    Cwd,
    Environ,
    Exe,
    Fd,
    FdInfo,
    Limits,
    MakeItFail,
    Maps,
    Mem,
    MountInfo,
    Mounts,
    Net,
    OomScore,
    OomScoreAdj,
    Root,
    Stat,
    Statm,
    Status,
    Task,
}

/// The entries of a process directory, their types and permissions
/// (proc(5); the links are checked when read, not by their mode).
const ENTRIES: &[(&str, Entry, FileType, u32)] = &[
    ("auxv", Entry::Auxv, FileType::Regular, 0o400),
    ("cmdline", Entry::Cmdline, FileType::Regular, 0o444),
    ("comm", Entry::Comm, FileType::Regular, 0o644),
    ("cwd", Entry::Cwd, FileType::Symlink, 0o777),
    ("environ", Entry::Environ, FileType::Regular, 0o400),
    ("exe", Entry::Exe, FileType::Symlink, 0o777),
    ("fd", Entry::Fd, FileType::Directory, 0o500),
    ("fdinfo", Entry::FdInfo, FileType::Directory, 0o500),
    ("limits", Entry::Limits, FileType::Regular, 0o444),
    ("make-it-fail", Entry::MakeItFail, FileType::Regular, 0o644),
    ("maps", Entry::Maps, FileType::Regular, 0o444),
    ("mem", Entry::Mem, FileType::Regular, 0o600),
    ("mountinfo", Entry::MountInfo, FileType::Regular, 0o444),
    ("mounts", Entry::Mounts, FileType::Regular, 0o444),
    ("net", Entry::Net, FileType::Directory, 0o555),
    ("oom_score", Entry::OomScore, FileType::Regular, 0o444),
    ("oom_score_adj", Entry::OomScoreAdj, FileType::Regular, 0o644),
    ("root", Entry::Root, FileType::Symlink, 0o777),
    ("stat", Entry::Stat, FileType::Regular, 0o444),
    ("statm", Entry::Statm, FileType::Regular, 0o444),
    ("status", Entry::Status, FileType::Regular, 0o444),
    ("task", Entry::Task, FileType::Directory, 0o555),
];

/// Inode-number entry codes of the task directory's children (after
/// those of `ENTRIES`, which use their index + 1).
pub(super) const ENTRY_FD_LINK: u64 = 0x40;
pub(super) const ENTRY_FDINFO_FILE: u64 = 0x41;

struct PidDir {
    dev: u64,
    target: Target,
    parent: Arc<dyn Inode>,
    /// Owner of the world-readable directories (the process's effective
    /// ids), of the other nodes (root's if the process is not dumpable
    /// or has no memory left: Linux's task_dump_owner), and their time.
    uid: u32,
    gid: u32,
    dump_uid: u32,
    dump_gid: u32,
    time: Timespec,
}

/// The directory of process `pid` (or of its thread `tid`) whose ".." is
/// `parent`: ENOENT if there is no such process.
pub(super) fn pid_dir(
    dev: u64,
    pid: Pid,
    tid: Option<Pid>,
    parent: Arc<dyn Inode>,
) -> Result<Arc<dyn Inode>> {
    let p = process::find_process(pid).ok_or(Error::new(Errno::ENOENT))?;
    let creds = p.creds();
    let dumpable = p.dumpable.load(core::sync::atomic::Ordering::Relaxed) == 1 && p.exit_status().is_none();
    let (dump_uid, dump_gid) = if dumpable { (creds.euid, creds.egid) } else { (0, 0) };
    let start = boot_time();
    let since_boot = p.start_ns();
    let mut time = start;
    time.sec += (since_boot / 1_000_000_000) as i64;
    time.nsec += (since_boot % 1_000_000_000) as u32;
    if time.nsec >= 1_000_000_000 {
        time.sec += 1;
        time.nsec -= 1_000_000_000;
    }
    let dir = PidDir {
        dev,
        target: Target { pid, tid },
        parent,
        uid: creds.euid,
        gid: creds.egid,
        dump_uid,
        dump_gid,
        time,
    };
    let attr = dir.attr(dir.ino(0, 0), 0o555);
    Ok(GenDir::new(attr, dir))
}

impl PidDir {
    fn id(&self) -> Pid {
        self.target.tid.unwrap_or(self.target.pid)
    }

    pub fn ino(&self, entry: u64, index: u64) -> u64 {
        pid_ino(self.id(), self.target.tid.is_some(), entry, index)
    }

    fn attr(&self, ino: u64, perm: u32) -> Attr {
        let (uid, gid) = if perm == 0o555 { (self.uid, self.gid) } else { (self.dump_uid, self.dump_gid) };
        Attr {
            dev: self.dev,
            ino,
            perm,
            uid,
            gid,
            time: self.time,
        }
    }

    fn entries(
        &self,
    ) -> impl Iterator<Item = (u64, &'static (&'static str, Entry, FileType, u32))> {
        let is_thread = self.target.tid.is_some();
        (1u64..)
            .zip(ENTRIES.iter())
            .filter(move |(_, e)| !(is_thread && e.1 == Entry::Task))
    }

    fn make(&self, this: &Arc<dyn Inode>, code: u64, entry: Entry, perm: u32) -> Arc<dyn Inode> {
        let attr = self.attr(self.ino(code, 0), perm);
        let t = self.target;
        let raw = |f: fn(Target) -> Result<Vec<u8>>| -> Arc<dyn Inode> {
            GenFile::new(attr, Box::new(move || f(t)))
        };
        // Text that may hold stored names shows them as user bytes.
        let text = |f: fn(Target) -> Result<String>| -> Arc<dyn Inode> {
            GenFile::new(attr, Box::new(move || f(t).map(name::text_to_user)))
        };
        match entry {
            Entry::Cmdline => raw(pid_text::cmdline),
            Entry::Comm => GenFile::writable(
                attr,
                Box::new(move || pid_text::comm(t).map(name::text_to_user)),
                Box::new(move |data| pid_text::set_comm(t, data)),
            ),
            // Linux checks these when they are opened.
            Entry::Auxv => GenFile::checked(attr, Box::new(move || pid_text::auxv(t)), checker(t)),
            Entry::Environ => GenFile::checked(attr, Box::new(move || pid_text::environ(t)), checker(t)),
            Entry::Limits => text(pid_text::limits),
            Entry::MakeItFail => GenFile::writable(
                attr,
                Box::new(move || pid_text::make_it_fail(t)),
                Box::new(move |data| pid_text::set_make_it_fail(t, data)),
            ),
            Entry::Maps => GenFile::checked(
                attr,
                Box::new(move || pid_text::maps(t).map(name::text_to_user)),
                checker(t),
            ),
            Entry::Mem => super::mem::mem_file(attr, t),
            Entry::MountInfo => text(mounts::mountinfo),
            Entry::Mounts => text(mounts::mounts),
            Entry::Net => TreeDir {
                dev: self.dev,
                ino: attr.ino,
                entries: super::net::NET,
                parent: Some(this.clone()),
                dir_perm: 0o555,
                file_perm: 0o444,
            }
            .into_inode(),
            Entry::OomScore => text(pid_text::oom_score),
            Entry::OomScoreAdj => GenFile::writable(
                attr,
                Box::new(move || pid_text::oom_score_adj(t).map(String::into_bytes)),
                Box::new(move |data| pid_text::set_oom_score_adj(t, data)),
            ),
            Entry::Stat => text(pid_text::stat),
            Entry::Statm => text(pid_text::statm),
            Entry::Status => text(pid_text::status),
            Entry::Cwd | Entry::Root => {
                let root = entry == Entry::Root;
                GenLink::magic(
                    attr,
                    Box::new(move || path_of(&reader_fs()?, &dir_of(t, root)?)),
                    Box::new(move || magic(dir_of(t, root)?)),
                )
            }
            Entry::Exe => GenLink::magic(
                attr,
                Box::new(move || exe(t)),
                Box::new(move || magic(exe_node(t)?)),
            ),
            Entry::Fd | Entry::FdInfo => {
                let info = entry == Entry::FdInfo;
                let source = fd::FdDir::new(self.dev, t, info, this.clone(), self.attr(0, 0));
                GenDir::new(attr, source)
            }
            Entry::Task => GenDir::new(
                attr,
                TaskDir {
                    dev: self.dev,
                    pid: t.pid,
                    parent: this.clone(),
                },
            ),
        }
    }
}

impl DirSource for PidDir {
    fn list(&self) -> Result<Vec<Item>> {
        Ok(self
            .entries()
            .map(|(code, (name, _, file_type, _))| Item {
                key: FIRST_KEY + code,
                name: String::from(*name),
                ino: self.ino(code, 0),
                file_type: *file_type,
            })
            .collect())
    }

    fn find(&self, this: &Arc<dyn Inode>, name: &str) -> Result<Arc<dyn Inode>> {
        let (code, (_, entry, _, perm)) = self
            .entries()
            .find(|(_, e)| e.0 == name)
            .ok_or(Error::new(Errno::ENOENT))?;
        Ok(self.make(this, code, *entry, *perm))
    }

    fn parent(&self, _this: &Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
        Ok(self.parent.clone())
    }
}

/// /proc/pid/task: a directory per thread.
struct TaskDir {
    dev: u64,
    pid: Pid,
    parent: Arc<dyn Inode>,
}

impl DirSource for TaskDir {
    fn list(&self) -> Result<Vec<Item>> {
        let p = process::find_process(self.pid).ok_or(Error::new(Errno::ESRCH))?;
        let mut tids: Vec<Pid> = p.threads().iter().map(|t| t.tid()).collect();
        tids.sort_unstable();
        Ok(tids
            .into_iter()
            .map(|tid| Item {
                key: FIRST_KEY + u64::from(tid),
                name: tid.to_string(),
                ino: pid_ino(tid, true, 0, 0),
                file_type: FileType::Directory,
            })
            .collect())
    }

    fn find(&self, this: &Arc<dyn Inode>, name: &str) -> Result<Arc<dyn Inode>> {
        let tid: Pid = parse_id(name)?;
        let p = process::find_process(self.pid).ok_or(Error::new(Errno::ENOENT))?;
        if !p.threads().iter().any(|t| t.tid() == tid) {
            return Err(Error::new(Errno::ENOENT));
        }
        pid_dir(self.dev, self.pid, Some(tid), this.clone())
    }

    fn parent(&self, _this: &Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
        Ok(self.parent.clone())
    }
}

/// Whether the caller may see `p`'s private details (its memory, links
/// and open files): Linux's ptrace access check with the caller's
/// file-system ids (PTRACE_MODE_READ_FSCREDS), EACCES if not.
pub(super) fn may_access(p: &Arc<Process>) -> Result<()> {
    let (me, _) = caller()?;
    if process::ptrace_may_access(&me, p, process::AccessCreds::Fs) {
        Ok(())
    } else {
        Err(Error::new(Errno::EACCES))
    }
}

/// The open-time check of a file of `t` that needs [`may_access`].
fn checker(t: Target) -> crate::fs::pseudo::OpenCheck {
    Box::new(move || may_access(&t.process()?))
}

/// The caller's view of the file system, for printing paths.
pub(super) fn reader_fs() -> Result<crate::fs::FsContext> {
    let (me, _) = caller()?;
    let fs = me.fs().lock().clone();
    Ok(fs)
}

/// The process's working directory, or its root.
fn dir_of(t: Target, root: bool) -> Result<Arc<dyn Inode>> {
    let p = t.process()?;
    may_access(&p)?;
    let fs = p.fs().lock();
    Ok(if root { fs.root() } else { fs.cwd() }.clone())
}

fn magic(node: Arc<dyn Inode>) -> Result<MagicLink> {
    Ok(MagicLink { node, file: None })
}

/// The program file, found from the process's own root (magic links on
/// the way are taken by their text: see `lookup_text_only`).
fn exe_node(t: Target) -> Result<Arc<dyn Inode>> {
    let path = exe(t)?;
    let fs = t.process()?.fs().lock().clone();
    crate::fs::path::lookup_text_only(&fs, fs.root(), &path)
}

fn exe(t: Target) -> Result<String> {
    let p = t.process()?;
    may_access(&p)?;
    let exe = p.exe();
    if exe.is_empty() || p.exit_status().is_some() {
        return Err(Error::new(Errno::ENOENT));
    }
    Ok(exe)
}
