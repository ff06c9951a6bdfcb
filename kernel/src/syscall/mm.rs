//! Memory syscalls: brk, mmap, munmap, mprotect, madvise.

use frame::mm::{PAGE_SIZE, USER_SPACE_END};

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::fs::MmapSource;
use crate::mm::vmar::{FileBacking, Perms, SharedPages, ShmBacking, Vma};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (9, "mmap", sys_mmap),
    (10, "mprotect", sys_mprotect),
    (11, "munmap", sys_munmap),
    (12, "brk", sys_brk),
    (28, "madvise", sys_madvise),
];

const MAP_SHARED: u64 = 0x01;
const MAP_PRIVATE: u64 = 0x02;
const MAP_SHARED_VALIDATE: u64 = 0x03;
const MAP_TYPE: u64 = 0x0f;
const MAP_FIXED: u64 = 0x10;
const MAP_ANONYMOUS: u64 = 0x20;
const MAP_FIXED_NOREPLACE: u64 = 0x10_0000;
/// Flags accepted and ignored (hints or no-ops for us).
const MAP_IGNORED: u64 = 0x0100 /* GROWSDOWN */ | 0x0800 /* DENYWRITE */ | 0x1000 /* EXECUTABLE */
    | 0x2000 /* LOCKED */ | 0x4000 /* NORESERVE */ | 0x8000 /* POPULATE */ | 0x1_0000 /* NONBLOCK */
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
        && flags & !(MAP_TYPE | MAP_FIXED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_IGNORED) != 0
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
    let file = if flags & MAP_ANONYMOUS != 0 {
        None
    } else {
        let source = ctx.process.files().lock().mmap_source(fd, shared && perms.write)?;
        match source {
            MmapSource::File { inode, .. } => {
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
                Some(FileBacking { inode, offset, len: len as usize })
            }
            MmapSource::Anonymous { writable } => {
                // /dev/zero: anonymous memory. As on Linux, a shared mapping
                // of a descriptor not open for writing can never be written
                // by anyone, so it is private.
                shared = shared && writable;
                name = if shared { "/dev/zero (deleted)" } else { "/dev/zero" };
                None
            }
        }
    };
    // Shared anonymous memory has its own pages; a shared file mapping maps
    // the file's.
    let shm = (shared && file.is_none()).then(|| ShmBacking { pages: SharedPages::new(), offset: 0, attach: None, may_write: true });
    let vma = Vma { start: 0, end: 0, perms, shared, file, name, shm };
    let start = ctx.process.vm().map_area(
        addr as usize,
        len as usize,
        fixed,
        flags & MAP_FIXED_NOREPLACE != 0,
        vma,
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
    Ok(ctx.process.vm().brk(a[0] as usize) as isize)
}

const MADV_DONTNEED: u64 = 4;

fn sys_madvise(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (start, end) = page_range(a[0], a[1])?;
    let advice = a[2];
    // Known advice values (madvise(2)); all but DONTNEED are hints.
    let known = matches!(advice, 0..=4 | 8..=21 | 100..=101);
    if !known {
        return Err(Error::new(Errno::EINVAL));
    }
    if start == end {
        return Ok(0);
    }
    if advice == MADV_DONTNEED {
        ctx.process.vm().discard(start, end)?;
    }
    Ok(0)
}
