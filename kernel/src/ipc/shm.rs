//! System V shared memory segments (shmget(2), shmat(2), shmctl(2)).
//!
//! A segment's memory is a [`SharedPages`] object, the same as a
//! MAP_SHARED|MAP_ANONYMOUS mapping's, allocated page by page on first
//! touch. Attaching maps an area backed by it; each area holds an
//! [`Attachment`], so the segment's shm_nattch is the number of areas
//! mapping it (fork and splits add areas, munmap, shmdt, exec and exit
//! remove them), as on Linux. IPC_RMID of an attached segment only marks it
//! (SHM_DEST, key IPC_PRIVATE); the last detach then frees its pages, and
//! its slot is swept from the table by the next shm call.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};

use frame::mm::PAGE_SIZE;
use frame::sync::{level, SpinLock, SpinLockGuard};

use super::{lookup, now_secs, Ipc64Perm, Lookup, Object, Perm, Table, IPC_INFO, IPC_RMID, IPC_SET, IPC_STAT, S_IRUGO, S_IWUGO, S_IXUGO};
use crate::error::{Errno, Error, Result};
use crate::mm::vmar::SharedPages;
use crate::process::creds::Credentials;

/// Largest segment (Linux's default shmmax, ULONG_MAX - 2^24) and most
/// pages in all segments together (shmall, the same number).
pub const SHMMAX: u64 = u64::MAX - (1 << 24);
pub const SHMALL: u64 = u64::MAX - (1 << 24);
pub const SHMMIN: u64 = 1;
pub const SHMMNI: usize = 4096;
/// Segments may be attached at multiples of this (SHMLBA).
pub const SHMLBA: usize = PAGE_SIZE;

pub const SHM_DEST: u32 = 0o1000;
pub const SHM_LOCKED: u32 = 0o2000;
pub const SHM_RDONLY: i32 = 0o10000;
pub const SHM_RND: i32 = 0o20000;
pub const SHM_REMAP: i32 = 0o40000;
pub const SHM_EXEC: i32 = 0o100000;

pub const SHM_LOCK: i32 = 11;
pub const SHM_UNLOCK: i32 = 12;
pub const SHM_STAT: i32 = 13;
pub const SHM_INFO: i32 = 14;
pub const SHM_STAT_ANY: i32 = 15;

/// `Segment::state`: the attachment count, plus this bit once IPC_RMID
/// marked the segment for destruction.
const DEST: u64 = 1 << 63;

/// A segment's memory and what changes as it is attached and detached
/// (outside the table lock: detaches happen as address spaces drop areas).
pub struct Segment {
    size: usize,
    pages: Arc<SharedPages>,
    state: AtomicU64,
    atime: AtomicI64,
    dtime: AtomicI64,
    lpid: AtomicU32,
}

impl Segment {
    fn nattch(&self) -> u64 {
        self.state.load(Ordering::Acquire) & !DEST
    }

    fn marked(&self) -> bool {
        self.state.load(Ordering::Acquire) & DEST != 0
    }

    /// Destroyed: marked and no longer attached anywhere.
    fn is_gone(&self) -> bool {
        self.state.load(Ordering::Acquire) == DEST
    }

    /// One more attachment, unless the segment is gone.
    fn try_attach(&self) -> bool {
        self.state.fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| (s != DEST).then_some(s + 1)).is_ok()
    }

    /// Marks the segment for destruction; true if it is gone at once (not
    /// attached).
    fn mark_dest(&self) -> bool {
        let prev = self.state.fetch_or(DEST, Ordering::AcqRel);
        if prev & !DEST == 0 {
            self.pages.clear();
            return true;
        }
        false
    }

    fn touched(&self, attach: bool) {
        let (now, pid) = (now_secs(), current_pid());
        if attach {
            self.atime.store(now, Ordering::Relaxed);
        } else {
            self.dtime.store(now, Ordering::Relaxed);
        }
        if pid != 0 {
            self.lpid.store(pid, Ordering::Relaxed);
        }
    }
}

/// One area's hold on a segment (see `ShmBacking::attach`).
pub struct Attachment {
    seg: Arc<Segment>,
}

impl Attachment {
    fn new(seg: &Arc<Segment>) -> Option<Arc<Attachment>> {
        if !seg.try_attach() {
            return None;
        }
        seg.touched(true);
        Some(Arc::new(Attachment { seg: seg.clone() }))
    }

    /// The attachment of a new area mapping the same segment (a fork's
    /// copy, or a piece split off).
    pub fn duplicate(&self) -> Arc<Attachment> {
        self.seg.state.fetch_add(1, Ordering::AcqRel);
        self.seg.touched(true);
        Arc::new(Attachment { seg: self.seg.clone() })
    }

    /// The segment's size in bytes.
    pub fn size(&self) -> usize {
        self.seg.size
    }

    pub fn same_segment(&self, other: &Attachment) -> bool {
        Arc::ptr_eq(&self.seg, &other.seg)
    }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        // Only atomics and the pages' own lock here: areas are dropped with
        // the address space locked.
        self.seg.touched(false);
        if self.seg.state.fetch_sub(1, Ordering::AcqRel) == DEST | 1 {
            self.seg.pages.clear();
            PURGE.store(true, Ordering::Release);
        }
    }
}

/// The pid of the calling process (0 in kernel context).
fn current_pid() -> u32 {
    crate::process::current_thread().and_then(|t| t.process()).map_or(0, |p| p.pid())
}

struct Entry {
    perm: Perm,
    seg: Arc<Segment>,
    cpid: u32,
    ctime: i64,
}

impl Object for Entry {
    fn perm(&self) -> &Perm {
        &self.perm
    }
    fn perm_mut(&mut self) -> &mut Perm {
        &mut self.perm
    }
}

impl Entry {
    /// Pages the segment's size spans (its share of shmall).
    fn pages(&self) -> u64 {
        self.seg.size.div_ceil(PAGE_SIZE) as u64
    }
}

static SHM: SpinLock<Table<Entry>, { level::IPC }> = SpinLock::new(Table::new(SHMMNI));
/// Set when a destroyed segment left the table's slot to sweep.
static PURGE: AtomicBool = AtomicBool::new(false);

fn table() -> SpinLockGuard<'static, Table<Entry>, { level::IPC }> {
    let mut t = SHM.lock();
    if PURGE.swap(false, Ordering::AcqRel) {
        t.retain(|e| !e.seg.is_gone());
    }
    t
}

/// shmget(2).
pub fn get(key: i32, size: u64, flags: i32, creds: &Credentials, pid: u32) -> Result<i32> {
    let mut t = table();
    let found = lookup(&t, key, flags, creds, |e| {
        if (e.seg.size as u64) < size { Err(Error::new(Errno::EINVAL)) } else { Ok(()) }
    })?;
    if let Lookup::Existing(id) = found {
        return Ok(id);
    }
    if !(SHMMIN..=SHMMAX).contains(&size) {
        return Err(Error::new(Errno::EINVAL));
    }
    let pages = size.div_ceil(PAGE_SIZE as u64);
    let total: u64 = t.iter().map(|(_, e)| e.pages()).sum();
    if total.checked_add(pages).is_none_or(|n| n > SHMALL) {
        return Err(Error::new(Errno::ENOSPC));
    }
    let size = usize::try_from(size).map_err(|_| Error::new(Errno::ENOSPC))?;
    let seg = Arc::new(Segment {
        size,
        pages: SharedPages::new(),
        state: AtomicU64::new(0),
        atime: AtomicI64::new(0),
        dtime: AtomicI64::new(0),
        lpid: AtomicU32::new(0),
    });
    t.insert(Entry { perm: Perm::new(key, flags, creds), seg, cpid: pid, ctime: now_secs() })
}

/// What shmat maps: the segment's pages, its size and the new area's
/// attachment.
pub struct Attach {
    pub pages: Arc<SharedPages>,
    pub size: usize,
    pub attachment: Arc<Attachment>,
}

/// The lookup half of shmat(2): access for `flags` (read, plus write
/// unless SHM_RDONLY, plus execute with SHM_EXEC), then an attachment.
pub fn attach(id: i32, flags: i32, creds: &Credentials) -> Result<Attach> {
    let t = table();
    let e = t.get(id)?;
    let mut want = S_IRUGO;
    if flags & SHM_RDONLY == 0 {
        want |= S_IWUGO;
    }
    if flags & SHM_EXEC != 0 {
        want |= S_IXUGO;
    }
    e.perm.check(creds, want)?;
    let attachment = Attachment::new(&e.seg).ok_or(Error::new(Errno::EIDRM))?;
    Ok(Attach { pages: e.seg.pages.clone(), size: e.seg.size, attachment })
}

frame::pod_struct! {
    /// `struct shmid64_ds` on x86-64 (112 bytes).
    pub struct ShmidDs {
        pub perm: Ipc64Perm,
        pub segsz: u64,
        pub atime: i64,
        pub dtime: i64,
        pub ctime: i64,
        pub cpid: i32,
        pub lpid: i32,
        pub nattch: u64,
        pub unused4: u64,
        pub unused5: u64,
    }
}
const _: () = assert!(core::mem::size_of::<ShmidDs>() == 112);

frame::pod_struct! {
    /// `struct shminfo64` (IPC_INFO).
    pub struct ShmInfo64 {
        pub shmmax: u64,
        pub shmmin: u64,
        pub shmmni: u64,
        pub shmseg: u64,
        pub shmall: u64,
        pub unused: [u64; 4],
    }
}
const _: () = assert!(core::mem::size_of::<ShmInfo64>() == 72);

frame::pod_struct! {
    /// `struct shm_info` (SHM_INFO).
    pub struct ShmInfo {
        pub used_ids: i32,
        pub pad: i32,
        pub shm_tot: u64,
        pub shm_rss: u64,
        pub shm_swp: u64,
        pub swap_attempts: u64,
        pub swap_successes: u64,
    }
}
const _: () = assert!(core::mem::size_of::<ShmInfo>() == 48);

/// What a shmctl command hands back to copy out.
pub enum CtlOut {
    None,
    Stat(ShmidDs),
    Info(ShmInfo64),
    ShmInfo(ShmInfo),
}

/// shmctl(2) once `IPC_SET`'s buffer has been read (`set`); returns the
/// syscall's value and what to copy to the user's buffer.
pub fn ctl(id: i32, cmd: i32, set: Option<&ShmidDs>, creds: &Credentials) -> Result<(isize, CtlOut)> {
    if cmd < 0 || id < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let mut t = table();
    match cmd {
        IPC_INFO => {
            let info = ShmInfo64 {
                shmmax: SHMMAX,
                shmmin: SHMMIN,
                shmmni: SHMMNI as u64,
                shmseg: SHMMNI as u64,
                shmall: SHMALL,
                unused: [0; 4],
            };
            Ok((t.max_idx() as isize, CtlOut::Info(info)))
        }
        SHM_INFO => {
            let info = ShmInfo {
                used_ids: t.in_use() as i32,
                pad: 0,
                shm_tot: t.iter().map(|(_, e)| e.pages()).sum(),
                shm_rss: t.iter().map(|(_, e)| e.seg.pages.resident() as u64).sum(),
                shm_swp: 0,
                swap_attempts: 0,
                swap_successes: 0,
            };
            Ok((t.max_idx() as isize, CtlOut::ShmInfo(info)))
        }
        IPC_STAT | SHM_STAT | SHM_STAT_ANY => {
            let (ret, e) = if cmd == IPC_STAT { (0, t.get(id)?) } else { t.by_index(id)? };
            if cmd != SHM_STAT_ANY {
                e.perm.check(creds, S_IRUGO)?;
            }
            let mut perm = e.perm.to_user();
            if e.seg.marked() {
                perm.mode |= SHM_DEST;
            }
            let ds = ShmidDs {
                perm,
                segsz: e.seg.size as u64,
                atime: e.seg.atime.load(Ordering::Relaxed),
                dtime: e.seg.dtime.load(Ordering::Relaxed),
                ctime: e.ctime,
                cpid: e.cpid as i32,
                lpid: e.seg.lpid.load(Ordering::Relaxed) as i32,
                nattch: e.seg.nattch(),
                unused4: 0,
                unused5: 0,
            };
            Ok((ret as isize, CtlOut::Stat(ds)))
        }
        IPC_SET => {
            let new = set.ok_or(Error::new(Errno::EFAULT))?;
            let e = t.get_mut(id)?;
            e.perm.check_owner(creds)?;
            e.perm.set(new.perm.uid, new.perm.gid, new.perm.mode)?;
            e.ctime = now_secs();
            Ok((0, CtlOut::None))
        }
        IPC_RMID => {
            let e = t.get_mut(id)?;
            e.perm.check_owner(creds)?;
            // No longer found by its key.
            e.perm.key = super::IPC_PRIVATE;
            if e.seg.mark_dest() {
                t.remove(id);
            }
            Ok((0, CtlOut::None))
        }
        SHM_LOCK | SHM_UNLOCK => {
            let e = t.get_mut(id)?;
            e.perm.check_owner(creds)?;
            // Nothing is ever swapped out; the flag is only reported.
            if cmd == SHM_LOCK {
                e.perm.mode |= SHM_LOCKED;
            } else {
                e.perm.mode &= !SHM_LOCKED;
            }
            Ok((0, CtlOut::None))
        }
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

/// /proc/sysvipc/shm.
pub fn proc_text() -> alloc::string::String {
    use core::fmt::Write;
    let mut s = alloc::string::String::from(
        "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n",
    );
    let t = table();
    for (id, e) in t.iter() {
        let mode = e.perm.mode | if e.seg.marked() { SHM_DEST } else { 0 };
        let _ = writeln!(
            s,
            "{:>10} {:>10}  {:>4o} {:>21} {:>5} {:>5}  {:>5} {:>5} {:>5} {:>5} {:>5} {:>10} {:>10} {:>10} {:>21} {:>21}",
            e.perm.key,
            id,
            mode,
            e.seg.size,
            e.cpid,
            e.seg.lpid.load(Ordering::Relaxed),
            e.seg.nattch(),
            e.perm.uid,
            e.perm.gid,
            e.perm.cuid,
            e.perm.cgid,
            e.seg.atime.load(Ordering::Relaxed),
            e.seg.dtime.load(Ordering::Relaxed),
            e.ctime,
            e.seg.pages.resident() * PAGE_SIZE,
            0
        );
    }
    s
}
