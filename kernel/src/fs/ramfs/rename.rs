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
