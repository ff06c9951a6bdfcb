//! mount(2) and umount2(2): tmpfs/ramfs instances, file system types other
//! modules register, and bind mounts, with the per-mount flags (read-only,
//! nosuid, nodev, noexec, atime modes). Remounting and propagation changes
//! are accepted and have no effect.

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::{AT_FDCWD, resolve_at};
use crate::error::{Errno, Error, Result};
use crate::fs::{File, Inode, mount};
use crate::process;
use crate::syscall::{Context, SyscallArgs};

const MS_RDONLY: u64 = 1;
const MS_NOSUID: u64 = 2;
const MS_NODEV: u64 = 4;
const MS_NOEXEC: u64 = 8;
const MS_SYNCHRONOUS: u64 = 16;
const MS_REMOUNT: u64 = 32;
const MS_MANDLOCK: u64 = 64;
const MS_NOATIME: u64 = 1024;
const MS_NODIRATIME: u64 = 2048;
const MS_STRICTATIME: u64 = 1 << 24;
const MS_BIND: u64 = 4096;
const MS_MOVE: u64 = 8192;
const MS_PROPAGATION: u64 = (1 << 17) | (1 << 18) | (1 << 19) | (1 << 20);

const MNT_FORCE: u64 = 1;
const MNT_DETACH: u64 = 2;
const MNT_EXPIRE: u64 = 4;
const UMOUNT_NOFOLLOW: u64 = 8;

/// A NUL-terminated string argument of at most `max` bytes ("" for NULL).
fn string_arg(ctx: &Context, addr: u64, max: usize, bad: Errno) -> Result<alloc::string::String> {
    if addr == 0 {
        return Ok(alloc::string::String::new());
    }
    let bytes = ctx.read_cstring(addr, max)?;
    alloc::string::String::from_utf8(bytes).map_err(|_| Error::new(bad))
}

/// The ST_* flags of a new mount from mount(2)'s MS_* ones: the same
/// values, and relatime unless noatime or strictatime is asked for.
fn mount_flags(ms: u64) -> u32 {
    let same = MS_RDONLY
        | MS_NOSUID
        | MS_NODEV
        | MS_NOEXEC
        | MS_SYNCHRONOUS
        | MS_MANDLOCK
        | MS_NOATIME
        | MS_NODIRATIME;
    let mut flags = (ms & same) as u32;
    if ms & (MS_NOATIME | MS_STRICTATIME) == 0 {
        flags |= mount::ST_RELATIME;
    }
    flags
}

pub fn sys_mount(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let flags = args[3];
    if !ctx.process.creds().capable(crate::caps::CAP_SYS_ADMIN) {
        return Err(Error::new(Errno::EPERM));
    }
    let target = resolve_at(ctx, AT_FDCWD, args[1], true, false)?;
    if !target.is_dir() {
        return Err(Error::new(Errno::ENOTDIR));
    }
    if flags & MS_REMOUNT != 0 {
        // A tmpfs takes new size= and nr_inodes= limits; the options are
        // read only when the target is a mount's root (EINVAL otherwise).
        if flags & MS_BIND == 0 {
            let data = string_arg(ctx, args[4], 4096, Errno::EINVAL)?;
            mount::remount(&target, &data)?;
        }
        // An ext2 file system itself switches between read-only and
        // read-write (write-back and the clean state on the way to ro).
        crate::fs::ext2::remount(&target, flags & MS_RDONLY != 0)?;
        // The mount's flags (ro, nosuid, nodev, noexec, the atime ones)
        // become those given.
        mount::set_flags(&target, mount_flags(flags))?;
        return Ok(0);
    }
    if flags & MS_PROPAGATION != 0 {
        return Ok(0);
    }
    if flags & MS_MOVE != 0 {
        return Err(Error::with_message(
            Errno::EINVAL,
            "MS_MOVE is not supported",
        ));
    }
    if flags & MS_BIND != 0 {
        let source = resolve_at(ctx, AT_FDCWD, args[0], true, false)?;
        // /proc/mounts shows a bind mount with the source and type of the
        // file system it comes from.
        // It keeps the flags of the mount it comes from (changing them
        // takes a remount, as on Linux).
        let dev = source.metadata().dev;
        let (from, fstype) =
            mount::describe(dev).unwrap_or_else(|| ("rootfs".into(), "rootfs".into()));
        let flags = mount::mount_flags(dev).unwrap_or(mount::ST_RELATIME);
        mount::mount(&target, source, &from, &fstype, flags)?;
        return Ok(0);
    }
    let source = string_arg(ctx, args[0], 4096, Errno::EINVAL)?;
    let fstype = string_arg(ctx, args[2], 256, Errno::ENODEV)?;
    let data = string_arg(ctx, args[4], 4096, Errno::EINVAL)?;
    let root = if fstype == "ext2" {
        // The source is a block device path, resolved as the caller sees it.
        let bdev = {
            let fs = ctx.process.fs().lock();
            crate::block::lookup_path(&fs, &source)?
        };
        crate::fs::ext2::mount(bdev, flags & MS_RDONLY != 0, &data)?
    } else {
        mount::make_filesystem(&fstype, &source, &data)?
    };
    mount::mount(&target, root, &source, &fstype, mount_flags(flags))?;
    Ok(0)
}

pub fn sys_umount2(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    // The flags are an int; the path is looked up before the privilege
    // check (Linux's ksys_umount, path_umount).
    let flags = args[1] as u32 as u64;
    if flags & !(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let root = resolve_at(ctx, AT_FDCWD, args[0], flags & UMOUNT_NOFOLLOW == 0, false)?;
    if !ctx.process.creds().capable(crate::caps::CAP_SYS_ADMIN) {
        return Err(Error::new(Errno::EPERM));
    }
    let how = if flags & MNT_EXPIRE != 0 {
        if flags & (MNT_FORCE | MNT_DETACH) != 0 {
            return Err(Error::new(Errno::EINVAL));
        }
        mount::Umount::Expire
    } else if flags & MNT_DETACH != 0 {
        mount::Umount::Detach
    } else {
        mount::Umount::Normal
    };
    mount::umount(&root, how, &in_use)?;
    // A `mount -o loop` device (AUTOCLEAR) is unbound once unused.
    drop(root);
    crate::block::loop_dev::after_umount();
    Ok(0)
}

/// Whether a live process holds anything on device `dev`: an open file
/// (O_PATH descriptors too), its working or root directory, or a file
/// mapping. Each process's locks are taken one at a time, in level order,
/// and released before the inodes are asked for their device.
fn in_use(dev: u64) -> bool {
    let on_dev = |node: &Arc<dyn Inode>| node.metadata().dev == dev;
    process::all_processes()
        .iter()
        .filter(|p| p.exit_status().is_none())
        .any(|p| {
            let files: Vec<Arc<File>> = p.files().lock().iter().map(|(_, f)| f.clone()).collect();
            let (root, cwd) = {
                let fs = p.fs().lock();
                (fs.root().clone(), fs.cwd().clone())
            };
            files.iter().any(|f| on_dev(f.node()))
                || on_dev(&root)
                || on_dev(&cwd)
                || p.vm()
                    .areas()
                    .iter()
                    .any(|a| a.file.as_ref().is_some_and(|b| on_dev(&b.inode)))
        })
}
