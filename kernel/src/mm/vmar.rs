//! A process's virtual memory: its areas (VMAs) on top of a frame
//! `VmSpace`, demand paging, copy-on-write, and fault-tolerant user copies.
//!
//! Pages are mapped lazily on the first fault. A private page that may be
//! shared with another address space (after fork) is mapped read-only; the
//! first write copies it unless this mapping holds the only reference.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use frame::mm::UserFault;
use frame::mm::{PageFlags, UFrame, VmSpace, PAGE_SIZE, USER_SPACE_END};
use frame::sync::{level, Mutex};

use super::MapLimits;
use crate::error::{Errno, Error, Result};
use crate::fs::Inode;

/// Open [`NoFaults`] sections (one CPU, and the kernel is not preempted:
/// a section holds a spin lock, so no other task runs until it closes).
static NO_FAULTS: AtomicUsize = AtomicUsize::new(0);

/// A section in which user copies do not resolve page faults (Linux's
/// pagefault_disable): a copy that meets a page that is not mapped, or a
/// write to a read-only one, fails with `EFAULT` instead of taking the
/// address space's locks and sleeping. A caller that holds a spin lock
/// (the IP stack's) copies this way, and on `EFAULT` lets go and copies
/// again normally, which resolves the fault or reports the real error.
pub struct NoFaults(());

impl NoFaults {
    pub fn enter() -> NoFaults {
        NO_FAULTS.fetch_add(1, Ordering::Relaxed);
        NoFaults(())
    }
}

impl Drop for NoFaults {
    fn drop(&mut self) {
        NO_FAULTS.fetch_sub(1, Ordering::Relaxed);
    }
}

fn faults_disabled() -> bool {
    NO_FAULTS.load(Ordering::Relaxed) != 0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Perms {
    pub read: bool,
    pub write: bool,
    pub exec: bool,
}

impl Perms {
    pub const RW: Perms = Perms { read: true, write: true, exec: false };

    /// From PROT_READ (1) | PROT_WRITE (2) | PROT_EXEC (4).
    pub fn from_prot(prot: u64) -> Perms {
        Perms { read: prot & 1 != 0, write: prot & 2 != 0, exec: prot & 4 != 0 }
    }
}

/// Where a mapping's initial contents come from.
#[derive(Clone)]
pub struct FileBacking {
    pub inode: Arc<dyn Inode>,
    /// File offset of the area's first byte.
    pub offset: usize,
    /// Bytes of the area (from its start) that come from the file; the rest
    /// reads as zeros (an ELF segment's .bss).
    pub len: usize,
    /// The file's path when it was mapped (/proc/pid/maps).
    pub path: Option<Arc<str>>,
    /// A shared mapping through a writable descriptor holds the file's
    /// [`crate::fs::Inode::shared_write_token`].
    pub writer: Option<Arc<dyn core::any::Any + Send + Sync>>,
}

#[derive(Clone)]
pub struct Vma {
    pub start: usize,
    pub end: usize,
    pub perms: Perms,
    pub shared: bool,
    pub file: Option<FileBacking>,
    /// Name for /proc/pid/maps ("[heap]", "[stack]").
    pub name: &'static str,
    /// Shared anonymous memory (MAP_SHARED|MAP_ANONYMOUS): the pages live
    /// in an object every sharer (fork children included) faults from.
    pub shm: Option<ShmBacking>,
    /// mlock(2)ed: its pages were faulted in and count in VmLck (nothing
    /// is ever swapped, so that is all locking means here).
    pub locked: bool,
    /// Whether mprotect may make it writable (Linux's VM_MAYWRITE): not
    /// for a MAP_SHARED mapping of a descriptor not open for writing.
    pub may_write: bool,
    /// Charged to the commit (Linux's VM_ACCOUNT): set by the address
    /// space itself (see [`super::commit`]); callers pass false.
    pub account: bool,
    /// MAP_NORESERVE: not charged (outside vm.overcommit_memory=2).
    pub noreserve: bool,
}

/// Pages of a shared anonymous mapping, by page index, allocated on first
/// touch by whichever process touches them first.
pub struct SharedPages {
    pages: frame::sync::SpinLock<BTreeMap<usize, UFrame>, 34>,
}

impl SharedPages {
    pub fn new() -> Arc<SharedPages> {
        Arc::new(SharedPages { pages: frame::sync::SpinLock::new(BTreeMap::new()) })
    }

    /// A set holding `frames` at indexes 0, 1, ... (the vDSO's pages).
    pub fn from_frames(frames: Vec<UFrame>) -> Arc<SharedPages> {
        Arc::new(SharedPages { pages: frame::sync::SpinLock::new(frames.into_iter().enumerate().collect()) })
    }

    /// Pages allocated so far.
    pub fn resident(&self) -> usize {
        self.pages.lock().len()
    }

    /// Frees every page (a System V segment destroyed at its last detach;
    /// mappings still holding a page keep that frame alive).
    pub fn clear(&self) {
        let old = core::mem::take(&mut *self.pages.lock());
        drop(old);
    }

    fn get_or_alloc(&self, index: usize) -> Result<UFrame> {
        let mut pages = self.pages.lock();
        if let Some(f) = pages.get(&index) {
            return Ok(f.clone());
        }
        let f = crate::fallible::frame()?;
        pages.insert(index, f.clone());
        Ok(f)
    }

    fn contains(&self, index: usize) -> bool {
        self.pages.lock().contains_key(&index)
    }

    /// Zeroes pages `first..end` (madvise MADV_REMOVE). They are cleared
    /// in place rather than freed: every sharer maps the same frames, and
    /// without reverse mappings they could not all be unmapped.
    fn zero(&self, first: usize, end: usize) -> Result<()> {
        let frames: Vec<UFrame> = self.pages.lock().range(first..end).map(|(_, f)| f.clone()).collect();
        let zeros = [0u8; PAGE_SIZE];
        for f in frames {
            f.write_bytes(0, &zeros)?;
        }
        Ok(())
    }
}

#[derive(Clone)]
pub struct ShmBacking {
    pub pages: Arc<SharedPages>,
    /// Byte offset in `pages` of the area's first byte.
    pub offset: usize,
    /// A System V shared memory segment's attachment (shmat): each area
    /// holds its own, so the segment's shm_nattch counts the areas mapping
    /// it. Copies of an area made to look at it share the attachment; a
    /// new area (a split, a fork) takes a new one.
    pub attach: Option<Arc<crate::ipc::shm::Attachment>>,
    /// Whether mprotect may make the area writable (false for a segment
    /// attached with SHM_RDONLY: EACCES, as for a read-only file).
    pub may_write: bool,
}

impl ShmBacking {
    /// The backing of a new area made from this one (split or fork).
    fn duplicate(&self) -> ShmBacking {
        ShmBacking {
            pages: self.pages.clone(),
            offset: self.offset,
            attach: self.attach.as_ref().map(|a| a.duplicate()),
            may_write: self.may_write,
        }
    }
}

impl Vma {
    fn split_at(&mut self, addr: usize) -> Vma {
        let mut upper = self.clone();
        upper.start = addr;
        if let Some(f) = upper.file.as_mut() {
            let delta = addr - self.start;
            f.offset += delta;
            f.len = f.len.saturating_sub(delta);
        }
        if let Some(f) = self.file.as_mut() {
            f.len = f.len.min(addr - self.start);
        }
        if let Some(m) = upper.shm.as_mut() {
            *m = m.duplicate();
            m.offset += addr - self.start;
        }
        self.end = addr;
        upper
    }
}

pub const STACK_TOP: usize = 0x7fff_ffff_e000;
pub const STACK_SIZE: usize = 8 * 1024 * 1024;
/// Address space kept free for the main stack; RLIMIT_STACK decides how
/// much of it the stack may grow into.
pub const STACK_RESERVE: usize = 1 << 30;
/// The "[stack]" area execve creates (Linux starts with 128 KiB too); it
/// grows down on faults.
pub const STACK_INITIAL: usize = 128 * 1024;
/// The mmap base without ASLR.
pub const MMAP_TOP: usize = 0x7f00_0000_0000;
const MMAP_BOTTOM: usize = 0x1000_0000;
/// How far brk may grow above its start.
const BRK_MAX: usize = 1 << 30;

struct State {
    areas: BTreeMap<usize, Vma>,
    /// Pages of PROT_NONE areas: x86 cannot map a page "present but
    /// inaccessible", so their frames wait here until access is restored.
    parked: BTreeMap<usize, (UFrame, PageFlags)>,
    brk_start: usize,
    brk: usize,
    /// Where execve put the argument and environment strings.
    args: (usize, usize),
    env: (usize, usize),
    /// The auxiliary vector execve gave the program (/proc/pid/auxv).
    auxv: Vec<u64>,
    /// Where mmap starts looking for free room, top-down (Linux's
    /// mmap_base: randomized by execve under ASLR).
    mmap_top: usize,
}

pub struct Vmar {
    space: VmSpace,
    state: Mutex<State, { level::VMAR }>,
    /// RLIMIT_STACK: how far below STACK_TOP the "[stack]" area may be
    /// touched; checked at fault time, so setrlimit applies at once.
    stack_limit: AtomicUsize,
    /// Resident pages (mapped, or parked under PROT_NONE) and their peak
    /// (VmRSS, VmHWM, ru_maxrss).
    rss_pages: AtomicUsize,
    hiwater_pages: AtomicUsize,
    /// mlockall(MCL_FUTURE): new areas are locked (with MCL_ONFAULT, not
    /// populated).
    lock_future: AtomicBool,
    lock_onfault: AtomicBool,
    /// membarrier(2) registrations of this address space (the
    /// MEMBARRIER_CMD_REGISTER_* bits): kept by fork, reset by execve.
    pub membarrier: core::sync::atomic::AtomicU32,
    /// The program's file may not be written while this address space
    /// runs it (set by execve, kept by fork).
    exe_deny_write: frame::sync::Once<crate::fs::DenyWrite>,
    /// Pages of the areas charged to the commit (VM_ACCOUNT), as last
    /// settled with the global total (commit.rs); given back on drop.
    committed: AtomicUsize,
    /// The shared address space of exited processes (`Vmar::placeholder`):
    /// no area may be added, so nothing is ever mapped in it.
    sealed: bool,
}

/// The one sealed placeholder, made at the first exit.
static PLACEHOLDER: frame::sync::SpinLock<Option<Arc<Vmar>>> = frame::sync::SpinLock::new(None);

impl Drop for Vmar {
    fn drop(&mut self) {
        super::commit::settle(*self.committed.get_mut(), 0);
        super::oom::address_space_released();
    }
}

fn page_flags(perms: Perms, writable_now: bool) -> PageFlags {
    PageFlags { write: perms.write && writable_now, exec: perms.exec, avail: 0 }
}

fn page_down(v: usize) -> usize {
    v & !(PAGE_SIZE - 1)
}

fn page_up(v: usize) -> Option<usize> {
    v.checked_add(PAGE_SIZE - 1).map(page_down)
}

impl Vmar {
    pub fn new() -> Result<Vmar> {
        Vmar::build(false)
    }

    fn build(sealed: bool) -> Result<Vmar> {
        Ok(Vmar {
            space: VmSpace::new()?,
            state: Mutex::new(State {
                areas: BTreeMap::new(),
                parked: BTreeMap::new(),
                brk_start: 0,
                brk: 0,
                args: (0, 0),
                env: (0, 0),
                auxv: Vec::new(),
                mmap_top: MMAP_TOP,
            }),
            stack_limit: AtomicUsize::new(STACK_SIZE),
            rss_pages: AtomicUsize::new(0),
            hiwater_pages: AtomicUsize::new(0),
            lock_future: AtomicBool::new(false),
            lock_onfault: AtomicBool::new(false),
            membarrier: core::sync::atomic::AtomicU32::new(0),
            exe_deny_write: frame::sync::Once::new(),
            committed: AtomicUsize::new(0),
            sealed,
        })
    }

    /// The empty address space an exiting process keeps until it is
    /// reaped: one for all of them, made once, sealed (no area can be
    /// added: a thread of the process still in mmap or brk when exit
    /// swaps it in gets ENOMEM, and the space stays empty), so exit
    /// allocates no page table. Errors only if the first one cannot be
    /// made.
    pub fn placeholder() -> Result<Arc<Vmar>> {
        let mut slot = PLACEHOLDER.lock();
        if let Some(p) = slot.as_ref() {
            return Ok(p.clone());
        }
        let p = Arc::new(Vmar::build(true)?);
        *slot = Some(p.clone());
        Ok(p)
    }

    /// Whether this is the exited processes' placeholder.
    pub fn is_sealed(&self) -> bool {
        self.sealed
    }

    /// Pages charged to the commit.
    pub fn committed_pages(&self) -> usize {
        self.committed.load(Ordering::Relaxed)
    }

    /// Settles the charge with the areas as they are now (called under
    /// the state lock after every change of the areas).
    fn recharge(&self, st: &State) {
        let now = st.areas.values().filter(|v| v.account).map(|v| (v.end - v.start) / PAGE_SIZE).sum();
        let old = self.committed.swap(now, Ordering::Relaxed);
        super::commit::settle(old, now);
    }

    /// Holds `deny` (the program file's) while this address space lives.
    pub fn set_exe_deny_write(&self, deny: crate::fs::DenyWrite) {
        self.exe_deny_write.call_once(|| deny);
    }

    /// Resident pages now.
    pub fn rss_pages(&self) -> usize {
        self.rss_pages.load(Ordering::Relaxed)
    }

    /// The most pages ever resident at once.
    pub fn hiwater_pages(&self) -> usize {
        self.hiwater_pages.load(Ordering::Relaxed)
    }

    /// Maps a page where none was (a fault): one more resident page.
    fn map_new(&self, va: usize, frame: UFrame, flags: PageFlags) -> Result<()> {
        if self.space.map(va, frame, flags)?.is_none() {
            let rss = self.rss_pages.fetch_add(1, Ordering::Relaxed) + 1;
            self.hiwater_pages.fetch_max(rss, Ordering::Relaxed);
        }
        Ok(())
    }

    /// One resident page fewer (unmapped, or a parked page dropped).
    fn page_gone(&self) {
        let _ = self.rss_pages.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n.saturating_sub(1)));
    }

    /// Unmaps the page at `va`, if mapped.
    fn unmap_page(&self, va: usize) {
        if self.space.unmap(va).is_some() {
            self.page_gone();
        }
    }

    pub fn space(&self) -> &VmSpace {
        &self.space
    }

    /// Adds an area; the range must be free and page-aligned.
    pub fn add_area(&self, vma: Vma) -> Result<()> {
        if self.sealed {
            return Err(Error::new(Errno::ENOMEM));
        }
        let mut st = self.state.lock();
        if vma.start % PAGE_SIZE != 0 || vma.end % PAGE_SIZE != 0 || vma.start >= vma.end || vma.end > USER_SPACE_END {
            return Err(Error::new(Errno::EINVAL));
        }
        if overlaps(&st.areas, vma.start, vma.end) {
            return Err(Error::new(Errno::ENOMEM));
        }
        let mut vma = vma;
        vma.account = super::commit::accountable(vma.shared, vma.perms.write, vma.noreserve);
        st.areas.insert(vma.start, vma);
        self.recharge(&st);
        Ok(())
    }

    /// Sets up the program break right after the highest loaded segment.
    pub fn init_brk(&self, start: usize) {
        let mut st = self.state.lock();
        st.brk_start = start;
        st.brk = start;
    }

    /// Resolves a fault at `addr`. A real access error is `Err(EFAULT)` when
    /// no area covers `addr` (SEGV_MAPERR) and `Err(EACCES)` when the area's
    /// protection forbids the access (SEGV_ACCERR); `Err(EIO)` is SIGBUS.
    /// A resolved fault counts as a minor fault of the calling thread
    /// (getrusage(2) ru_minflt), as Linux counts the faults of user accesses
    /// and of the kernel's copies alike.
    pub fn handle_page_fault(&self, addr: usize, write: bool, exec: bool) -> Result<()> {
        self.resolve_fault(addr, write, exec).inspect_err(|e| {
            if e.errno() == Errno::ENOMEM {
                // No frame for a user page: the OOM killer runs once the
                // thread is back in its user loop, where it holds no lock.
                super::oom::note_allocation_failure();
            }
        })?;
        crate::process::count_minor_fault();
        Ok(())
    }

    /// The area holding `addr`; an address just below the "[stack]" area
    /// (within RLIMIT_STACK of its top, with nothing mapped in between)
    /// grows the stack down to it, as Linux's VM_GROWSDOWN stack does.
    fn find_or_grow_stack(&self, addr: usize) -> Option<Vma> {
        let mut st = self.state.lock();
        if let Some(v) = find(&st.areas, addr) {
            return Some(v.clone());
        }
        let (&start, above) = st.areas.range(addr..).next()?;
        let new_start = page_down(addr);
        if above.name != "[stack]" || above.end - new_start > self.stack_limit() {
            return None;
        }
        if overlaps(&st.areas, new_start, start) {
            return None;
        }
        // Growth is charged like any mapping (Linux's acct_stack_growth):
        // refused, the access is a SIGSEGV.
        if above.account && super::commit::may_commit((start - new_start) / PAGE_SIZE, self.committed_pages(), true).is_err() {
            return None;
        }
        let mut stack = st.areas.remove(&start)?;
        stack.start = new_start;
        st.areas.insert(new_start, stack.clone());
        self.recharge(&st);
        Some(stack)
    }

    fn resolve_fault(&self, addr: usize, write: bool, exec: bool) -> Result<()> {
        // Copy the area out: reading file contents below takes inode locks,
        // which rank below this address space's lock.
        let vma = self.find_or_grow_stack(addr).ok_or(Error::new(Errno::EFAULT))?;
        if (write && !vma.perms.write) || (exec && !vma.perms.exec) || (!write && !exec && !vma.perms.read) {
            return Err(Error::new(Errno::EACCES));
        }
        if vma.name == "[stack]" && vma.end - (addr & !(PAGE_SIZE - 1)) > self.stack_limit() {
            return Err(Error::with_message(Errno::EFAULT, "stack beyond RLIMIT_STACK"));
        }
        let page = page_down(addr);
        if let Some((frame, flags)) = self.space.query(page) {
            if !write || flags.write {
                return Ok(()); // already resolved (another thread, or a racing copy)
            }
            // A shared file page mapped read-only by a read fault (or by
            // fault-around): the first store marks it for write-back
            // (Linux's page_mkwrite), then it becomes writable.
            if vma.shared
                && let Some(f) = &vma.file
                && let Some(cache) = f.inode.page_cache()
            {
                let off = f.offset + (page - vma.start);
                if off >= f.inode.size().div_ceil(PAGE_SIZE) * PAGE_SIZE {
                    return Err(Error::with_message(Errno::EIO, "mapped page beyond the end of the file"));
                }
                let current = cache.page((off / PAGE_SIZE) as u64)?;
                if current.paddr() == frame.paddr() {
                    self.space.protect(page, page_flags(vma.perms, true));
                } else {
                    // The file was truncated under the mapping and its page
                    // made again: map the file's page, as a fault would.
                    self.space.map(page, current, page_flags(vma.perms, true))?;
                }
                return Ok(());
            }
            // Copy-on-write: the query handle plus the mapping are the only
            // references if the page is exclusively ours.
            if vma.shared || frame.ref_count() <= 2 {
                self.space.protect(page, page_flags(vma.perms, true));
            } else {
                let copy = crate::fallible::frame_copy(&frame)?;
                self.space.map(page, copy, page_flags(vma.perms, true))?;
            }
            return Ok(());
        }
        if let Some(m) = &vma.shm {
            let frame = m.pages.get_or_alloc((m.offset + (page - vma.start)) / PAGE_SIZE)?;
            // A private area (the vDSO's) maps the shared page read-only:
            // a store copies it (above).
            self.map_new(page, frame, page_flags(vma.perms, vma.shared))?;
            return Ok(());
        }
        if vma.shared
            && let Some(f) = &vma.file
        {
            // MAP_SHARED of a file: map the file's own page.
            let off = f.offset + (page - vma.start);
            if off >= f.inode.size().div_ceil(PAGE_SIZE) * PAGE_SIZE {
                return Err(Error::with_message(Errno::EIO, "mapped page beyond the end of the file"));
            }
            // A read of a cached file maps the page read-only (a store
            // faults again and marks it for write-back), with its cached
            // neighbours.
            if !write && let Some(cache) = f.inode.page_cache() {
                let frame = cache.page_readonly((off / PAGE_SIZE) as u64)?;
                self.map_new(page, frame, page_flags(vma.perms, false))?;
                self.fault_around(&vma, f, page, |first, skip, out| cache.cached_run(first, skip, out));
                return Ok(());
            }
            // No memory for a hole: SIGBUS, as tmpfs gives.
            let frame = f.inode.shared_page(off / PAGE_SIZE).map_err(|_| Error::new(Errno::EIO))?;
            self.map_new(page, frame, page_flags(vma.perms, true))?;
            return Ok(());
        }
        // MAP_PRIVATE of a cached file, read first: map the cache's own
        // page read-only; the first store copies it (copy-on-write above:
        // the cache's reference keeps the count above 2).
        // A file kept in memory (ramfs) is mapped the same way from its own
        // pages (a hole is copied: zeros).
        if !write && let Some(f) = &vma.file {
            let off_in_area = page - vma.start;
            let off = f.offset + off_in_area;
            if off_in_area + PAGE_SIZE <= f.len && off.is_multiple_of(PAGE_SIZE) && off < f.inode.size() {
                let index = off / PAGE_SIZE;
                if let Some(cache) = f.inode.page_cache() {
                    let frame = cache.page_readonly(index as u64)?;
                    self.map_new(page, frame, page_flags(vma.perms, false))?;
                    self.fault_around(&vma, f, page, |first, skip, out| cache.cached_run(first, skip, out));
                    return Ok(());
                }
                let mut one = [None];
                f.inode.resident_pages(index, &mut one);
                if let [Some(frame)] = one {
                    self.map_new(page, frame, page_flags(vma.perms, false))?;
                    self.fault_around(&vma, f, page, |first, skip, out| resident_run(f, first, skip, out));
                    return Ok(());
                }
            }
        }
        let frame = crate::fallible::frame()?;
        if let Some(f) = &vma.file {
            let off_in_area = page - vma.start;
            // A page wholly past the end of the file: SIGBUS (mmap(2)).
            let file_pages_end = f.inode.size().div_ceil(PAGE_SIZE) * PAGE_SIZE;
            if off_in_area < f.len && f.offset + off_in_area >= file_pages_end {
                return Err(Error::with_message(Errno::EIO, "mapped page beyond the end of the file"));
            }
            if off_in_area < f.len {
                let n = (f.len - off_in_area).min(PAGE_SIZE);
                let mut buf = [0u8; PAGE_SIZE];
                let got = f.inode.read_at(f.offset + off_in_area, &mut buf[..n])?;
                frame.write_bytes(0, &buf[..got])?;
            }
        }
        self.map_new(page, frame, page_flags(vma.perms, true))?;
        Ok(())
    }

    /// Fault-around (Linux's do_fault_around, fault_around_bytes = 64 KiB):
    /// after a read fault at `page` of a file mapping, the file's pages in
    /// the same 64 KiB-aligned window that are already cached and up to
    /// date are mapped too, so reading a cached file through a mapping
    /// takes one fault per 16 pages. Only what the fault itself would map
    /// without I/O: pages inside the area, never one wholly past the end
    /// of the file (that stays SIGBUS), for a private mapping only whole
    /// pages of the file (as the private read path above), and never a page
    /// mapped already (a private copy stays). Pages go in read-only and
    /// unmarked: a store faults and takes the write path (a shared page is
    /// marked for write-back, a private one copied). Best effort: a failure
    /// leaves the neighbours to their own faults.
    /// `run(first, skip, out)` fills `out` with the file's pages from
    /// `first` on that are in memory, leaving page `skip` out.
    fn fault_around(
        &self,
        vma: &Vma,
        f: &FileBacking,
        page: usize,
        run: impl FnOnce(u64, u64, &mut [Option<UFrame>]),
    ) {
        const WINDOW: usize = 16 * PAGE_SIZE;
        if !f.offset.is_multiple_of(PAGE_SIZE) {
            return;
        }
        // File offset (page-aligned) where what the area may map ends: the
        // page holding the file's last byte, and for a private mapping
        // also the last whole page of the area's file part (an ELF
        // segment's page shared with its .bss is read and copied instead).
        let mut file_end = f.inode.size().div_ceil(PAGE_SIZE) * PAGE_SIZE;
        if !vma.shared {
            file_end = file_end.min(f.offset.saturating_add(page_down(f.len)));
        }
        let Some(area_file_end) = file_end.checked_sub(f.offset).and_then(|n| vma.start.checked_add(n)) else {
            return;
        };
        let start = vma.start.max(page & !(WINDOW - 1));
        let end = vma.end.min((page & !(WINDOW - 1)) + WINDOW).min(area_file_end);
        if end <= start + PAGE_SIZE {
            return;
        }
        let n = (end - start) / PAGE_SIZE;
        let first = ((f.offset + (start - vma.start)) / PAGE_SIZE) as u64;
        let skip = first + ((page - start) / PAGE_SIZE) as u64;
        let mut frames: [Option<UFrame>; 16] = Default::default();
        run(first, skip, &mut frames[..n]);
        if let Ok(mapped) = self.space.map_absent(start, &mut frames[..n], page_flags(vma.perms, false))
            && mapped != 0
        {
            let rss = self.rss_pages.fetch_add(mapped, Ordering::Relaxed) + mapped;
            self.hiwater_pages.fetch_max(rss, Ordering::Relaxed);
        }
    }

    /// Runs a user copy, resolving its faults (demand paging, copy-on-write,
    /// stack growth) and retrying, until it succeeds or a fault cannot be
    /// resolved (`EFAULT`).
    ///
    /// The loop must end whatever the copy reports: a copy faults at the
    /// first byte it could not reach, and the bytes before it are done, so
    /// each resolved fault should move the next one further on. A fault at
    /// or before an address already resolved means no progress (a racing
    /// unmap on another thread, or a resolver that claims success without
    /// mapping the page); that is tolerated a few times and then `EFAULT`,
    /// so the loop runs at most `pages + MAX_STALLS + 1` times.
    ///
    /// Inside a [`NoFaults`] section a fault is not resolved: the copy
    /// fails at once with `EFAULT`, the bytes before the fault copied.
    fn with_faults<T>(&self, mut op: impl FnMut() -> core::result::Result<T, UserFault>) -> Result<T> {
        const MAX_STALLS: u32 = 4;
        let mut furthest: Option<usize> = None;
        let mut stalls = 0;
        loop {
            let fault = match op() {
                Ok(v) => return Ok(v),
                Err(fault) => fault,
            };
            if fault.is_outside_user_space() || faults_disabled() {
                return Err(Error::new(Errno::EFAULT));
            }
            if furthest.is_some_and(|f| fault.addr <= f) {
                stalls += 1;
                if stalls > MAX_STALLS {
                    frame::log_warn!("user copy makes no progress at {:#x}; EFAULT", fault.addr);
                    return Err(Error::new(Errno::EFAULT));
                }
            }
            furthest = Some(furthest.map_or(fault.addr, |f| f.max(fault.addr)));
            self.handle_page_fault(fault.addr, fault.write, false).map_err(|e| match e.errno() {
                Errno::EACCES => Error::new(Errno::EFAULT),
                _ => e,
            })?;
        }
    }

    pub fn read_bytes(&self, addr: usize, buf: &mut [u8]) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        self.with_faults(|| self.space.read_bytes(addr, buf))
    }

    pub fn write_bytes(&self, addr: usize, buf: &[u8]) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        self.with_faults(|| self.space.write_bytes(addr, buf))
    }

    /// Copies `len` bytes of the pages `frames` taken back to back, from
    /// byte `offset` of the first, to user memory at `addr` (read(2) of a
    /// run of cached pages, one round of the page-table lock for the run),
    /// resolving faults as [`Vmar::write_bytes`] does. Returns the bytes
    /// copied: fewer than `len` if a fault past the first byte could not be
    /// resolved (the bytes before it were copied, as Linux's copy_to_user
    /// reports), the error if nothing could be.
    pub fn write_from_frames(&self, addr: usize, frames: &[UFrame], offset: usize, len: usize) -> Result<usize> {
        if len == 0 {
            return Ok(0);
        }
        let mut reached = addr;
        let r = self.with_faults(|| {
            self.space
                .write_from_frames(addr, frames, offset, len)
                .inspect_err(|f| note_progress(&mut reached, f))
        });
        partial_copy(r, addr, reached, len)
    }

    /// Copies `len` bytes of user memory at `addr` into `frame` at
    /// `offset` (write(2) into the page cache); bytes copied as
    /// [`Vmar::write_from_frames`] counts them.
    pub fn read_into_frame(&self, addr: usize, frame: &UFrame, offset: usize, len: usize) -> Result<usize> {
        if len == 0 {
            return Ok(0);
        }
        let mut reached = addr;
        let r = self.with_faults(|| {
            self.space
                .read_into_frame(addr, frame, offset, len)
                .inspect_err(|f| note_progress(&mut reached, f))
        });
        partial_copy(r, addr, reached, len)
    }

    /// [`Vmar::read_into_frame`] that resolves no fault: copies up to the
    /// first byte it cannot read as the page table stands and returns how
    /// many it copied (0: none). For a copy made with a page-cache page
    /// claimed, where resolving a fault could wait for that page.
    pub fn read_into_frame_nofault(&self, addr: usize, frame: &UFrame, offset: usize, len: usize) -> usize {
        match self.space.read_into_frame(addr, frame, offset, len) {
            Ok(()) => len,
            Err(f) if f.is_outside_user_space() => 0,
            Err(f) => f.addr.saturating_sub(addr).min(len),
        }
    }

    /// A copy of this address space for fork: private pages are shared
    /// copy-on-write, shared ones stay shared.
    pub fn fork(&self) -> Result<Vmar> {
        let st = self.state.lock();
        // The child charges what the parent does (Linux's dup_mmap).
        super::commit::may_commit(self.committed_pages(), 0, true)?;
        // One walk of the page table: private writable pages become
        // copy-on-write in both spaces, shared ones stay writable. Leaves
        // come in address order, so the area found last usually holds the
        // next page too.
        let mut last: Option<(usize, usize, bool)> = None;
        let space = self.space.fork(|va| {
            if let Some((start, end, shared)) = last
                && va >= start
                && va < end
            {
                return shared;
            }
            let area = find(&st.areas, va).map(|v| (v.start, v.end, v.shared));
            last = area;
            area.is_some_and(|(_, _, shared)| shared)
        })?;
        let child = Vmar {
            space,
            state: Mutex::new(State {
                // Every area is a new one in the child: shared memory
                // segments count one more attachment each. Memory locks
                // are not inherited (mlock(2)).
                areas: st
                    .areas
                    .iter()
                    .map(|(k, v)| {
                        let mut v = v.clone();
                        v.locked = false;
                        v.shm = v.shm.as_ref().map(ShmBacking::duplicate);
                        (*k, v)
                    })
                    .collect(),
                parked: st.parked.clone(),
                brk_start: st.brk_start,
                brk: st.brk,
                args: st.args,
                env: st.env,
                auxv: st.auxv.clone(),
                mmap_top: st.mmap_top,
            }),
            stack_limit: AtomicUsize::new(self.stack_limit()),
            // The child starts with the parent's pages, and that is its peak
            // so far (as Linux's dup_mm).
            rss_pages: AtomicUsize::new(self.rss_pages()),
            hiwater_pages: AtomicUsize::new(self.rss_pages()),
            lock_future: AtomicBool::new(false),
            lock_onfault: AtomicBool::new(false),
            membarrier: core::sync::atomic::AtomicU32::new(self.membarrier.load(Ordering::Relaxed)),
            exe_deny_write: frame::sync::Once::new(),
            committed: AtomicUsize::new(0),
            sealed: false,
        };
        // Same areas, same charge (the parent's lock is held: its areas
        // are the child's).
        child.recharge(&st);
        if let Some(deny) = self.exe_deny_write.get() {
            child.set_exe_deny_write(deny.duplicate());
        }
        Ok(child)
    }

    /// Removes mappings in `[start, end)`, splitting areas at the edges.
    pub fn unmap_range(&self, start: usize, end: usize) {
        let mut st = self.state.lock();
        self.unmap_locked(&mut st, start, end);
        self.recharge(&st);
    }

    fn unmap_locked(&self, st: &mut State, start: usize, end: usize) {
        split_areas(&mut st.areas, start, end);
        // Without a list (munmap must not need memory): the areas do not
        // overlap, so the last one starting below `end` is inside the
        // range if any still is.
        while let Some(k) = st.areas.range(..end).next_back().filter(|(_, v)| v.end > start).map(|(k, _)| *k) {
            if let Some(v) = st.areas.remove(&k) {
                self.unmap_pages(v.start, v.end);
                self.drop_parked(st, v.start, v.end);
            }
        }
    }

    fn unmap_pages(&self, start: usize, end: usize) {
        // One pass over the page table; ranges without tables are skipped.
        let n = self.space.unmap_range(start, end);
        if n != 0 {
            let _ = self.rss_pages.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| Some(r.saturating_sub(n)));
        }
    }

    /// Drops the parked (PROT_NONE) pages in `[start, end)`.
    fn drop_parked(&self, st: &mut State, start: usize, end: usize) {
        while let Some(p) = st.parked.range(start..end).next().map(|(k, _)| *k) {
            st.parked.remove(&p);
            self.page_gone();
        }
    }

    /// Sets the mmap base (execve, before the program runs): free room
    /// is searched top-down from `top`, which must lie below the stack.
    pub fn set_mmap_top(&self, top: usize) {
        self.state.lock().mmap_top = top.min(MMAP_TOP) & !(PAGE_SIZE - 1);
    }

    /// The start of a free range of `len` bytes where mmap would place it.
    pub fn free_range(&self, len: usize) -> Option<usize> {
        Self::find_free(&self.state.lock(), page_up(len)?)
    }

    /// Finds a free range of `len` bytes, top-down below the mmap base.
    fn find_free(st: &State, len: usize) -> Option<usize> {
        let mut top = st.mmap_top;
        for v in st.areas.values().rev() {
            if v.start >= top {
                continue;
            }
            if v.end <= top && top - v.end >= len {
                return Some(top - len);
            }
            top = top.min(v.start);
        }
        // `len` is the caller's: no overflow whatever it is.
        MMAP_BOTTOM.checked_add(len).is_some_and(|b| top >= b).then(|| top - len)
    }

    /// mmap: places `vma` (start ignored unless `fixed`), length `len`,
    /// locked if `vma.locked` (MAP_LOCKED) or after mlockall(MCL_FUTURE).
    /// Checked in Linux's order: EPERM below `limits.min_addr`, EEXIST
    /// for `noreplace` over a mapping, EAGAIN for locked memory beyond
    /// RLIMIT_MEMLOCK, ENOMEM beyond RLIMIT_AS or RLIMIT_DATA (only what
    /// the mapping adds counts: areas it replaces are subtracted).
    pub fn map_area(&self, hint: usize, len: usize, fixed: bool, noreplace: bool, mut vma: Vma, limits: &MapLimits) -> Result<usize> {
        let len = page_up(len).filter(|l| *l > 0 && *l <= USER_SPACE_END && !self.sealed).ok_or(Error::new(Errno::ENOMEM))?;
        let mut st = self.state.lock();
        let start = if fixed {
            let end = hint.checked_add(len).filter(|e| *e <= USER_SPACE_END).ok_or(Error::new(Errno::ENOMEM))?;
            if hint < limits.min_addr {
                return Err(Error::with_message(Errno::EPERM, "below vm.mmap_min_addr"));
            }
            if noreplace && overlaps(&st.areas, hint, end) {
                return Err(Error::new(Errno::EEXIST));
            }
            hint
        } else {
            // A hint below vm.mmap_min_addr is moved up to it (Linux's
            // round_hint_to_min).
            let hint = if hint != 0 && hint < limits.min_addr { limits.min_addr } else { hint };
            let hinted = hint != 0
                && hint % PAGE_SIZE == 0
                && hint.checked_add(len).is_some_and(|e| e <= USER_SPACE_END && !overlaps(&st.areas, hint, e));
            if hinted { hint } else { Self::find_free(&st, len).ok_or(Error::new(Errno::ENOMEM))? }
        };
        vma.start = start;
        vma.end = start + len;
        vma.locked |= self.lock_future.load(Ordering::Relaxed);
        if vma.locked && limits.memlock.is_some_and(|l| locked_total(&st.areas).saturating_add(len) > l) {
            return Err(Error::with_message(Errno::EAGAIN, "RLIMIT_MEMLOCK"));
        }
        check_growth(&st.areas, start, vma.end, is_data(&vma), len, limits)?;
        // The commit: what the mapping charges, less the charged areas it
        // replaces (Linux's mmap_region).
        vma.account = super::commit::accountable(vma.shared, vma.perms.write, vma.noreserve);
        if vma.account {
            let replaced = covered_bytes(&st.areas, start, vma.end, |v| v.account);
            super::commit::may_commit((len - replaced) / PAGE_SIZE, self.committed_pages(), limits.admin)?;
        }
        self.unmap_locked(&mut st, start, vma.end);
        let populate = vma.locked && !self.lock_onfault.load(Ordering::Relaxed);
        st.areas.insert(start, vma);
        self.recharge(&st);
        drop(st);
        if populate {
            self.populate(start, start + len);
        }
        Ok(start)
    }

    /// shmdt(2): removes the System V segment attached at `addr`: the first
    /// shared-memory area at or above `addr` whose segment offset matches
    /// its distance from `addr`, then the other areas of the same segment
    /// (pieces left by mprotect or munmap) within the segment's size of
    /// `addr`. False if there is none.
    pub fn detach_shm(&self, addr: usize) -> bool {
        let mut st = self.state.lock();
        let matches = |v: &Vma| {
            v.shm.as_ref().is_some_and(|m| m.attach.is_some() && v.start - addr == m.offset)
        };
        let Some(first) = st.areas.range(addr..).map(|(_, v)| v).find(|v| matches(v)) else {
            return false;
        };
        let Some(att) = first.shm.as_ref().and_then(|m| m.attach.clone()) else {
            return false;
        };
        let limit = addr.saturating_add(page_up(att.size()).unwrap_or(usize::MAX));
        let first_start = first.start;
        let doomed: Vec<(usize, usize)> = st
            .areas
            .range(first_start..)
            .map(|(_, v)| v)
            .filter(|v| v.start == first_start || v.end <= limit)
            .filter(|v| {
                matches(v) && v.shm.as_ref().and_then(|m| m.attach.as_ref()).is_some_and(|a| a.same_segment(&att))
            })
            .map(|v| (v.start, v.end))
            .collect();
        drop(att);
        for (start, end) in doomed {
            self.unmap_locked(&mut st, start, end);
        }
        self.recharge(&st);
        true
    }

    /// mprotect over `[start, end)`; every page must be mapped (ENOMEM).
    pub fn protect(&self, start: usize, end: usize, perms: Perms) -> Result<()> {
        let mut st = self.state.lock();
        if !covered(&st.areas, start, end) {
            return Err(Error::new(Errno::ENOMEM));
        }
        // A segment attached read-only (SHM_RDONLY), or a shared mapping
        // of a file not open for writing, never becomes writable.
        let read_only = |v: &Vma| !v.may_write || v.shm.as_ref().is_some_and(|m| !m.may_write);
        if perms.write && st.areas.range(..end).any(|(_, v)| v.end > start && read_only(v)) {
            return Err(Error::new(Errno::EACCES));
        }
        // Making private memory writable charges it (Linux's
        // mprotect_fixup); it stays charged when made read-only again.
        let charge = |v: &Vma| perms.write && !v.account && super::commit::accountable(v.shared, true, v.noreserve);
        let adding = covered_bytes(&st.areas, start, end, charge);
        super::commit::may_commit(adding / PAGE_SIZE, self.committed_pages(), true)?;
        split_areas(&mut st.areas, start, end);
        for v in st.areas.range_mut(start..end) {
            if charge(v.1) {
                v.1.account = true;
            }
            v.1.perms = perms;
        }
        self.recharge(&st);
        let none = !perms.read && !perms.write && !perms.exec;
        let mut va = start;
        while va < end {
            if none {
                if let Some(frame) = self.space.unmap(va) {
                    st.parked.insert(va, (frame, PageFlags::R));
                }
            } else {
                if let Some((frame, flags)) = st.parked.remove(&va) {
                    self.space.map(va, frame, flags)?;
                }
                if let Some((frame, flags)) = self.space.query(va) {
                    let area = find(&st.areas, va);
                    let shared_vma = area.is_some_and(|v| v.shared);
                    // A shared file page a read mapped read-only stays so:
                    // its first store must fault to be marked for
                    // write-back (see `resolve_fault`).
                    let unmarked = shared_vma
                        && !flags.write
                        && area.and_then(|v| v.file.as_ref()).is_some_and(|f| f.inode.page_cache().is_some());
                    // Keep possibly-shared private pages read-only (COW).
                    let exclusive = !unmarked && (shared_vma || frame.ref_count() <= 2);
                    drop(frame);
                    self.space.protect(va, page_flags(perms, exclusive));
                }
            }
            va += PAGE_SIZE;
        }
        Ok(())
    }

    /// The areas overlapping `[start, end)` (copies), and whether they
    /// cover all of it (madvise(2) acts on the areas, then reports the
    /// holes with ENOMEM).
    pub fn areas_in(&self, start: usize, end: usize) -> (Vec<Vma>, bool) {
        let st = self.state.lock();
        let areas = st.areas.range(..end).map(|(_, v)| v).filter(|v| v.end > start).cloned().collect();
        (areas, covered(&st.areas, start, end))
    }

    /// madvise(MADV_DONTNEED) on the mapped parts of `[start, end)`: drop
    /// the pages; private memory refills with zeros (anonymous) or the
    /// file contents, shared memory with its unchanged pages.
    pub fn discard(&self, start: usize, end: usize) {
        let mut st = self.state.lock();
        let mut va = start;
        while va < end {
            if find(&st.areas, va).is_some_and(|v| !v.shared) {
                self.unmap_page(va);
                if st.parked.remove(&va).is_some() {
                    self.page_gone();
                }
            }
            va += PAGE_SIZE;
        }
    }

    /// madvise(MADV_REMOVE) on the shared areas in `[start, end)`: every
    /// sharer reads zeros there afterwards. The memory is zeroed where it
    /// is (the shared object's pages, the file's data up to its end)
    /// rather than freed, as other address spaces may map it.
    pub fn remove_pages(&self, start: usize, end: usize) -> Result<()> {
        let (areas, _) = self.areas_in(start, end);
        for v in areas.iter().filter(|v| v.shared) {
            let (s, e) = (v.start.max(start), v.end.min(end));
            if let Some(m) = &v.shm {
                let first = (m.offset + (s - v.start)) / PAGE_SIZE;
                m.pages.zero(first, first + (e - s) / PAGE_SIZE)?;
            } else if let Some(f) = &v.file {
                let from = f.offset + (s - v.start);
                let to = (f.offset + (e - v.start)).min(f.inode.size());
                let zeros = [0u8; PAGE_SIZE];
                let mut at = from;
                while at < to {
                    match f.inode.write_at(at, &zeros[..(to - at).min(PAGE_SIZE)])? {
                        0 => break,
                        n => at += n,
                    }
                }
            }
        }
        Ok(())
    }

    /// mremap(2) once the arguments are checked (page-aligned `old`,
    /// lengths rounded up, `new_len` > 0, `fixed` implies `may_move`).
    /// EFAULT unless `[old, old + old_len)` lies in one area; ENOMEM if
    /// the area cannot grow in place and may not move (or there is no
    /// room). An `old_len` of 0 maps the pages of a shared area a second
    /// time (EINVAL for a private one). `limits`: EPERM for a fixed
    /// destination below the lowest address; growth (what the area
    /// gains, or all of it with `dontunmap`) EAGAIN beyond RLIMIT_MEMLOCK
    /// for a locked area, ENOMEM beyond RLIMIT_AS or RLIMIT_DATA.
    #[allow(clippy::too_many_arguments)]
    pub fn remap(
        &self,
        old: usize,
        old_len: usize,
        new_len: usize,
        may_move: bool,
        fixed: Option<usize>,
        dontunmap: bool,
        limits: &MapLimits,
    ) -> Result<usize> {
        if fixed.is_some_and(|d| d < limits.min_addr) {
            return Err(Error::with_message(Errno::EPERM, "below vm.mmap_min_addr"));
        }
        let dest = self.remap_locked(old, old_len, new_len, may_move, fixed, dontunmap, limits);
        self.recharge(&self.state.lock());
        let dest = dest?;
        // A locked area that grew while moving: fault in the new part.
        let grown = find(&self.state.lock().areas, dest).is_some_and(|v| v.locked) && new_len > old_len && old_len > 0;
        if grown && dest != old {
            self.populate(dest + old_len, dest + new_len);
        }
        Ok(dest)
    }

    #[allow(clippy::too_many_arguments)]
    fn remap_locked(
        &self,
        old: usize,
        old_len: usize,
        new_len: usize,
        may_move: bool,
        fixed: Option<usize>,
        dontunmap: bool,
        limits: &MapLimits,
    ) -> Result<usize> {
        let mut st = self.state.lock();
        let vma = find(&st.areas, old).cloned().ok_or(Error::new(Errno::EFAULT))?;
        // Linux's vma_to_resize and the MREMAP_DONTUNMAP check.
        let may_grow = |st: &State| -> Result<()> {
            let grow = new_len.saturating_sub(old_len) + if dontunmap { old_len } else { 0 };
            if grow == 0 {
                return Ok(());
            }
            if vma.locked && limits.memlock.is_some_and(|l| locked_total(&st.areas).saturating_add(grow) > l) {
                return Err(Error::with_message(Errno::EAGAIN, "RLIMIT_MEMLOCK"));
            }
            check_growth(&st.areas, 0, 0, is_data(&vma), grow, limits)?;
            if vma.account {
                super::commit::may_commit(grow / PAGE_SIZE, self.committed_pages(), limits.admin)?;
            }
            Ok(())
        };
        if old_len == 0 {
            if !vma.shared || vma.shm.is_none() {
                return Err(Error::new(Errno::EINVAL));
            }
            if !may_move {
                return Err(Error::new(Errno::ENOMEM));
            }
            may_grow(&st)?;
            let dest = self.destination(&mut st, new_len, fixed)?;
            let mut copy = vma.clone();
            // A new area: a segment attachment of its own.
            copy.shm = vma.shm.as_ref().map(ShmBacking::duplicate);
            if let Some(m) = copy.shm.as_mut() {
                m.offset += old - vma.start;
            }
            copy.start = dest;
            copy.end = dest + new_len;
            copy.locked = false;
            st.areas.insert(dest, copy);
            return Ok(dest);
        }
        let old_end = old.checked_add(old_len).ok_or(Error::new(Errno::EFAULT))?;
        if fixed.is_none() && !dontunmap {
            if new_len == old_len {
                return Ok(old);
            }
            if new_len < old_len {
                if old_end > vma.end && !covered(&st.areas, old, old_end) {
                    return Err(Error::new(Errno::EFAULT));
                }
                self.unmap_locked(&mut st, old + new_len, old_end);
                return Ok(old);
            }
        }
        if old_end > vma.end {
            return Err(Error::new(Errno::EFAULT));
        }
        may_grow(&st)?;
        if let Some(dest) = fixed {
            if new_len < old_len {
                // The tail goes first, then the rest moves (mremap(2)).
                self.unmap_locked(&mut st, old + new_len, old_end);
                return self.move_range(&mut st, old, new_len, dest, new_len, dontunmap);
            }
            return self.move_range(&mut st, old, old_len, dest, new_len, dontunmap);
        }
        if !dontunmap {
            // Grow in place if the area ends here and the space after it is free.
            let new_end = old.checked_add(new_len).filter(|e| *e <= USER_SPACE_END);
            if let Some(new_end) = new_end
                && old_end == vma.end
                && !overlaps(&st.areas, old_end, new_end)
            {
                if let Some(v) = st.areas.get_mut(&vma.start) {
                    v.end = new_end;
                    if let Some(f) = v.file.as_mut()
                        && f.len >= old_end - vma.start
                    {
                        f.len = new_end - vma.start;
                    }
                }
                let populate = vma.locked;
                drop(st);
                if populate {
                    self.populate(old_end, new_end);
                }
                return Ok(old);
            }
        }
        if !may_move {
            return Err(Error::new(Errno::ENOMEM));
        }
        let dest = self.destination(&mut st, new_len, None)?;
        self.move_range(&mut st, old, old_len, dest, new_len, dontunmap)
    }

    /// Where a moved or duplicated area goes: `fixed` (whatever was there
    /// is unmapped), or a free range.
    fn destination(&self, st: &mut State, len: usize, fixed: Option<usize>) -> Result<usize> {
        match fixed {
            Some(dest) => {
                self.unmap_locked(st, dest, dest + len);
                Ok(dest)
            }
            None => Self::find_free(st, len).ok_or(Error::new(Errno::ENOMEM)),
        }
    }

    /// Moves the area piece `[old, old + old_len)` with its pages to
    /// `dest`, as an area of `new_len` bytes. With `dontunmap` the old
    /// range stays mapped, empty (it refills on the next touch).
    fn move_range(&self, st: &mut State, old: usize, old_len: usize, dest: usize, new_len: usize, dontunmap: bool) -> Result<usize> {
        let old_end = old + old_len;
        self.unmap_locked(st, dest, dest + new_len);
        split_areas(&mut st.areas, old, old_end);
        let piece = st.areas.remove(&old).ok_or(Error::new(Errno::EFAULT))?;
        let mut moved = piece.clone();
        moved.start = dest;
        moved.end = dest + new_len;
        if let Some(f) = moved.file.as_mut()
            && f.len >= old_len
        {
            f.len = new_len;
        }
        let mut va = old;
        while va < old_end {
            let to = dest + (va - old);
            if let Some((frame, flags)) = self.space.query(va) {
                drop(frame);
                if let Some(frame) = self.space.unmap(va) {
                    if to < dest + new_len {
                        self.space.map(to, frame, flags)?;
                    } else {
                        self.page_gone();
                    }
                }
            }
            if let Some(parked) = st.parked.remove(&va) {
                if to < dest + new_len {
                    st.parked.insert(to, parked);
                } else {
                    self.page_gone();
                }
            }
            va += PAGE_SIZE;
        }
        if dontunmap {
            st.areas.insert(old, Vma { locked: false, ..piece });
        }
        st.areas.insert(dest, moved);
        Ok(dest)
    }

    /// msync(2): every page of `[start, end)` must be mapped (ENOMEM);
    /// EBUSY for MS_INVALIDATE of locked memory. Returns the files mapped
    /// shared in the range, whose pages the caller writes back (MS_SYNC)
    /// once this address space's lock is released.
    pub fn sync_range(&self, start: usize, end: usize, invalidate: bool) -> Result<Vec<Arc<dyn Inode>>> {
        let st = self.state.lock();
        if invalidate && st.areas.range(..end).any(|(_, v)| v.end > start && v.locked) {
            return Err(Error::new(Errno::EBUSY));
        }
        if !covered(&st.areas, start, end) {
            return Err(Error::new(Errno::ENOMEM));
        }
        let mut files: Vec<Arc<dyn Inode>> = Vec::new();
        for (_, v) in st.areas.range(..end).filter(|(_, v)| v.end > start && v.shared) {
            if let Some(f) = &v.file
                && !files.iter().any(|g| Arc::ptr_eq(g, &f.inode))
            {
                files.push(f.inode.clone());
            }
        }
        Ok(files)
    }

    /// mincore(2): one byte per page of `[start, end)`, 1 if resident:
    /// mapped, parked under PROT_NONE, present in a shared anonymous
    /// object, or a page of file data (the in-memory file systems hold
    /// every page of a file's data, as tmpfs's page cache does). ENOMEM
    /// if a page is unmapped.
    pub fn residency(&self, start: usize, end: usize) -> Result<Vec<u8>> {
        let st = self.state.lock();
        if !covered(&st.areas, start, end) {
            return Err(Error::new(Errno::ENOMEM));
        }
        let mut out = Vec::new();
        out.try_reserve_exact((end - start) / PAGE_SIZE).map_err(|_| Error::new(Errno::ENOMEM))?;
        // File pages are judged after the lock is released: inode locks
        // rank below this address space's.
        let mut file_pages: Vec<(usize, Arc<dyn Inode>, usize)> = Vec::new();
        let mut va = start;
        while va < end {
            let vma = find(&st.areas, va).ok_or(Error::new(Errno::ENOMEM))?;
            let mut resident = self.space.query(va).is_some() || st.parked.contains_key(&va);
            if !resident && let Some(m) = &vma.shm {
                resident = m.pages.contains((m.offset + (va - vma.start)) / PAGE_SIZE);
            }
            if !resident && let Some(f) = &vma.file {
                let off = va - vma.start;
                if off < f.len {
                    file_pages.try_reserve(1).map_err(|_| Error::new(Errno::ENOMEM))?;
                    file_pages.push((out.len(), f.inode.clone(), f.offset + off));
                }
            }
            out.push(u8::from(resident));
            va += PAGE_SIZE;
        }
        drop(st);
        for (i, inode, offset) in file_pages {
            out[i] = u8::from(offset < inode.size());
        }
        Ok(out)
    }

    /// Bytes of locked memory (VmLck): locked areas, and of the
    /// "[stack]" reservation only its resident pages.
    pub fn locked_bytes(&self) -> usize {
        let st = self.state.lock();
        let mut total = 0;
        for v in st.areas.values().filter(|v| v.locked) {
            if v.name == "[stack]" {
                total += self.space.mappings().iter().filter(|(va, _, _)| *va >= v.start && *va < v.end).count() * PAGE_SIZE;
            } else {
                total += v.end - v.start;
            }
        }
        total
    }

    /// mlock(2)/munlock(2) on `[start, end)`: ENOMEM unless all mapped;
    /// with `lock`, ENOMEM if the locked total would pass `limit` bytes
    /// (RLIMIT_MEMLOCK of an unprivileged caller). Locking faults the
    /// pages in unless `onfault` (MLOCK_ONFAULT).
    pub fn set_locked(&self, start: usize, end: usize, lock: bool, onfault: bool, limit: Option<usize>) -> Result<()> {
        let mut st = self.state.lock();
        if !covered(&st.areas, start, end) {
            return Err(Error::new(Errno::ENOMEM));
        }
        if lock && let Some(limit) = limit {
            let already: usize = st.areas.values().filter(|v| v.locked).map(|v| v.end - v.start).sum();
            let mut adding = 0;
            for (_, v) in st.areas.range(..end).filter(|(_, v)| v.end > start && !v.locked) {
                adding += v.end.min(end) - v.start.max(start);
            }
            if already + adding > limit {
                return Err(Error::new(Errno::ENOMEM));
            }
        }
        split_areas(&mut st.areas, start, end);
        for (_, v) in st.areas.range_mut(start..end) {
            v.locked = lock;
        }
        drop(st);
        if lock && !onfault {
            self.populate(start, end);
        }
        Ok(())
    }

    /// mlockall(2) (`current`: MCL_CURRENT, `future`: MCL_FUTURE) and
    /// munlockall(2) (`lock` false). ENOMEM if the address space is larger
    /// than `limit` bytes. The "[stack]" reservation is locked but not
    /// faulted in: it grows on demand.
    pub fn set_all_locked(&self, lock: bool, current: bool, future: bool, onfault: bool, limit: Option<usize>) -> Result<()> {
        let mut st = self.state.lock();
        if !lock {
            for v in st.areas.values_mut() {
                v.locked = false;
            }
            self.lock_future.store(false, Ordering::Relaxed);
            self.lock_onfault.store(false, Ordering::Relaxed);
            return Ok(());
        }
        if current && let Some(limit) = limit {
            let total: usize = st.areas.values().filter(|v| v.name != "[stack]").map(|v| v.end - v.start).sum();
            if total > limit {
                return Err(Error::new(Errno::ENOMEM));
            }
        }
        self.lock_future.store(future, Ordering::Relaxed);
        self.lock_onfault.store(future && onfault, Ordering::Relaxed);
        if !current {
            return Ok(());
        }
        let mut ranges = Vec::new();
        for v in st.areas.values_mut() {
            v.locked = true;
            if v.name != "[stack]" {
                ranges.push((v.start, v.end));
            }
        }
        drop(st);
        if !onfault {
            for (s, e) in ranges {
                self.populate(s, e);
            }
        }
        Ok(())
    }

    /// Faults in every accessible page of `[start, end)` (for writing if
    /// the area is writable, as Linux's populate does); pages that cannot
    /// be (past a file's end) are skipped.
    fn populate(&self, start: usize, end: usize) {
        let mut va = start;
        while va < end {
            let perms = find(&self.state.lock().areas, va).map(|v| (v.perms, v.end));
            let Some((perms, area_end)) = perms else {
                va += PAGE_SIZE;
                continue;
            };
            if !perms.read && !perms.write && !perms.exec {
                va = area_end;
                continue;
            }
            let _ = self.resolve_fault(va, perms.write, false);
            va += PAGE_SIZE;
        }
    }

    /// brk(2): returns the new (or unchanged) break. Growing fails if
    /// the heap would pass RLIMIT_DATA, or the new part RLIMIT_AS,
    /// RLIMIT_DATA or (after mlockall(MCL_FUTURE)) RLIMIT_MEMLOCK.
    pub fn brk(&self, new: usize, limits: &MapLimits) -> usize {
        let mut st = self.state.lock();
        let (base, cur) = (st.brk_start, st.brk);
        if self.sealed || new < base || new > base + BRK_MAX {
            return cur;
        }
        let (old_end, new_end) = (page_up(cur).unwrap_or(cur), page_up(new).unwrap_or(new));
        if new_end > old_end {
            if overlaps(&st.areas, old_end, new_end) {
                return cur;
            }
            let grow = new_end - old_end;
            let locked = self.lock_future.load(Ordering::Relaxed);
            if limits.data.is_some_and(|l| new - base > l)
                || (locked && limits.memlock.is_some_and(|l| locked_total(&st.areas).saturating_add(grow) > l))
                || check_growth(&st.areas, old_end, new_end, true, grow, limits).is_err()
                || super::commit::may_commit(grow / PAGE_SIZE, self.committed_pages(), limits.admin).is_err()
            {
                return cur;
            }
            // Extend the heap area (merging with an existing [heap] area).
            let heap = st.areas.values().find(|v| v.name == "[heap]").map(|v| v.start);
            match heap {
                Some(s) => {
                    if let Some(v) = st.areas.get_mut(&s) {
                        v.end = new_end;
                    }
                }
                None => {
                    st.areas.insert(old_end, Vma {
                            start: old_end,
                            end: new_end,
                            perms: Perms::RW,
                            shared: false,
                            file: None,
                            name: "[heap]",
                            shm: None,
                            locked: self.lock_future.load(Ordering::Relaxed),
                            may_write: true,
                            account: true,
                            noreserve: false,
                        });
                }
            }
        } else if new_end < old_end {
            self.unmap_pages(new_end, old_end);
            self.drop_parked(&mut st, new_end, old_end);
            let heap = st.areas.values().find(|v| v.name == "[heap]").map(|v| (v.start, v.end));
            if let Some((s, _)) = heap {
                if new_end <= s {
                    st.areas.remove(&s);
                } else if let Some(v) = st.areas.get_mut(&s) {
                    v.end = new_end;
                }
            }
        }
        self.recharge(&st);
        st.brk = new;
        new
    }

    pub fn stack_limit(&self) -> usize {
        self.stack_limit.load(Ordering::Relaxed)
    }

    pub fn set_stack_limit(&self, bytes: usize) {
        self.stack_limit.store(bytes.max(PAGE_SIZE), Ordering::Relaxed);
    }

    /// Records where execve placed argv and envp strings.
    pub fn set_arg_env(&self, args: (usize, usize), env: (usize, usize)) {
        let mut st = self.state.lock();
        st.args = args;
        st.env = env;
    }

    /// Records the auxiliary vector (key, value words up to AT_NULL).
    pub fn set_auxv(&self, words: Vec<u64>) {
        self.state.lock().auxv = words;
    }

    /// The auxiliary vector execve gave the program.
    pub fn auxv(&self) -> Vec<u64> {
        self.state.lock().auxv.clone()
    }

    /// The (start, end) of the argument and environment strings
    /// (/proc/pid/cmdline and environ).
    pub fn arg_env(&self) -> ((usize, usize), (usize, usize)) {
        let st = self.state.lock();
        (st.args, st.env)
    }

    /// The current program break range (start, end).
    pub fn brk_range(&self) -> (usize, usize) {
        let st = self.state.lock();
        (st.brk_start, st.brk)
    }

    /// Snapshot of the areas (for /proc/pid/maps and diagnostics).
    pub fn areas(&self) -> Vec<Vma> {
        self.state.lock().areas.values().cloned().collect()
    }
}

/// Whether an area counts as data for RLIMIT_DATA (Linux's
/// is_data_mapping: private, writable, not the stack).
fn is_data(v: &Vma) -> bool {
    v.perms.write && !v.shared && v.name != "[stack]"
}

/// Bytes of locked areas (Linux's locked_vm).
fn locked_total(areas: &BTreeMap<usize, Vma>) -> usize {
    areas.values().filter(|v| v.locked).map(|v| v.end - v.start).sum()
}

/// Bytes of `[start, end)` already covered by areas that satisfy `pred`.
fn covered_bytes(areas: &BTreeMap<usize, Vma>, start: usize, end: usize, pred: impl Fn(&Vma) -> bool) -> usize {
    areas
        .range(..end)
        .map(|(_, v)| v)
        .filter(|v| v.end > start && pred(v))
        .map(|v| v.end.min(end) - v.start.max(start))
        .sum()
}

/// Linux's may_expand_vm for `grow` bytes of a new area over `[start,
/// end)` (less the areas it replaces there), a data area if `data`:
/// ENOMEM if the address space would pass RLIMIT_AS, or the data areas
/// RLIMIT_DATA.
fn check_growth(areas: &BTreeMap<usize, Vma>, start: usize, end: usize, data: bool, grow: usize, limits: &MapLimits) -> Result<()> {
    if let Some(limit) = limits.address_space {
        let total: usize = areas.values().map(|v| v.end - v.start).sum();
        let added = grow.saturating_sub(covered_bytes(areas, start, end, |_| true));
        if total.saturating_add(added) > limit {
            return Err(Error::with_message(Errno::ENOMEM, "RLIMIT_AS"));
        }
    }
    if let Some(limit) = limits.data
        && data
    {
        let total: usize = areas.values().filter(|v| is_data(v)).map(|v| v.end - v.start).sum();
        let added = grow.saturating_sub(covered_bytes(areas, start, end, is_data));
        if total.saturating_add(added) > limit {
            return Err(Error::with_message(Errno::ENOMEM, "RLIMIT_DATA"));
        }
    }
    Ok(())
}

fn find(areas: &BTreeMap<usize, Vma>, addr: usize) -> Option<&Vma> {
    areas.range(..=addr).next_back().map(|(_, v)| v).filter(|v| addr < v.end)
}

fn overlaps(areas: &BTreeMap<usize, Vma>, start: usize, end: usize) -> bool {
    areas.range(..end).next_back().is_some_and(|(_, v)| v.end > start)
}

/// Whether `[start, end)` is entirely covered by areas.
fn covered(areas: &BTreeMap<usize, Vma>, start: usize, end: usize) -> bool {
    let mut cur = start;
    while cur < end {
        match find(areas, cur) {
            Some(v) => cur = v.end,
            None => return false,
        }
    }
    true
}

/// Splits areas so that `start` and `end` fall on area boundaries.
fn split_areas(areas: &mut BTreeMap<usize, Vma>, start: usize, end: usize) {
    for addr in [start, end] {
        let key = areas.range(..addr).next_back().filter(|(_, v)| v.end > addr).map(|(k, _)| *k);
        if let Some(k) = key {
            if let Some(v) = areas.get_mut(&k) {
                let upper = v.split_at(addr);
                areas.insert(addr, upper);
            }
        }
    }
}

/// The pages `first..first + out.len()` of a file kept in memory (see
/// `Inode::resident_pages`), page `skip` left out: fault-around's source
/// for ramfs, as `PageCache::cached_run` is for cached files.
fn resident_run(f: &FileBacking, first: u64, skip: u64, out: &mut [Option<UFrame>]) {
    f.inode.resident_pages(first as usize, out);
    if let Some(slot) = skip.checked_sub(first).and_then(|i| out.get_mut(i as usize)) {
        *slot = None;
    }
}

/// The furthest address a frame copy reached: a fault inside user space
/// names the first byte it did not copy.
fn note_progress(reached: &mut usize, fault: &UserFault) {
    if !fault.is_outside_user_space() {
        *reached = (*reached).max(fault.addr);
    }
}

/// A frame copy's result as a byte count: all of `len`, the bytes below
/// the furthest fault when a later one could not be resolved, or the error
/// when nothing was copied.
fn partial_copy(r: Result<()>, addr: usize, reached: usize, len: usize) -> Result<usize> {
    match r {
        Ok(()) => Ok(len),
        Err(e) => match reached.saturating_sub(addr).min(len) {
            0 => Err(e),
            copied => Ok(copied),
        },
    }
}
