//! rename(2) within a ramfs.

use alloc::sync::Arc;

use super::{Body, RamInode};
use crate::error::{Errno, Error, Result};
use crate::fs::inode::{FileType, Inode, RenameFlags, Timespec};

/// Moves `old_name` in `old_dir` to `new_name` in `new_dir`. Checks, in the
/// order rename(2) lists them: EEXIST (RENAME_NOREPLACE), success without
/// effect when both names are links to the same inode, EINVAL for moving a
/// directory below itself, ENOTDIR/ENOTEMPTY/EISDIR for the replaced target.
pub(super) fn rename(
    old_dir: &RamInode,
    old_name: &str,
    new_dir: &Arc<dyn Inode>,
    new_name: &str,
    flags: RenameFlags,
) -> Result<()> {
    super::check_name(new_name)?;
    let new_dir = RamInode::downcast(new_dir).ok_or(Error::new(Errno::EXDEV))?;
    if !Arc::ptr_eq(&old_dir.fs, &new_dir.fs) {
        return Err(Error::new(Errno::EXDEV));
    }
    let _tree = old_dir.fs.tree.lock();
    if flags.exchange {
        return exchange(old_dir, old_name, &new_dir, new_name);
    }
    let src = old_dir.child(old_name)?;
    let dst = match new_dir.child(new_name) {
        Ok(d) => Some(d),
        Err(e) if e.errno() == Errno::ENOENT => None,
        Err(e) => return Err(e),
    };
    let is_dir = src.file_type == FileType::Directory;
    if let Some(dst) = &dst {
        if flags.noreplace {
            return Err(Error::new(Errno::EEXIST));
        }
        if Arc::ptr_eq(&src, dst) {
            return Ok(());
        }
    }
    if is_dir {
        if src.is_ancestor_of(&new_dir) {
            return Err(Error::with_message(
                Errno::EINVAL,
                "moving a directory below itself",
            ));
        }
        if let Some(dst) = &dst {
            if dst.file_type != FileType::Directory {
                return Err(Error::new(Errno::ENOTDIR));
            }
            if !dst.is_empty_dir() {
                return Err(Error::new(Errno::ENOTEMPTY));
            }
        }
    } else if dst
        .as_ref()
        .is_some_and(|d| d.file_type == FileType::Directory)
    {
        return Err(Error::new(Errno::EISDIR));
    }

    let now = Timespec::now();
    let replaced = if core::ptr::eq(old_dir, Arc::as_ptr(&new_dir)) {
        let mut guard = old_dir.state.lock();
        let st = &mut *guard;
        let dir = st.dir_mut()?;
        dir.remove(old_name);
        let replaced = dir.insert(new_name, src.clone());
        if replaced
            .as_ref()
            .is_some_and(|r| r.file_type == FileType::Directory)
        {
            st.nlink = st.nlink.saturating_sub(1);
        }
        st.touch(now);
        replaced
    } else {
        // Insert first, then remove: a concurrent lookup may briefly see the
        // file under both names, but never under neither.
        let replaced = {
            let mut guard = new_dir.state.lock();
            let st = &mut *guard;
            let replaced = st.dir_mut()?.insert(new_name, src.clone());
            if is_dir {
                st.nlink = st.nlink.saturating_add(1);
            }
            if replaced
                .as_ref()
                .is_some_and(|r| r.file_type == FileType::Directory)
            {
                st.nlink = st.nlink.saturating_sub(1);
            }
            st.touch(now);
            replaced
        };
        {
            let mut guard = old_dir.state.lock();
            let st = &mut *guard;
            st.dir_mut()?.remove(old_name);
            if is_dir {
                st.nlink = st.nlink.saturating_sub(1);
            }
            st.touch(now);
        }
        if is_dir && let Body::Dir(d) = &mut src.state.lock().body {
            d.parent = Arc::downgrade(&new_dir);
        }
        replaced
    };
    src.state.lock().ctime = now;
    if let Some(r) = replaced {
        let mut st = r.state.lock();
        st.nlink = if r.file_type == FileType::Directory {
            0
        } else {
            st.nlink.saturating_sub(1)
        };
        st.ctime = now;
    }
    Ok(())
}

/// RENAME_EXCHANGE: swaps two existing names, which may be of different
/// types (rename(2)); EINVAL if either is a directory holding the other's
/// parent. The caller holds the tree lock.
fn exchange(
    old_dir: &RamInode,
    old_name: &str,
    new_dir: &Arc<RamInode>,
    new_name: &str,
) -> Result<()> {
    let a = old_dir.child(old_name)?;
    let b = new_dir.child(new_name)?;
    if Arc::ptr_eq(&a, &b) {
        return Ok(());
    }
    let (a_dir, b_dir) = (
        a.file_type == FileType::Directory,
        b.file_type == FileType::Directory,
    );
    let old_dir_arc = old_dir.this.upgrade().ok_or(Error::new(Errno::ENOENT))?;
    if (a_dir && a.is_ancestor_of(new_dir)) || (b_dir && b.is_ancestor_of(&old_dir_arc)) {
        return Err(Error::with_message(
            Errno::EINVAL,
            "exchanging a directory with something below it",
        ));
    }
    let now = Timespec::now();
    if Arc::ptr_eq(&old_dir_arc, new_dir) {
        let mut guard = old_dir.state.lock();
        let st = &mut *guard;
        let dir = st.dir_mut()?;
        dir.insert(old_name, b.clone());
        dir.insert(new_name, a.clone());
        st.touch(now);
    } else {
        // Each directory gains the other's entry; a directory moving
        // between them takes its ".." link along.
        let link_delta = |gains_dir: bool, loses_dir: bool, nlink: u32| match (gains_dir, loses_dir)
        {
            (true, false) => nlink.saturating_add(1),
            (false, true) => nlink.saturating_sub(1),
            _ => nlink,
        };
        {
            let mut guard = new_dir.state.lock();
            let st = &mut *guard;
            st.dir_mut()?.insert(new_name, a.clone());
            st.nlink = link_delta(a_dir, b_dir, st.nlink);
            st.touch(now);
        }
        {
            let mut guard = old_dir.state.lock();
            let st = &mut *guard;
            st.dir_mut()?.insert(old_name, b.clone());
            st.nlink = link_delta(b_dir, a_dir, st.nlink);
            st.touch(now);
        }
        if let Body::Dir(d) = &mut a.state.lock().body {
            d.parent = Arc::downgrade(new_dir);
        }
        if let Body::Dir(d) = &mut b.state.lock().body {
            d.parent = Arc::downgrade(&old_dir_arc);
        }
    }
    a.state.lock().ctime = now;
    b.state.lock().ctime = now;
    Ok(())
}
