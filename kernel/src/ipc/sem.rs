//! System V semaphore sets (semget(2), semop(2), semctl(2)).
//!
//! A semop call applies all its operations or none, under the table lock.
//! A caller that must wait registers which semaphore and condition it waits
//! on (for GETNCNT/GETZCNT), sleeps on the set's wait queue and retries
//! whenever a value changes; removal of the set wakes it with EIDRM.
//!
//! SEM_UNDO adjustments are kept in each set, per undo list. A process gets
//! an undo list on its first SEM_UNDO operation; a child made with
//! CLONE_SYSVSEM shares its parent's, any other child starts without one.
//! When the last process using a list exits, its adjustments are added to
//! the semaphores (clamped to 0..=SEMVMX).

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use frame::sync::{level, SpinLock, WaitQueue};

use super::{lookup, now_secs, Ipc64Perm, Lookup, Object, Perm, Table, IPC_INFO, IPC_NOWAIT, IPC_RMID, IPC_SET, IPC_STAT, S_IRUGO, S_IWUGO};
use crate::error::{Errno, Error, Result};
use crate::process::creds::Credentials;
use crate::process::Pid;

/// Most semaphores in a set, in all sets, operations per semop call, sets;
/// largest value and largest undo adjustment (Linux's defaults).
pub const SEMMSL: usize = 32000;
pub const SEMMNS: usize = 1_024_000_000;
pub const SEMOPM: usize = 500;
pub const SEMMNI: usize = 32000;
pub const SEMVMX: i32 = 32767;
pub const SEMAEM: i32 = SEMVMX;
const SEMMAP: i32 = SEMMNS as i32;
const SEMMNU: i32 = SEMMNS as i32;
const SEMUME: i32 = SEMOPM as i32;
const SEMUSZ: i32 = 20;

pub const SEM_UNDO: i16 = 0o10000;

pub const GETPID: i32 = 11;
pub const GETVAL: i32 = 12;
pub const GETALL: i32 = 13;
pub const GETNCNT: i32 = 14;
pub const GETZCNT: i32 = 15;
pub const SETVAL: i32 = 16;
pub const SETALL: i32 = 17;
pub const SEM_STAT: i32 = 18;
pub const SEM_INFO: i32 = 19;
pub const SEM_STAT_ANY: i32 = 20;

/// One `struct sembuf`.
#[derive(Clone, Copy, Debug)]
pub struct SemBuf {
    pub num: u16,
    pub op: i16,
    pub flg: i16,
}

/// What waiters of a set share with it outside the table lock.
struct Shared {
    wq: WaitQueue,
    removed: AtomicBool,
}

struct Sem {
    val: i32,
    /// Last process to operate on it (GETPID).
    pid: u32,
}

/// A semop caller waiting for semaphore `sem` to become zero (`zero`) or
/// large enough.
struct Waiter {
    token: u64,
    sem: u16,
    zero: bool,
}

struct SemSet {
    perm: Perm,
    sems: Vec<Sem>,
    otime: i64,
    ctime: i64,
    /// Undo adjustments (semadj) by undo list.
    undo: BTreeMap<u64, Vec<i16>>,
    waiters: Vec<Waiter>,
    shared: Arc<Shared>,
}

impl Object for SemSet {
    fn perm(&self) -> &Perm {
        &self.perm
    }
    fn perm_mut(&mut self) -> &mut Perm {
        &mut self.perm
    }
}

/// Why a semop cannot complete now.
enum Blocked {
    /// Waiting on semaphore `sem` (for zero, or for a large enough value).
    Wait { sem: u16, zero: bool },
    Fail(Error),
}

impl SemSet {
    /// Applies `sops` in order, all or none (Linux's
    /// perform_atomic_semop).
    fn try_ops(&mut self, sops: &[SemBuf], pid: u32, owner: Option<u64>) -> core::result::Result<(), Blocked> {
        let nsems = self.sems.len();
        // semop(2): ENOMEM when SEM_UNDO finds no memory for the undo
        // structure (its BTreeMap entry is a small node, made infallibly).
        if let Some(o) = owner
            && !self.undo.contains_key(&o)
        {
            let mut fresh = crate::fallible::with_capacity(nsems).map_err(Blocked::Fail)?;
            fresh.resize(nsems, 0i16);
            self.undo.insert(o, fresh);
        }
        let mut adj = owner.and_then(|o| self.undo.get_mut(&o));
        let mut failure = None;
        let mut done = 0;
        for sop in sops {
            let n = sop.num as usize;
            let op = sop.op as i32;
            let cur = self.sems[n].val;
            let result = cur + op;
            if (op == 0 && cur != 0) || result < 0 {
                failure = Some(if sop.flg as i32 & IPC_NOWAIT != 0 {
                    Blocked::Fail(Error::new(Errno::EAGAIN))
                } else {
                    Blocked::Wait { sem: sop.num, zero: op == 0 }
                });
                break;
            }
            if result > SEMVMX {
                failure = Some(Blocked::Fail(Error::new(Errno::ERANGE)));
                break;
            }
            if sop.flg & SEM_UNDO != 0
                && let Some(a) = adj.as_mut()
            {
                let undo = a[n] as i32 - op;
                if !(-SEMAEM - 1..=SEMAEM).contains(&undo) {
                    failure = Some(Blocked::Fail(Error::new(Errno::ERANGE)));
                    break;
                }
                a[n] = undo as i16;
            }
            self.sems[n].val = result;
            done += 1;
        }
        if let Some(f) = failure {
            for sop in sops[..done].iter().rev() {
                let n = sop.num as usize;
                self.sems[n].val -= sop.op as i32;
                if sop.flg & SEM_UNDO != 0
                    && let Some(a) = adj.as_mut()
                {
                    a[n] = (a[n] as i32 + sop.op as i32) as i16;
                }
            }
            return Err(f);
        }
        for sop in sops {
            self.sems[sop.num as usize].pid = pid;
        }
        self.otime = now_secs();
        Ok(())
    }

    fn count_waiters(&self, sem: usize, zero: bool) -> usize {
        self.waiters.iter().filter(|w| w.sem as usize == sem && w.zero == zero).count()
    }
}

static SEM: SpinLock<Table<SemSet>, { level::IPC }> = SpinLock::new(Table::new(SEMMNI));
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// semget(2).
pub fn get(key: i32, nsems: i32, flags: i32, creds: &Credentials) -> Result<i32> {
    let nsems = usize::try_from(nsems).ok().filter(|n| *n <= SEMMSL).ok_or(Error::new(Errno::EINVAL))?;
    let mut t = SEM.lock();
    let found = lookup(&t, key, flags, creds, |s| {
        if nsems > s.sems.len() { Err(Error::new(Errno::EINVAL)) } else { Ok(()) }
    })?;
    if let Lookup::Existing(id) = found {
        return Ok(id);
    }
    if nsems == 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let used: usize = t.iter().map(|(_, s)| s.sems.len()).sum();
    if used + nsems > SEMMNS {
        return Err(Error::new(Errno::ENOSPC));
    }
    let set = SemSet {
        perm: Perm::new(key, flags, creds),
        sems: {
            // semget(2): ENOMEM when there is no memory for the set.
            let mut sems = crate::fallible::with_capacity(nsems)?;
            sems.extend((0..nsems).map(|_| Sem { val: 0, pid: 0 }));
            sems
        },
        otime: 0,
        ctime: now_secs(),
        undo: BTreeMap::new(),
        waiters: Vec::new(),
        shared: Arc::new(Shared { wq: WaitQueue::new(), removed: AtomicBool::new(false) }),
    };
    t.insert(set)
}

/// semop(2)/semtimedop(2), once the operations have been read: waits until
/// they can all be applied (unless one that cannot has IPC_NOWAIT:
/// EAGAIN), `deadline` (monotonic ns) bounding the wait (EAGAIN). A signal
/// ends the wait with EINTR, never a restart, as on Linux.
pub fn op(
    process: &Arc<crate::process::Process>,
    thread: &crate::process::Thread,
    id: i32,
    sops: &[SemBuf],
    deadline: Option<u64>,
) -> Result<()> {
    let creds = process.creds();
    let pid = process.pid();
    let max = sops.iter().map(|s| s.num as usize).max().unwrap_or(0);
    let alter = sops.iter().any(|s| s.op != 0);
    let owner = sops.iter().any(|s| s.flg & SEM_UNDO != 0).then(|| undo_owner(pid));
    let shared = {
        let t = SEM.lock();
        let set = t.get(id)?;
        if max >= set.sems.len() {
            return Err(Error::new(Errno::EFBIG));
        }
        set.perm.check(&creds, if alter { S_IWUGO } else { S_IRUGO })?;
        set.shared.clone()
    };
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    let attempt = || -> Option<Result<()>> {
        if shared.removed.load(Ordering::Acquire) {
            return Some(Err(Error::new(Errno::EIDRM)));
        }
        let mut t = SEM.lock();
        let set = match t.get_mut(id) {
            Ok(s) if Arc::ptr_eq(&s.shared, &shared) => s,
            _ => return Some(Err(Error::new(Errno::EIDRM))),
        };
        let r = set.try_ops(sops, pid, owner);
        let blocked = match r {
            Err(Blocked::Wait { sem, zero }) => Some((sem, zero)),
            _ => None,
        };
        match (set.waiters.iter_mut().find(|w| w.token == token), blocked) {
            (Some(w), Some((sem, zero))) => (w.sem, w.zero) = (sem, zero),
            // Blocked: nothing was applied, so ENOMEM undoes nothing.
            (None, Some((sem, zero))) => {
                if let Err(e) = crate::fallible::push(&mut set.waiters, Waiter { token, sem, zero }) {
                    return Some(Err(e));
                }
            }
            (_, None) => set.waiters.retain(|w| w.token != token),
        }
        drop(t);
        match r {
            Ok(()) => {
                if alter {
                    shared.wq.wake_all();
                }
                Some(Ok(()))
            }
            Err(Blocked::Wait { .. }) => None,
            Err(Blocked::Fail(e)) => Some(Err(e)),
        }
    };
    let r = match deadline {
        None => crate::process::signal::wait_interruptible(process, thread, &shared.wq, attempt).map(Some),
        Some(d) => crate::process::signal::wait_interruptible_deadline(process, thread, &shared.wq, attempt, d),
    };
    let r = match r {
        Ok(Some(r)) => r,
        Ok(None) => Err(Error::new(Errno::EAGAIN)),
        Err(_) => Err(Error::new(Errno::EINTR)),
    };
    if r.is_err() {
        let mut t = SEM.lock();
        if let Ok(set) = t.get_mut(id) {
            set.waiters.retain(|w| w.token != token);
        }
    }
    r
}

frame::pod_struct! {
    /// `struct semid64_ds` on x86-64 (104 bytes).
    pub struct SemidDs {
        pub perm: Ipc64Perm,
        pub otime: i64,
        pub unused1: u64,
        pub ctime: i64,
        pub unused2: u64,
        pub nsems: u64,
        pub unused3: u64,
        pub unused4: u64,
    }
}
const _: () = assert!(core::mem::size_of::<SemidDs>() == 104);

frame::pod_struct! {
    /// `struct seminfo` (IPC_INFO, SEM_INFO).
    pub struct SemInfo {
        pub semmap: i32,
        pub semmni: i32,
        pub semmns: i32,
        pub semmnu: i32,
        pub semmsl: i32,
        pub semopm: i32,
        pub semume: i32,
        pub semusz: i32,
        pub semvmx: i32,
        pub semaem: i32,
    }
}
const _: () = assert!(core::mem::size_of::<SemInfo>() == 40);

/// What a semctl command hands back to copy out.
pub enum CtlOut {
    None,
    Stat(SemidDs),
    Info(SemInfo),
    All(Vec<u16>),
}

/// semctl(2) for every command but SETALL (see [`setall_prepare`] and
/// [`setall`]); `set` is IPC_SET's buffer, `val` SETVAL's value.
pub fn ctl(id: i32, semnum: i32, cmd: i32, val: i32, set: Option<&SemidDs>, creds: &Credentials, pid: u32) -> Result<(isize, CtlOut)> {
    if id < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if cmd == SETVAL && !(0..=SEMVMX).contains(&val) {
        return Err(Error::new(Errno::ERANGE));
    }
    let mut t = SEM.lock();
    match cmd {
        IPC_INFO | SEM_INFO => {
            let (semusz, semaem) = if cmd == SEM_INFO {
                (t.in_use() as i32, t.iter().map(|(_, s)| s.sems.len()).sum::<usize>() as i32)
            } else {
                (SEMUSZ, SEMAEM)
            };
            let info = SemInfo {
                semmap: SEMMAP,
                semmni: SEMMNI as i32,
                semmns: SEMMNS as i32,
                semmnu: SEMMNU,
                semmsl: SEMMSL as i32,
                semopm: SEMOPM as i32,
                semume: SEMUME,
                semusz,
                semvmx: SEMVMX,
                semaem,
            };
            Ok((t.max_idx() as isize, CtlOut::Info(info)))
        }
        IPC_STAT | SEM_STAT | SEM_STAT_ANY => {
            let (ret, s) = if cmd == IPC_STAT { (0, t.get(id)?) } else { t.by_index(id)? };
            if cmd != SEM_STAT_ANY {
                s.perm.check(creds, S_IRUGO)?;
            }
            let ds = SemidDs {
                perm: s.perm.to_user(),
                otime: s.otime,
                unused1: 0,
                ctime: s.ctime,
                unused2: 0,
                nsems: s.sems.len() as u64,
                unused3: 0,
                unused4: 0,
            };
            Ok((ret as isize, CtlOut::Stat(ds)))
        }
        GETVAL | GETPID | GETNCNT | GETZCNT | GETALL => {
            let s = t.get(id)?;
            s.perm.check(creds, S_IRUGO)?;
            if cmd == GETALL {
                return Ok((0, CtlOut::All(s.sems.iter().map(|x| x.val as u16).collect())));
            }
            let n = usize::try_from(semnum).ok().filter(|n| *n < s.sems.len()).ok_or(Error::new(Errno::EINVAL))?;
            let v = match cmd {
                GETVAL => s.sems[n].val as isize,
                GETPID => s.sems[n].pid as isize,
                GETNCNT => s.count_waiters(n, false) as isize,
                _ => s.count_waiters(n, true) as isize,
            };
            Ok((v, CtlOut::None))
        }
        SETVAL => {
            let s = t.get_mut(id)?;
            let n = usize::try_from(semnum).ok().filter(|n| *n < s.sems.len()).ok_or(Error::new(Errno::EINVAL))?;
            s.perm.check(creds, S_IWUGO)?;
            for adj in s.undo.values_mut() {
                adj[n] = 0;
            }
            s.sems[n] = Sem { val, pid };
            s.ctime = now_secs();
            let shared = s.shared.clone();
            drop(t);
            shared.wq.wake_all();
            Ok((0, CtlOut::None))
        }
        IPC_SET => {
            let new = set.ok_or(Error::new(Errno::EFAULT))?;
            let s = t.get_mut(id)?;
            s.perm.check_owner(creds)?;
            s.perm.set(new.perm.uid, new.perm.gid, new.perm.mode)?;
            s.ctime = now_secs();
            Ok((0, CtlOut::None))
        }
        IPC_RMID => {
            t.get(id)?.perm.check_owner(creds)?;
            if let Some(s) = t.remove(id) {
                drop(t);
                s.shared.removed.store(true, Ordering::Release);
                s.shared.wq.wake_all();
            }
            Ok((0, CtlOut::None))
        }
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

/// SETALL, first half: the number of values to read from the caller
/// (EINVAL, EACCES as Linux checks before the copy).
pub fn setall_prepare(id: i32, creds: &Credentials) -> Result<usize> {
    if id < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let t = SEM.lock();
    let s = t.get(id)?;
    s.perm.check(creds, S_IWUGO)?;
    Ok(s.sems.len())
}

/// SETALL, second half: sets every value (ERANGE above SEMVMX; EIDRM if
/// the set went away meanwhile) and clears the undo adjustments.
pub fn setall(id: i32, vals: &[u16], pid: u32) -> Result<()> {
    if vals.iter().any(|v| *v as i32 > SEMVMX) {
        return Err(Error::new(Errno::ERANGE));
    }
    let mut t = SEM.lock();
    let s = t.get_mut(id).map_err(|_| Error::new(Errno::EIDRM))?;
    if s.sems.len() != vals.len() {
        return Err(Error::new(Errno::EIDRM));
    }
    for (sem, v) in s.sems.iter_mut().zip(vals) {
        *sem = Sem { val: *v as i32, pid };
    }
    s.undo.clear();
    s.ctime = now_secs();
    let shared = s.shared.clone();
    drop(t);
    shared.wq.wake_all();
    Ok(())
}

/// An undo list (shared by CLONE_SYSVSEM relatives).
struct UndoList(u64);

static UNDO_LISTS: SpinLock<BTreeMap<Pid, Arc<UndoList>>, { level::IPC }> = SpinLock::new(BTreeMap::new());
static NEXT_UNDO: AtomicU64 = AtomicU64::new(1);

fn new_list() -> Arc<UndoList> {
    Arc::new(UndoList(NEXT_UNDO.fetch_add(1, Ordering::Relaxed)))
}

/// The caller's undo list, made on first use.
fn undo_owner(pid: Pid) -> u64 {
    UNDO_LISTS.lock().entry(pid).or_insert_with(new_list).0
}

/// CLONE_SYSVSEM: the child uses the parent's undo list.
pub fn share_undo(parent: Pid, child: Pid) {
    let mut lists = UNDO_LISTS.lock();
    let list = lists.entry(parent).or_insert_with(new_list).clone();
    lists.insert(child, list);
}

/// Process exit: if it was the last user of its undo list, apply the
/// list's adjustments.
pub fn exit_undo(pid: Pid) {
    let Some(list) = UNDO_LISTS.lock().remove(&pid) else {
        return;
    };
    let Some(UndoList(owner)) = Arc::into_inner(list) else {
        return;
    };
    // Exit allocates nothing: waiters are woken under the table lock (a
    // wake takes only higher-level locks).
    let mut t = SEM.lock();
    for s in t.iter_mut() {
        let Some(adj) = s.undo.remove(&owner) else {
            continue;
        };
        for (sem, a) in s.sems.iter_mut().zip(adj) {
            if a != 0 {
                sem.val = (sem.val + a as i32).clamp(0, SEMVMX);
                sem.pid = pid;
            }
        }
        s.otime = now_secs();
        s.shared.wq.wake_all();
    }
    drop(t);
}

/// /proc/sysvipc/sem.
pub fn proc_text() -> alloc::string::String {
    use core::fmt::Write;
    let mut s = alloc::string::String::from(
        "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n",
    );
    let t = SEM.lock();
    for (id, set) in t.iter() {
        let p = &set.perm;
        let _ = writeln!(
            s,
            "{:>10} {:>10}  {:>4o} {:>10} {:>5} {:>5} {:>5} {:>5} {:>10} {:>10}",
            p.key,
            id,
            p.mode,
            set.sems.len(),
            p.uid,
            p.gid,
            p.cuid,
            p.cgid,
            set.otime,
            set.ctime
        );
    }
    s
}
