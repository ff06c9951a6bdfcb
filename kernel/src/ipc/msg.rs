//! System V message queues (msgget(2), msgsnd(2), msgrcv(2), msgctl(2)).
//!
//! Senders wait while the queue is full (msg_qbytes), receivers while no
//! message matches; both sleep on the queue's wait queue and retry when it
//! changes. Removal wakes them with EIDRM; a signal ends the wait with
//! ERESTARTNOHAND (EINTR when a handler runs), as on Linux.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use frame::sync::{level, SpinLock, WaitQueue};

use super::{lookup, now_secs, Ipc64Perm, Lookup, Object, Perm, Table, IPC_INFO, IPC_NOWAIT, IPC_RMID, IPC_SET, IPC_STAT, S_IRUGO, S_IWUGO};
use crate::error::{Errno, Error, Result};
use crate::process::creds::Credentials;

/// Largest message, default queue capacity in bytes, most queues
/// (Linux's defaults).
pub const MSGMAX: usize = 8192;
pub const MSGMNB: usize = 16384;
pub const MSGMNI: usize = 32000;
const MSGPOOL: i32 = (MSGMNI * MSGMNB / 1024) as i32;
const MSGMAP: i32 = MSGMNB as i32;
const MSGTQL: i32 = MSGMNB as i32;
const MSGSSZ: i32 = 16;
const MSGSEG: u16 = 0xffff;

pub const MSG_NOERROR: i32 = 0o10000;
pub const MSG_EXCEPT: i32 = 0o20000;
pub const MSG_COPY: i32 = 0o40000;

pub const MSG_STAT: i32 = 11;
pub const MSG_INFO: i32 = 12;
pub const MSG_STAT_ANY: i32 = 13;

struct Shared {
    wq: WaitQueue,
    removed: AtomicBool,
}

pub struct Message {
    pub mtype: i64,
    pub data: Vec<u8>,
}

struct Queue {
    perm: Perm,
    messages: VecDeque<Message>,
    cbytes: usize,
    qbytes: usize,
    stime: i64,
    rtime: i64,
    ctime: i64,
    lspid: u32,
    lrpid: u32,
    shared: Arc<Shared>,
}

impl Object for Queue {
    fn perm(&self) -> &Perm {
        &self.perm
    }
    fn perm_mut(&mut self) -> &mut Perm {
        &mut self.perm
    }
}

static MSG: SpinLock<Table<Queue>, { level::IPC }> = SpinLock::new(Table::new(MSGMNI));

/// msgget(2).
pub fn get(key: i32, flags: i32, creds: &Credentials) -> Result<i32> {
    let mut t = MSG.lock();
    if let Lookup::Existing(id) = lookup(&t, key, flags, creds, |_| Ok(()))? {
        return Ok(id);
    }
    let q = Queue {
        perm: Perm::new(key, flags, creds),
        messages: VecDeque::new(),
        cbytes: 0,
        qbytes: MSGMNB,
        stime: 0,
        rtime: 0,
        ctime: now_secs(),
        lspid: 0,
        lrpid: 0,
        shared: Arc::new(Shared { wq: WaitQueue::new(), removed: AtomicBool::new(false) }),
    };
    t.insert(q)
}

/// The queue `id` for a send or receive: its shared part.
fn shared_of(id: i32) -> Result<Arc<Shared>> {
    Ok(MSG.lock().get(id)?.shared.clone())
}

/// Runs `step` on the queue under the lock until it is done (`Some`),
/// sleeping on the queue in between; EIDRM once the queue is removed.
fn wait_on<R>(
    process: &Arc<crate::process::Process>,
    thread: &crate::process::Thread,
    id: i32,
    mut step: impl FnMut(&mut Queue) -> Option<Result<R>>,
) -> Result<R> {
    let shared = shared_of(id)?;
    let attempt = || -> Option<Result<R>> {
        if shared.removed.load(Ordering::Acquire) {
            return Some(Err(Error::new(Errno::EIDRM)));
        }
        let mut t = MSG.lock();
        let q = match t.get_mut(id) {
            Ok(q) if Arc::ptr_eq(&q.shared, &shared) => q,
            _ => return Some(Err(Error::new(Errno::EIDRM))),
        };
        let r = step(q);
        drop(t);
        if matches!(r, Some(Ok(_))) {
            // The queue changed: waiting senders or receivers may proceed.
            shared.wq.wake_all();
        }
        r
    };
    match crate::process::signal::wait_interruptible(process, thread, &shared.wq, attempt) {
        Ok(r) => r,
        Err(_) => Err(Error::new(Errno::ERESTARTNOHAND)),
    }
}

/// msgsnd(2), once the message has been read from the caller.
pub fn send(
    process: &Arc<crate::process::Process>,
    thread: &crate::process::Thread,
    id: i32,
    msg: Message,
    flags: i32,
) -> Result<()> {
    let creds = process.creds();
    let pid = process.pid();
    let mut msg = Some(msg);
    wait_on(process, thread, id, |q| {
        if let Err(e) = q.perm.check(&creds, S_IWUGO) {
            return Some(Err(e));
        }
        let len = msg.as_ref().map_or(0, |m| m.data.len());
        // Room for the bytes, and for one more message (zero-length
        // messages are limited by msg_qbytes too).
        if len + q.cbytes <= q.qbytes && q.messages.len() < q.qbytes {
            // msgsnd(2): ENOMEM when the message cannot be queued.
            if let Err(e) = crate::fallible::reserve(&mut q.messages, 1) {
                return Some(Err(e));
            }
            let m = msg.take()?;
            q.cbytes += len;
            q.messages.push_back(m);
            q.lspid = pid;
            q.stime = now_secs();
            return Some(Ok(()));
        }
        if flags & IPC_NOWAIT != 0 {
            return Some(Err(Error::new(Errno::EAGAIN)));
        }
        None
    })
}

/// How msgrcv picks a message (from msgtyp and the flags).
#[derive(Clone, Copy)]
enum Search {
    Any,
    Equal(i64),
    NotEqual(i64),
    /// The lowest type not above the bound.
    LessEqual(i64),
    /// MSG_COPY: the message at this position.
    Number(i64),
}

fn find(messages: &VecDeque<Message>, search: Search) -> Option<usize> {
    match search {
        Search::Any => (!messages.is_empty()).then_some(0),
        Search::Equal(t) => messages.iter().position(|m| m.mtype == t),
        Search::NotEqual(t) => messages.iter().position(|m| m.mtype != t),
        Search::LessEqual(t) => {
            let mut best: Option<(usize, i64)> = None;
            for (i, m) in messages.iter().enumerate() {
                if m.mtype <= t && best.is_none_or(|(_, b)| m.mtype < b) {
                    best = Some((i, m.mtype));
                }
            }
            best.map(|(i, _)| i)
        }
        Search::Number(n) => usize::try_from(n).ok().filter(|n| *n < messages.len()),
    }
}

/// msgrcv(2) up to copying out: the message (a copy of it for MSG_COPY),
/// after the checks Linux makes.
pub fn receive(
    process: &Arc<crate::process::Process>,
    thread: &crate::process::Thread,
    id: i32,
    bufsz: usize,
    msgtyp: i64,
    flags: i32,
) -> Result<Message> {
    if id < 0 || bufsz > isize::MAX as usize {
        return Err(Error::new(Errno::EINVAL));
    }
    let copy = flags & MSG_COPY != 0;
    if copy && (flags & MSG_EXCEPT != 0 || flags & IPC_NOWAIT == 0) {
        return Err(Error::new(Errno::EINVAL));
    }
    let search = if copy {
        Search::Number(msgtyp)
    } else if msgtyp == 0 {
        Search::Any
    } else if msgtyp < 0 {
        Search::LessEqual(msgtyp.checked_neg().unwrap_or(i64::MAX))
    } else if flags & MSG_EXCEPT != 0 {
        Search::NotEqual(msgtyp)
    } else {
        Search::Equal(msgtyp)
    };
    let creds = process.creds();
    let pid = process.pid();
    wait_on(process, thread, id, |q| {
        if let Err(e) = q.perm.check(&creds, S_IRUGO) {
            return Some(Err(e));
        }
        if let Some(i) = find(&q.messages, search) {
            let m = &q.messages[i];
            if bufsz < m.data.len() && flags & MSG_NOERROR == 0 {
                return Some(Err(Error::new(Errno::E2BIG)));
            }
            if copy {
                // A copy is taken into a buffer of min(bufsz, MSGMAX) bytes.
                if m.data.len() > bufsz.min(MSGMAX) {
                    return Some(Err(Error::new(Errno::EINVAL)));
                }
                return Some(Ok(Message { mtype: m.mtype, data: m.data.clone() }));
            }
            let m = q.messages.remove(i)?;
            q.cbytes -= m.data.len();
            q.lrpid = pid;
            q.rtime = now_secs();
            return Some(Ok(m));
        }
        if flags & IPC_NOWAIT != 0 {
            return Some(Err(Error::new(Errno::ENOMSG)));
        }
        None
    })
}

frame::pod_struct! {
    /// `struct msqid64_ds` on x86-64 (120 bytes).
    pub struct MsqidDs {
        pub perm: Ipc64Perm,
        pub stime: i64,
        pub rtime: i64,
        pub ctime: i64,
        pub cbytes: u64,
        pub qnum: u64,
        pub qbytes: u64,
        pub lspid: i32,
        pub lrpid: i32,
        pub unused4: u64,
        pub unused5: u64,
    }
}
const _: () = assert!(core::mem::size_of::<MsqidDs>() == 120);

frame::pod_struct! {
    /// `struct msginfo` (IPC_INFO, MSG_INFO).
    pub struct MsgInfo {
        pub msgpool: i32,
        pub msgmap: i32,
        pub msgmax: i32,
        pub msgmnb: i32,
        pub msgmni: i32,
        pub msgssz: i32,
        pub msgtql: i32,
        pub msgseg: u16,
        pub pad: u16,
    }
}
const _: () = assert!(core::mem::size_of::<MsgInfo>() == 32);

pub enum CtlOut {
    None,
    Stat(MsqidDs),
    Info(MsgInfo),
}

/// msgctl(2); `set` is IPC_SET's buffer, already read.
pub fn ctl(id: i32, cmd: i32, set: Option<&MsqidDs>, creds: &Credentials) -> Result<(isize, CtlOut)> {
    if id < 0 || cmd < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let mut t = MSG.lock();
    match cmd {
        IPC_INFO | MSG_INFO => {
            let (msgpool, msgmap, msgtql) = if cmd == MSG_INFO {
                let msgs: usize = t.iter().map(|(_, q)| q.messages.len()).sum();
                let bytes: usize = t.iter().map(|(_, q)| q.cbytes).sum();
                (t.in_use() as i32, msgs.min(i32::MAX as usize) as i32, bytes.min(i32::MAX as usize) as i32)
            } else {
                (MSGPOOL, MSGMAP, MSGTQL)
            };
            let info = MsgInfo {
                msgpool,
                msgmap,
                msgmax: MSGMAX as i32,
                msgmnb: MSGMNB as i32,
                msgmni: MSGMNI as i32,
                msgssz: MSGSSZ,
                msgtql,
                msgseg: MSGSEG,
                pad: 0,
            };
            Ok((t.max_idx() as isize, CtlOut::Info(info)))
        }
        IPC_STAT | MSG_STAT | MSG_STAT_ANY => {
            let (ret, q) = if cmd == IPC_STAT { (0, t.get(id)?) } else { t.by_index(id)? };
            if cmd != MSG_STAT_ANY {
                q.perm.check(creds, S_IRUGO)?;
            }
            let ds = MsqidDs {
                perm: q.perm.to_user(),
                stime: q.stime,
                rtime: q.rtime,
                ctime: q.ctime,
                cbytes: q.cbytes as u64,
                qnum: q.messages.len() as u64,
                qbytes: q.qbytes as u64,
                lspid: q.lspid as i32,
                lrpid: q.lrpid as i32,
                unused4: 0,
                unused5: 0,
            };
            Ok((ret as isize, CtlOut::Stat(ds)))
        }
        IPC_SET => {
            let new = set.ok_or(Error::new(Errno::EFAULT))?;
            let q = t.get_mut(id)?;
            q.perm.check_owner(creds)?;
            // Raising the capacity above MSGMNB takes CAP_SYS_RESOURCE.
            if new.qbytes > MSGMNB as u64 && !creds.capable(crate::caps::CAP_SYS_RESOURCE) {
                return Err(Error::new(Errno::EPERM));
            }
            q.perm.set(new.perm.uid, new.perm.gid, new.perm.mode)?;
            q.qbytes = usize::try_from(new.qbytes).unwrap_or(usize::MAX);
            q.ctime = now_secs();
            let shared = q.shared.clone();
            drop(t);
            // Senders may fit now; waiters recheck their access too.
            shared.wq.wake_all();
            Ok((0, CtlOut::None))
        }
        IPC_RMID => {
            t.get(id)?.perm.check_owner(creds)?;
            if let Some(q) = t.remove(id) {
                drop(t);
                q.shared.removed.store(true, Ordering::Release);
                q.shared.wq.wake_all();
            }
            Ok((0, CtlOut::None))
        }
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

/// /proc/sysvipc/msg.
pub fn proc_text() -> alloc::string::String {
    use core::fmt::Write;
    let mut s = alloc::string::String::from(
        "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid      stime      rtime      ctime\n",
    );
    let t = MSG.lock();
    for (id, q) in t.iter() {
        let p = &q.perm;
        let _ = writeln!(
            s,
            "{:>10} {:>10}  {:>4o}  {:>10} {:>10} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>10} {:>10} {:>10}",
            p.key,
            id,
            p.mode,
            q.cbytes,
            q.messages.len(),
            q.lspid,
            q.lrpid,
            p.uid,
            p.gid,
            p.cuid,
            p.cgid,
            q.stime,
            q.rtime,
            q.ctime
        );
    }
    s
}
