//! /proc/pid/fd (a link per open descriptor, naming what it is open on)
//! and /proc/pid/fdinfo (its position and flags).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::pid::{ENTRY_FD_LINK, ENTRY_FDINFO_FILE, Target, may_access, reader_fs};
use super::{parse_id, pid_ino};
use crate::error::{Errno, Error, Result};
use crate::fs::eventfd::EventFd;
use crate::fs::inode::{FileType, Inode, MagicLink};
use crate::fs::path::path_of;
use crate::fs::pseudo::{Attr, DirSource, FIRST_KEY, GenFile, GenLink, Item};
use crate::fs::{File, FsContext, O_ACCMODE, O_PATH, O_RDONLY, O_RDWR, O_WRONLY, devices};

pub(super) struct FdDir {
    dev: u64,
    target: Target,
    /// fdinfo rather than fd.
    info: bool,
    parent: Arc<dyn Inode>,
    /// Owner and time of the entries.
    owner: Attr,
}

impl FdDir {
    pub fn new(dev: u64, target: Target, info: bool, parent: Arc<dyn Inode>, owner: Attr) -> Self {
        FdDir {
            dev,
            target,
            info,
            parent,
            owner,
        }
    }

    fn ino(&self, fd: i32) -> u64 {
        let entry = if self.info {
            ENTRY_FDINFO_FILE
        } else {
            ENTRY_FD_LINK
        };
        let id = self.target.tid.unwrap_or(self.target.pid);
        pid_ino(id, self.target.tid.is_some(), entry, fd as u64)
    }

    /// The open descriptors, if the caller may see them.
    fn fds(&self) -> Result<Vec<(i32, Arc<File>)>> {
        let p = self.target.process()?;
        may_access(&p)?;
        let shared_files = p.files();
        let files = shared_files.lock();
        Ok(files.iter().map(|(fd, f)| (fd, f.clone())).collect())
    }
}

impl DirSource for FdDir {
    fn list(&self) -> Result<Vec<Item>> {
        let file_type = if self.info {
            FileType::Regular
        } else {
            FileType::Symlink
        };
        Ok(self
            .fds()?
            .into_iter()
            .map(|(fd, _)| Item {
                key: FIRST_KEY + fd as u64,
                name: fd.to_string(),
                ino: self.ino(fd),
                file_type,
            })
            .collect())
    }

    fn find(&self, _this: &Arc<dyn Inode>, name: &str) -> Result<Arc<dyn Inode>> {
        let fd: i32 = parse_id(name)?;
        let file = self
            .fds()?
            .into_iter()
            .find(|(n, _)| *n == fd)
            .map(|(_, f)| f)
            .ok_or(Error::new(Errno::ENOENT))?;
        let mut attr = self.owner;
        attr.dev = self.dev;
        attr.ino = self.ino(fd);
        let t = self.target;
        if self.info {
            attr.perm = 0o444;
            return Ok(GenFile::new(attr, Box::new(move || fdinfo(t, fd))));
        }
        // The link's mode shows the access mode, as on Linux.
        let flags = file.flags();
        attr.perm = 0o100
            | match flags & O_ACCMODE {
                _ if flags & O_PATH != 0 => 0,
                O_RDONLY => 0o400,
                O_WRONLY => 0o200,
                O_RDWR => 0o600,
                _ => 0,
            };
        let magic = move || {
            let file = open_file(t, fd)?;
            let node = file.node().clone();
            Ok(MagicLink {
                node,
                file: Some(file),
            })
        };
        Ok(GenLink::magic(
            attr,
            Box::new(move || fd_target(t, fd)),
            Box::new(magic),
        ))
    }

    fn parent(&self, _this: &Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
        Ok(self.parent.clone())
    }
}

fn open_file(t: Target, fd: i32) -> Result<Arc<File>> {
    let p = t.process()?;
    may_access(&p)?;
    let file = p.files().lock().get(fd);
    file.map_err(|_| Error::new(Errno::ENOENT))
}

fn fd_target(t: Target, fd: i32) -> Result<String> {
    let file = open_file(t, fd)?;
    describe(&reader_fs()?, &file)
}

/// What /proc/pid/fd/N shows for `file`: its path as `fs` sees it (with
/// " (deleted)" once removed), or "type:[inode]" for pipes and sockets.
pub(super) fn describe(fs: &FsContext, file: &File) -> Result<String> {
    let node = file.node();
    let meta = node.metadata();
    if let Some((dir, name)) = file.origin() {
        // A memfd lives in a file system mounted nowhere.
        if node.seals().is_ok() {
            return Ok(format!("/{name} (deleted)"));
        }
        let mut path = path_of(fs, dir).unwrap_or_default();
        if !path.ends_with('/') {
            path.push('/');
        }
        path.push_str(name);
        if meta.nlink == 0 {
            path.push_str(" (deleted)");
        }
        return Ok(path);
    }
    if meta.file_type == FileType::Directory {
        return path_of(fs, node).or_else(|_| Ok(String::from("/ (deleted)")));
    }
    Ok(match meta.file_type {
        FileType::Fifo => format!("pipe:[{}]", meta.ino),
        FileType::Socket => format!("socket:[{}]", meta.ino),
        FileType::CharDevice if meta.rdev == devices::CONSOLE => String::from("/dev/console"),
        FileType::CharDevice if meta.rdev == devices::TTY => String::from("/dev/tty"),
        _ => format!("anon_inode:[{}]", anon_kind(file)),
    })
}

/// The class name Linux gives an anonymous inode's file.
fn anon_kind(file: &File) -> &'static str {
    let is_eventfd = file
        .ops()
        .is_some_and(|ops| (ops.as_ref() as &dyn core::any::Any).is::<EventFd>());
    if is_eventfd {
        "eventfd"
    } else if crate::fs::epoll::as_epoll(file).is_some() {
        "eventpoll"
    } else if crate::fs::timerfd::as_timerfd(file).is_some() {
        "timerfd"
    } else if crate::fs::signalfd::as_signalfd(file).is_some() {
        "signalfd"
    } else if crate::process::pidfd::as_pidfd(file).is_some() {
        "pidfd"
    } else {
        "unknown"
    }
}

fn fdinfo(t: Target, fd: i32) -> Result<Vec<u8>> {
    let p = t.process()?;
    let (file, cloexec) = {
        let shared_files = p.files();
        let files = shared_files.lock();
        let file = files.get(fd).map_err(|_| Error::new(Errno::ENOENT))?;
        (file, files.cloexec(fd).unwrap_or(false))
    };
    // The flags as octal, with O_CLOEXEC for a close-on-exec descriptor.
    let flags = file.flags() | if cloexec { crate::fs::O_CLOEXEC } else { 0 };
    let meta = file.node().metadata();
    let mut text = format!(
        "pos:\t{}\nflags:\t0{:o}\nmnt_id:\t{}\nino:\t{}\n",
        file.position(),
        flags,
        meta.dev,
        meta.ino
    );
    // A pidfd names its process (-1 once reaped).
    if let Some(pidfd) = crate::process::pidfd::as_pidfd(&file) {
        let pid = if pidfd.reaped() { -1 } else { pidfd.pid() as i64 };
        text.push_str(&format!("Pid:\t{pid}\nNSpid:\t{pid}\n"));
    }
    Ok(text.into_bytes())
}
