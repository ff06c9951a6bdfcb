//! Memory syscalls: brk, mmap, munmap, mprotect, madvise, mremap, msync,
//! mincore, and the mlock family.

use frame::mm::{PAGE_SIZE, USER_SPACE_END};

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::fs::MmapSource;
use crate::fs::memfd::{F_SEAL_FUTURE_WRITE, F_SEAL_WRITE};
use crate::mm::vmar::{FileBacking, Perms, SharedPages, ShmBacking, Vma};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (9, "mmap", sys_mmap),
    (10, "mprotect", sys_mprotect),
    (11, "munmap", sys_munmap),
    (12, "brk", sys_brk),
    (25, "mremap", sys_mremap),
    (26, "msync", sys_msync),
    (27, "mincore", sys_mincore),
    (28, "madvise", sys_madvise),
    (149, "mlock", sys_mlock),
    (150, "munlock", sys_munlock),
    (151, "mlockall", sys_mlockall),
    (152, "munlockall", sys_munlockall),
    (325, "mlock2", sys_mlock2),
];

const MAP_SHARED: u64 = 0x01;
const MAP_PRIVATE: u64 = 0x02;
const MAP_SHARED_VALIDATE: u64 = 0x03;
const MAP_TYPE: u64 = 0x0f;
const MAP_FIXED: u64 = 0x10;
const MAP_ANONYMOUS: u64 = 0x20;
const MAP_LOCKED: u64 = 0x2000;
const MAP_NORESERVE: u64 = 0x4000;
const MAP_FIXED_NOREPLACE: u64 = 0x10_0000;
/// Flags accepted and ignored (hints or no-ops for us).
const MAP_IGNORED: u64 = 0x0100 /* GROWSDOWN */ | 0x0800 /* DENYWRITE */ | 0x1000 /* EXECUTABLE */
    | MAP_NORESERVE | 0x8000 /* POPULATE */ | 0x1_0000 /* NONBLOCK */
    | 0x2_0000 /* STACK */ | 0x4_0000 /* HUGETLB */ | 0x8_0000 /* SYNC */;
const PROT_MASK: u64 = 0x7;

fn page_range(addr: u64, len: u64) -> Result<(usize, usize)> {
    let addr = addr as usize;
    if addr % PAGE_SIZE != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let len = (len as usize).checked_add(PAGE_SIZE - 1).ok_or(Error::new(Errno::EINVAL))? & !(PAGE_SIZE - 1);
    let end = addr.checked_add(len).ok_or(Error::new(Errno::EINVAL))?;
    Ok((addr, end))
}

fn sys_mmap(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (addr, len, prot, flags, fd, offset) = (a[0], a[1], a[2], a[3], a[4] as i32, a[5]);
    let map_type = flags & MAP_TYPE;
    if len == 0 || offset % PAGE_SIZE as u64 != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if !matches!(map_type, MAP_SHARED | MAP_PRIVATE | MAP_SHARED_VALIDATE) {
        return Err(Error::new(Errno::EINVAL));
    }
    if map_type == MAP_SHARED_VALIDATE
        && flags & !(MAP_TYPE | MAP_FIXED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_LOCKED | MAP_IGNORED) != 0
    {
        return Err(Error::new(Errno::EOPNOTSUPP));
    }
    if prot & !PROT_MASK != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0;
    if fixed && addr % PAGE_SIZE as u64 != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if len > USER_SPACE_END as u64 {
        return Err(Error::new(Errno::ENOMEM));
    }
    let mut shared = map_type != MAP_PRIVATE;
    let perms = Perms::from_prot(prot);
    let mut name = "";
    // A shared mapping of a descriptor not open for writing can never be
    // made writable (mprotect: EACCES).
    let mut may_write = true;
    let file = if flags & MAP_ANONYMOUS != 0 {
        None
    } else {
        let source = ctx.process.files().lock().mmap_source(fd, shared && perms.write)?;
        match source {
            MmapSource::File { inode, origin, writable } => {
                may_write = !shared || writable;
                if shared && perms.write && inode.seals().is_ok_and(|s| s & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE) != 0) {
                    return Err(Error::new(Errno::EPERM));
                }
                if shared && !inode.has_shared_pages() {
                    if perms.write {
                        // Writing back through a shared mapping of a file
                        // kept outside memory needs a page cache, which
                        // comes with the storage issue.
                        return Err(Error::with_message(Errno::ENODEV, "shared writable mapping of this file"));
                    }
                    // Read-only, it behaves like a private one.
                    shared = false;
                }
                let offset = usize::try_from(offset).map_err(|_| Error::new(Errno::EINVAL))?;
                let path = origin.and_then(|(dir, name)| {
                    let fs = ctx.process.fs().lock().clone();
                    let mut p = crate::fs::path_of(&fs, &dir).ok()?;
                    if !p.ends_with('/') {
                        p.push('/');
                    }
                    p.push_str(&name);
                    Some(alloc::sync::Arc::from(p.as_str()))
                });
                // mmap is a read of the file (Linux's file_accessed).
                if let Ok(f) = ctx.process.files().lock().get(fd) {
                    f.accessed();
                }
                let writer = if shared && writable { inode.shared_write_token() } else { None };
                Some(FileBacking { inode, offset, len: len as usize, path, writer })
            }
            MmapSource::Anonymous { writable } => {
                // /dev/zero: anonymous memory. As on Linux, a shared mapping
                // of a descriptor not open for writing can never be written
                // by anyone, so it is private.
                may_write = !shared || writable;
                shared = shared && writable;
                name = if shared { "/dev/zero (deleted)" } else { "/dev/zero" };
                None
            }
        }
    };
    // Shared anonymous memory has its own pages; a shared file mapping maps
    // the file's.
    let shm = (shared && file.is_none()).then(|| ShmBacking { pages: SharedPages::new(), offset: 0, attach: None, may_write: true });
    // MAP_LOCKED: locked like mlock(2) (EPERM if RLIMIT_MEMLOCK is 0).
    let locked = flags & MAP_LOCKED != 0;
    if locked {
        memlock_limit(ctx)?;
    }
    let noreserve = flags & MAP_NORESERVE != 0;
    let vma = Vma { start: 0, end: 0, perms, shared, file, name, shm, locked, may_write, account: false, noreserve };
    let limits = crate::mm::MapLimits::of(ctx.process);
    let start = ctx.process.vm().map_area(
        addr as usize,
        len as usize,
        fixed,
        flags & MAP_FIXED_NOREPLACE != 0,
        vma,
        &limits,
    )?;
    Ok(start as isize)
}

fn sys_munmap(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[1] == 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let (start, end) = page_range(a[0], a[1])?;
    if end > USER_SPACE_END {
        return Err(Error::new(Errno::EINVAL));
    }
    ctx.process.vm().unmap_range(start, end);
    Ok(0)
}

fn sys_mprotect(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (start, end) = page_range(a[0], a[1])?;
    // PROT_GROWSDOWN/GROWSUP are accepted but ignored.
    if a[2] & !(PROT_MASK | 0x0100_0000 | 0x0200_0000) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if start == end {
        return Ok(0);
    }
    if end > USER_SPACE_END {
        return Err(Error::new(Errno::ENOMEM));
    }
    ctx.process.vm().protect(start, end, Perms::from_prot(a[2]))?;
    Ok(0)
}

fn sys_brk(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    Ok(ctx.process.vm().brk(a[0] as usize, &crate::mm::MapLimits::of(ctx.process)) as isize)
}

const MADV_DONTNEED: u64 = 4;
const MADV_FREE: u64 = 8;
const MADV_REMOVE: u64 = 9;
const MADV_MERGEABLE: u64 = 12;
const MADV_UNMERGEABLE: u64 = 13;
const MADV_WIPEONFORK: u64 = 18;
const MADV_KEEPONFORK: u64 = 19;
const MADV_DONTNEED_LOCKED: u64 = 24;

/// madvise(2), as Linux checks it: unknown advice is EINVAL, and so are
/// MADV_MERGEABLE and MADV_UNMERGEABLE (there is no KSM); then each area
/// in the range must accept the advice (EINVAL: DONTNEED or FREE on
/// locked memory, FREE or WIPEONFORK on other than private anonymous
/// memory, REMOVE on locked or private anonymous memory; EACCES: REMOVE
/// on memory that is not shared and writable), in address order, the
/// advice acting on each area before the next is checked; a range with
/// unmapped pages is ENOMEM at the end. DONTNEED and REMOVE act; the
/// rest are hints.
fn sys_madvise(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (start, end) = page_range(a[0], a[1])?;
    let advice = a[2];
    let known = matches!(advice, 0..=4 | 8..=21 | MADV_DONTNEED_LOCKED | 100..=101)
        && !matches!(advice, MADV_MERGEABLE | MADV_UNMERGEABLE);
    if !known {
        return Err(Error::new(Errno::EINVAL));
    }
    if start == end {
        return Ok(0);
    }
    let vm = ctx.process.vm();
    let (areas, covered) = vm.areas_in(start, end);
    for v in &areas {
        let private_anon = !v.shared && v.file.is_none();
        let bad = match advice {
            MADV_DONTNEED | MADV_FREE if v.locked => Some(Errno::EINVAL),
            MADV_FREE | MADV_WIPEONFORK | MADV_KEEPONFORK if !private_anon => Some(Errno::EINVAL),
            MADV_REMOVE if v.locked || private_anon => Some(Errno::EINVAL),
            MADV_REMOVE if !(v.shared && v.may_write) => Some(Errno::EACCES),
            _ => None,
        };
        if let Some(errno) = bad {
            return Err(Error::new(errno));
        }
        let (s, e) = (v.start.max(start), v.end.min(end));
        match advice {
            MADV_DONTNEED | MADV_DONTNEED_LOCKED => vm.discard(s, e),
            MADV_REMOVE => vm.remove_pages(s, e)?,
            _ => {}
        }
    }
    if !covered {
        return Err(Error::new(Errno::ENOMEM));
    }
    Ok(0)
}

const MREMAP_MAYMOVE: u64 = 1;
const MREMAP_FIXED: u64 = 2;
const MREMAP_DONTUNMAP: u64 = 4;

/// A length rounded up to whole pages; None if that overflows.
fn page_len(len: u64) -> Option<usize> {
    usize::try_from(len).ok()?.checked_add(PAGE_SIZE - 1).map(|l| l & !(PAGE_SIZE - 1))
}

/// mremap(2), checked in Linux's order: flags (EINVAL: unknown,
/// MREMAP_FIXED or MREMAP_DONTUNMAP without MREMAP_MAYMOVE, DONTUNMAP
/// with a size change), alignment, lengths (EINVAL for a zero,
/// overflowing or beyond-user-space new length), a fixed destination (EINVAL if unaligned,
/// beyond user space or overlapping the old range); then the area itself
/// (EFAULT, ENOMEM: see `Vmar::remap`).
fn sys_mremap(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (old, flags, new_addr) = (a[0] as usize, a[3], a[4] as usize);
    let einval = || Error::new(Errno::EINVAL);
    if flags & !(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP) != 0 {
        return Err(einval());
    }
    let may_move = flags & MREMAP_MAYMOVE != 0;
    let dontunmap = flags & MREMAP_DONTUNMAP != 0;
    if (flags & MREMAP_FIXED != 0 || dontunmap) && !may_move {
        return Err(einval());
    }
    if dontunmap && a[1] != a[2] {
        return Err(einval());
    }
    if old % PAGE_SIZE != 0 {
        return Err(einval());
    }
    let old_len = page_len(a[1]).ok_or_else(einval)?;
    let new_len = page_len(a[2]).filter(|l| *l > 0).ok_or_else(einval)?;
    // Linux 6.x: a new length beyond user space is EINVAL before the old
    // range is looked at.
    if new_len > USER_SPACE_END {
        return Err(einval());
    }
    let fixed = if flags & MREMAP_FIXED != 0 {
        if new_addr % PAGE_SIZE != 0 || new_len > USER_SPACE_END || new_addr > USER_SPACE_END - new_len {
            return Err(einval());
        }
        if new_addr < old.saturating_add(old_len) && old < new_addr + new_len {
            return Err(einval());
        }
        Some(new_addr)
    } else {
        None
    };
    if old.checked_add(old_len).is_none_or(|e| e > USER_SPACE_END) {
        return Err(einval());
    }
    let limits = crate::mm::MapLimits::of(ctx.process);
    let start = ctx.process.vm().remap(old, old_len, new_len, may_move, fixed, dontunmap, &limits)?;
    Ok(start as isize)
}

const MS_ASYNC: u64 = 1;
const MS_INVALIDATE: u64 = 2;
const MS_SYNC: u64 = 4;

/// msync(2): EINVAL for unknown flags, MS_SYNC with MS_ASYNC or an
/// unaligned address; ENOMEM for a range that wraps or has unmapped
/// pages. MS_SYNC writes the shared file pages back and waits.
fn sys_msync(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (start, flags) = (a[0] as usize, a[2]);
    if flags & !(MS_ASYNC | MS_INVALIDATE | MS_SYNC) != 0 || start % PAGE_SIZE != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if flags & MS_ASYNC != 0 && flags & MS_SYNC != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let end = page_len(a[1]).and_then(|l| start.checked_add(l)).ok_or(Error::new(Errno::ENOMEM))?;
    if end == start {
        return Ok(0);
    }
    let files = ctx.process.vm().sync_range(start, end, flags & MS_INVALIDATE != 0)?;
    // MS_ASYNC needs nothing: write-back already finds changed mapped
    // pages. MS_SYNC writes them and waits, as fsync.
    if flags & MS_SYNC != 0 {
        for f in files {
            f.sync(true)?;
        }
    }
    Ok(0)
}

/// mincore(2): EINVAL for an unaligned address, ENOMEM for a range
/// beyond user space or with unmapped pages, EFAULT for the vector.
fn sys_mincore(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (start, vec) = (a[0] as usize, a[2]);
    if start % PAGE_SIZE != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let end = page_len(a[1])
        .and_then(|l| start.checked_add(l))
        .filter(|e| *e <= USER_SPACE_END)
        .ok_or(Error::new(Errno::ENOMEM))?;
    if end == start {
        return Ok(0);
    }
    let bytes = ctx.process.vm().residency(start, end)?;
    ctx.write_bytes(vec, &bytes)?;
    Ok(0)
}

/// RLIMIT_MEMLOCK for the caller: None (no limit) with CAP_IPC_LOCK;
/// EPERM if it is 0.
fn memlock_limit(ctx: &Context) -> Result<Option<usize>> {
    if ctx.process.creds().capable(crate::caps::CAP_IPC_LOCK) {
        return Ok(None);
    }
    let cur = ctx.process.rlimits.lock().0[crate::process::rlimit::RLIMIT_MEMLOCK].cur;
    if cur == 0 {
        return Err(Error::new(Errno::EPERM));
    }
    Ok(usize::try_from(cur).ok().filter(|c| *c != usize::MAX))
}

/// The page range mlock(2) and munlock(2) act on: the address rounded
/// down, the length up; EINVAL if that wraps.
fn lock_range(addr: u64, len: u64) -> Result<(usize, usize)> {
    let addr = addr as usize;
    let start = addr & !(PAGE_SIZE - 1);
    let end = (len as usize)
        .checked_add(addr - start)
        .and_then(|l| page_len(l as u64))
        .and_then(|l| start.checked_add(l))
        .ok_or(Error::new(Errno::EINVAL))?;
    Ok((start, end))
}

fn mlock(ctx: &Context, addr: u64, len: u64, onfault: bool) -> Result<isize> {
    let (start, end) = lock_range(addr, len)?;
    let limit = memlock_limit(ctx)?;
    if start == end {
        return Ok(0);
    }
    ctx.process.vm().set_locked(start, end, true, onfault, limit)?;
    Ok(0)
}

fn sys_mlock(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    mlock(ctx, a[0], a[1], false)
}

const MLOCK_ONFAULT: u64 = 1;

fn sys_mlock2(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[2] & !MLOCK_ONFAULT != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    mlock(ctx, a[0], a[1], a[2] & MLOCK_ONFAULT != 0)
}

fn sys_munlock(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (start, end) = lock_range(a[0], a[1])?;
    if start == end {
        return Ok(0);
    }
    ctx.process.vm().set_locked(start, end, false, false, None)?;
    Ok(0)
}

const MCL_CURRENT: u64 = 1;
const MCL_FUTURE: u64 = 2;
const MCL_ONFAULT: u64 = 4;

/// mlockall(2): EINVAL for unknown flags or none of MCL_CURRENT and
/// MCL_FUTURE; EPERM / ENOMEM for RLIMIT_MEMLOCK as mlock.
fn sys_mlockall(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let flags = a[0];
    if flags & !(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0 || flags & (MCL_CURRENT | MCL_FUTURE) == 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let limit = memlock_limit(ctx)?;
    ctx.process.vm().set_all_locked(
        true,
        flags & MCL_CURRENT != 0,
        flags & MCL_FUTURE != 0,
        flags & MCL_ONFAULT != 0,
        limit,
    )?;
    Ok(0)
}

fn sys_munlockall(ctx: &mut Context, _a: &SyscallArgs) -> Result<isize> {
    ctx.process.vm().set_all_locked(false, false, false, false, None)?;
    Ok(0)
}
