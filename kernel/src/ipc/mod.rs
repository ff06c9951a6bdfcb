//! System V IPC (svipc(7)): shared memory segments, semaphore sets and
//! message queues, each kind in its own table of objects named by a key
//! and an id.
//!
//! An id is `seq * 32768 + index`: the index is the object's slot in its
//! table, and the sequence number changes as slots are reused, so an id of
//! a removed object does not silently name its successor (EINVAL, as on
//! Linux). Each table sits behind one spin lock at level IPC, which is
//! never held across a copy to or from user memory, a sleep, or a change of
//! an address space: syscalls copy arguments in first, and results out
//! after unlocking.

pub mod msg;
pub mod sem;
pub mod shm;

use alloc::collections::BTreeMap;

use crate::error::{Errno, Error, Result};
use crate::process::creds::Credentials;

pub const IPC_PRIVATE: i32 = 0;
pub const IPC_CREAT: i32 = 0o1000;
pub const IPC_EXCL: i32 = 0o2000;
pub const IPC_NOWAIT: i32 = 0o4000;

pub const IPC_RMID: i32 = 0;
pub const IPC_SET: i32 = 1;
pub const IPC_STAT: i32 = 2;
pub const IPC_INFO: i32 = 3;

/// Slots per table (Linux's IPCMNI): the index part of an id.
pub const IPCMNI: usize = 32768;
const IPCMNI_SHIFT: u32 = 15;
/// Sequence numbers wrap here (INT_MAX >> IPCMNI_SHIFT).
const SEQ_MAX: u32 = (i32::MAX as u32) >> IPCMNI_SHIFT;
/// Indices are handed out cyclically in at least this many slots, so a
/// freed id is not reused at once.
const MIN_CYCLE: usize = 64;

/// The permission bits of a mode (S_IRWXUGO).
const S_IRWXUGO: u32 = 0o777;
pub const S_IRUGO: u32 = 0o444;
pub const S_IWUGO: u32 = 0o222;
pub const S_IXUGO: u32 = 0o111;

/// Owner, creator and access mode of an object (`struct kern_ipc_perm`).
#[derive(Clone, Debug)]
pub struct Perm {
    pub key: i32,
    pub uid: u32,
    pub gid: u32,
    pub cuid: u32,
    pub cgid: u32,
    /// Permission bits plus the kind's own flags (SHM_DEST, SHM_LOCKED).
    pub mode: u32,
    pub seq: u32,
}

impl Perm {
    /// A new object's permissions: owner and creator are the caller.
    pub fn new(key: i32, flags: i32, creds: &Credentials) -> Perm {
        Perm {
            key,
            uid: creds.euid,
            gid: creds.egid,
            cuid: creds.euid,
            cgid: creds.egid,
            mode: flags as u32 & S_IRWXUGO,
            seq: 0,
        }
    }

    /// Whether `creds` may access the object as `flag`'s permission bits
    /// ask (any of the owner/group/other triplets of `flag`); the holder
    /// of CAP_IPC_OWNER always may.
    pub fn allows(&self, creds: &Credentials, flag: u32) -> bool {
        let requested = (flag >> 6) | (flag >> 3) | flag;
        let mut granted = self.mode;
        if creds.euid == self.cuid || creds.euid == self.uid {
            granted >>= 6;
        } else if creds.in_group(self.cgid) || creds.in_group(self.gid) {
            granted >>= 3;
        }
        requested & !granted & 0o7 == 0 || creds.capable(crate::caps::CAP_IPC_OWNER)
    }

    /// `allows`, as EACCES.
    pub fn check(&self, creds: &Credentials, flag: u32) -> Result<()> {
        if self.allows(creds, flag) { Ok(()) } else { Err(Error::new(Errno::EACCES)) }
    }

    /// IPC_SET and IPC_RMID: only the owner, the creator or the holder of
    /// CAP_SYS_ADMIN (EPERM).
    pub fn check_owner(&self, creds: &Credentials) -> Result<()> {
        if creds.euid == self.cuid || creds.euid == self.uid || creds.capable(crate::caps::CAP_SYS_ADMIN) {
            Ok(())
        } else {
            Err(Error::new(Errno::EPERM))
        }
    }

    /// IPC_SET: new owner and permission bits (EINVAL for an id of -1).
    pub fn set(&mut self, uid: u32, gid: u32, mode: u32) -> Result<()> {
        if uid == u32::MAX || gid == u32::MAX {
            return Err(Error::new(Errno::EINVAL));
        }
        self.uid = uid;
        self.gid = gid;
        self.mode = (self.mode & !S_IRWXUGO) | (mode & S_IRWXUGO);
        Ok(())
    }

    /// The user-visible `struct ipc64_perm`.
    pub fn to_user(&self) -> Ipc64Perm {
        Ipc64Perm {
            key: self.key,
            uid: self.uid,
            gid: self.gid,
            cuid: self.cuid,
            cgid: self.cgid,
            mode: self.mode,
            seq: self.seq as u16,
            pad2: 0,
            pad3: 0,
            unused1: 0,
            unused2: 0,
        }
    }
}

frame::pod_struct! {
    /// `struct ipc64_perm` on x86-64 (48 bytes).
    #[derive(Debug)]
    pub struct Ipc64Perm {
        pub key: i32,
        pub uid: u32,
        pub gid: u32,
        pub cuid: u32,
        pub cgid: u32,
        pub mode: u32,
        pub seq: u16,
        pub pad2: u16,
        pub pad3: u32,
        pub unused1: u64,
        pub unused2: u64,
    }
}
const _: () = assert!(core::mem::size_of::<Ipc64Perm>() == 48);

/// What every object of a table has: its permissions.
pub trait Object {
    fn perm(&self) -> &Perm;
    fn perm_mut(&mut self) -> &mut Perm;
}

/// One kind's objects, by index.
pub struct Table<T> {
    slots: BTreeMap<usize, T>,
    /// The sequence number the next id gets (bumped when the cyclic index
    /// allocation wraps around).
    seq: u32,
    /// The last index handed out, and where the next search starts.
    last_idx: Option<usize>,
    next: usize,
    /// Most objects at once (SHMMNI, SEMMNI, MSGMNI).
    limit: usize,
}

impl<T: Object> Table<T> {
    pub const fn new(limit: usize) -> Table<T> {
        Table { slots: BTreeMap::new(), seq: 0, last_idx: None, next: 0, limit }
    }

    pub fn in_use(&self) -> usize {
        self.slots.len()
    }

    /// The highest index in use (the return value of IPC_INFO and the
    /// *_INFO commands), 0 if the table is empty.
    pub fn max_idx(&self) -> usize {
        self.slots.keys().next_back().copied().unwrap_or(0)
    }

    pub fn find_key(&self, key: i32) -> Option<(i32, &T)> {
        self.slots.iter().find(|(_, o)| o.perm().key == key).map(|(i, o)| (make_id(o.perm().seq, *i), o))
    }

    /// The object with id `id`; EINVAL if there is none, or if the slot now
    /// holds a later object.
    pub fn get(&self, id: i32) -> Result<&T> {
        let (idx, seq) = split_id(id)?;
        self.slots.get(&idx).filter(|o| o.perm().seq == seq).ok_or(Error::new(Errno::EINVAL))
    }

    pub fn get_mut(&mut self, id: i32) -> Result<&mut T> {
        let (idx, seq) = split_id(id)?;
        self.slots.get_mut(&idx).filter(|o| o.perm().seq == seq).ok_or(Error::new(Errno::EINVAL))
    }

    /// The object in slot `idx` and its id (the *_STAT commands).
    pub fn by_index(&self, idx: i32) -> Result<(i32, &T)> {
        let idx = usize::try_from(idx).map_err(|_| Error::new(Errno::EINVAL))?;
        let o = self.slots.get(&idx).ok_or(Error::new(Errno::EINVAL))?;
        Ok((make_id(o.perm().seq, idx), o))
    }

    pub fn remove(&mut self, id: i32) -> Option<T> {
        let (idx, seq) = split_id(id).ok()?;
        if self.slots.get(&idx)?.perm().seq != seq {
            return None;
        }
        self.slots.remove(&idx)
    }

    /// Keeps only the objects for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.slots.retain(|_, o| keep(o));
    }

    pub fn iter(&self) -> impl Iterator<Item = (i32, &T)> {
        self.slots.iter().map(|(i, o)| (make_id(o.perm().seq, *i), o))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.values_mut()
    }

    /// Adds an object and returns its id; ENOSPC if the table is full.
    pub fn insert(&mut self, mut obj: T) -> Result<i32> {
        if self.slots.len() >= self.limit.min(IPCMNI) {
            return Err(Error::new(Errno::ENOSPC));
        }
        // Cyclic allocation over a window that grows with the number of
        // objects, as Linux's idr_alloc_cyclic in ipc_idr_alloc.
        let window = (self.slots.len() * 3 / 2).clamp(MIN_CYCLE, IPCMNI);
        let start = if self.next >= window { 0 } else { self.next };
        let idx = (start..window)
            .chain(0..start)
            .find(|i| !self.slots.contains_key(i))
            .ok_or(Error::new(Errno::ENOSPC))?;
        if self.last_idx.is_some_and(|l| idx <= l) {
            self.seq += 1;
            if self.seq >= SEQ_MAX {
                self.seq = 0;
            }
        }
        self.last_idx = Some(idx);
        self.next = idx + 1;
        obj.perm_mut().seq = self.seq;
        let id = make_id(self.seq, idx);
        self.slots.insert(idx, obj);
        Ok(id)
    }
}

fn make_id(seq: u32, idx: usize) -> i32 {
    ((seq << IPCMNI_SHIFT) as usize + idx) as i32
}

fn split_id(id: i32) -> Result<(usize, u32)> {
    if id < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    Ok((id as usize % IPCMNI, (id as u32) >> IPCMNI_SHIFT))
}

/// What a *get call does with its key and flags (ipcget): a new object for
/// IPC_PRIVATE or an unused key with IPC_CREAT, the existing one otherwise.
pub enum Lookup {
    New,
    Existing(i32),
}

/// The common part of shmget/semget/msgget on an already locked table:
/// ENOENT without IPC_CREAT, EEXIST with IPC_CREAT|IPC_EXCL; `more` checks
/// the kind's own arguments against the existing object (size, nsems)
/// before the access check (EACCES), as Linux orders them.
pub fn lookup<T: Object>(
    table: &Table<T>,
    key: i32,
    flags: i32,
    creds: &Credentials,
    more: impl FnOnce(&T) -> Result<()>,
) -> Result<Lookup> {
    if key == IPC_PRIVATE {
        return Ok(Lookup::New);
    }
    match table.find_key(key) {
        None if flags & IPC_CREAT != 0 => Ok(Lookup::New),
        None => Err(Error::new(Errno::ENOENT)),
        Some(_) if flags & IPC_CREAT != 0 && flags & IPC_EXCL != 0 => Err(Error::new(Errno::EEXIST)),
        Some((id, obj)) => {
            more(obj)?;
            obj.perm().check(creds, flags as u32 & 0o777)?;
            Ok(Lookup::Existing(id))
        }
    }
}

/// Seconds of the realtime clock (the *_time fields).
pub fn now_secs() -> i64 {
    (crate::time::now_ns(crate::time::ClockId::Realtime) / 1_000_000_000) as i64
}

/// fork/clone: a child made with CLONE_SYSVSEM shares the parent's
/// semaphore undo list; otherwise it starts with none.
pub fn on_clone(parent: crate::process::Pid, child: crate::process::Pid, share_undo: bool) {
    if share_undo {
        sem::share_undo(parent, child);
    }
}

/// Process exit: the semaphore adjustments of its undo list (if it was the
/// list's last user) are applied. Shared memory detaches as the address
/// space goes.
pub fn on_exit(pid: crate::process::Pid) {
    sem::exit_undo(pid);
}
