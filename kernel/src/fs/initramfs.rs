//! Unpacking the initramfs (cpio "newc", possibly several concatenated
//! archives) into the root file system, as Linux's init/initramfs.c does:
//! missing parent directories are created, an existing name is replaced,
//! regular files with the same (device, inode) and `nlink` ≥ 2 become hard
//! links, and directory times are set last (creating children changes
//! them). The archive is untrusted: a malformed one is reported and
//! unpacking stops; a bad member is skipped.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::FsContext;
use super::inode::{FileType, Inode, NewNode, NodeKind, Timespec, makedev};
use crate::error::{Errno, Error, Result};

type LinkKey = (u32, u32, u32);

struct Unpacker<'a> {
    fs: &'a FsContext,
    /// First member of each multiply linked file, for later links to it.
    links: BTreeMap<LinkKey, Arc<dyn Inode>>,
    dir_times: Vec<(Arc<dyn Inode>, Timespec)>,
}

/// Unpacks `data` below the root of `fs`; returns the number of members.
pub fn unpack(fs: &FsContext, mut data: &[u8]) -> usize {
    let mut u = Unpacker {
        fs,
        links: BTreeMap::new(),
        dir_times: Vec::new(),
    };
    let mut count = 0;
    loop {
        let mut entries = cpio::entries(data);
        for item in entries.by_ref() {
            let entry = match item {
                Ok(entry) => entry,
                Err(e) => {
                    frame::log_warn!(
                        "initramfs: malformed archive after {count} members ({e:?}); stopping"
                    );
                    break;
                }
            };
            match u.add(&entry) {
                Ok(()) => count += 1,
                Err(e) => {
                    let name = String::from_utf8_lossy(entry.name);
                    frame::log_warn!("initramfs: skipping {name:?}: {e:?}");
                }
            }
        }
        if !entries.saw_trailer() {
            break;
        }
        // Another archive may follow the trailer, after zero padding.
        let rest = entries.rest();
        let zeros = rest.iter().position(|&b| b != 0).unwrap_or(rest.len()) & !3;
        data = rest.get(zeros..).unwrap_or(&[]);
        if data.is_empty() {
            break;
        }
    }
    for (dir, mtime) in u.dir_times {
        let _ = dir.set_times(Some(mtime), Some(mtime));
    }
    count
}

impl Unpacker<'_> {
    fn add(&mut self, e: &cpio::Entry<'_>) -> Result<()> {
        let name = core::str::from_utf8(e.name)
            .map_err(|_| Error::with_message(Errno::EINVAL, "non-UTF-8 name"))?;
        let mut comps: Vec<&str> = name
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        if comps.contains(&"..") {
            return Err(Error::with_message(
                Errno::EINVAL,
                "\"..\" in a member name",
            ));
        }
        let file_type = FileType::from_mode(e.mode)
            .ok_or(Error::with_message(Errno::EINVAL, "unknown file type"))?;
        let perm = e.mode & 0o7777;
        let mtime = Timespec {
            sec: i64::from(e.mtime),
            nsec: 0,
        };
        let Some(last) = comps.pop() else {
            // The archive's "." entry describes the root itself.
            let root = self.fs.root();
            root.set_perm(perm)?;
            root.set_owner(Some(e.uid), Some(e.gid))?;
            self.dir_times.push((root.clone(), mtime));
            return Ok(());
        };
        let mut dir = self.fs.root().clone();
        for comp in comps {
            dir = match dir.lookup(comp) {
                Ok(d) if d.is_dir() => d,
                Ok(_) => return Err(Error::new(Errno::ENOTDIR)),
                Err(_) => dir.create(
                    comp,
                    NewNode {
                        kind: NodeKind::Directory,
                        perm: 0o755,
                        uid: 0,
                        gid: 0,
                    },
                )?,
            };
        }
        let key = (e.dev_major, e.dev_minor, e.ino);
        if file_type == FileType::Regular
            && e.nlink >= 2
            && let Some(first) = self.links.get(&key).cloned()
        {
            remove_existing(&dir, last, false)?;
            dir.link(last, &first)?;
            // gen_init_cpio and GNU cpio store the data with the last link.
            if !e.data.is_empty() {
                first.resize(0)?;
                first.write_at(0, e.data)?;
            }
            return Ok(());
        }
        let kind = match file_type {
            FileType::Regular => NodeKind::Regular,
            FileType::Directory => NodeKind::Directory,
            FileType::Symlink => {
                let target = core::str::from_utf8(e.data).map_err(|_| Error::new(Errno::EINVAL))?;
                NodeKind::Symlink(String::from(target))
            }
            t => NodeKind::Special(t, makedev(e.rdev_major, e.rdev_minor)),
        };
        let node = if file_type == FileType::Directory {
            match dir.lookup(last) {
                Ok(existing) if existing.is_dir() => {
                    existing.set_perm(perm)?;
                    existing
                }
                _ => {
                    remove_existing(&dir, last, false)?;
                    dir.create(
                        last,
                        NewNode {
                            kind,
                            perm,
                            uid: e.uid,
                            gid: e.gid,
                        },
                    )?
                }
            }
        } else {
            remove_existing(&dir, last, true)?;
            dir.create(
                last,
                NewNode {
                    kind,
                    perm,
                    uid: e.uid,
                    gid: e.gid,
                },
            )?
        };
        node.set_owner(Some(e.uid), Some(e.gid))?;
        match file_type {
            FileType::Directory => self.dir_times.push((node, mtime)),
            FileType::Regular => {
                if !e.data.is_empty() {
                    node.write_at(0, e.data)?;
                }
                node.set_times(Some(mtime), Some(mtime))?;
                if e.nlink >= 2 {
                    self.links.insert(key, node);
                }
            }
            _ => node.set_times(Some(mtime), Some(mtime))?,
        }
        Ok(())
    }
}

/// Makes room for a new member called `name`: an existing non-directory is
/// unlinked; an existing directory is removed only when `dirs_too` (and
/// only if empty).
fn remove_existing(dir: &Arc<dyn Inode>, name: &str, dirs_too: bool) -> Result<()> {
    match dir.lookup(name) {
        Ok(node) if node.is_dir() => {
            if dirs_too {
                dir.rmdir(name)?;
            }
            Ok(())
        }
        Ok(_) => dir.unlink(name),
        Err(_) => Ok(()),
    }
}
