//! Signal dispositions: the table of `struct sigaction`s a process uses,
//! shared by the processes of a CLONE_SIGHAND family (a process's threads
//! share its whole signal state).

use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use frame::sync::{SpinLock, level};

use super::signal::{NSIG, SigAction};
use crate::error::Result;

/// The group's lock ranks just above the process locks: generation and
/// delivery read a disposition under a process-level lock's release only,
/// never while holding a lock above it.
const GROUP: u8 = level::PROCESS + 1;

/// A table of a group past the first.
struct Table {
    /// Alive while a member uses the table: each member on it holds an
    /// `Arc` of it (`Dispositions::member`), so the strong count is the
    /// number of its members, and members leave without the group's lock.
    members: Weak<()>,
    acts: [SigAction; NSIG],
}

/// A group's tables: the first, inline (a process that never unshares
/// allocates nothing more), and those execve made.
struct Tables {
    first: [SigAction; NSIG],
    more: Vec<Table>,
}

impl Tables {
    fn acts(&mut self, slot: usize) -> &mut [SigAction; NSIG] {
        match slot {
            0 => &mut self.first,
            n => &mut self.more[n - 1].acts,
        }
    }
}

/// A process's dispositions.
///
/// Ownership: the members of a CLONE_SIGHAND family share one group, a lock
/// over their tables, fixed for each member's lifetime, so the one lock
/// that rt_sigaction, generation and delivery take is reached without
/// another lock or a reference count. The group normally holds a single
/// table that every member uses. execve in a member whose table is shared
/// gives it a table of its own (Linux's unshare_sighand) *inside the same
/// group*: only `slot`, the member's index into the tables, changes, under
/// the group's lock. Members of the first table hold no token: they are
/// the group's members (each holds one `Arc` of it, nothing else does)
/// less those of the other tables. A later table no member holds any more
/// is reused by the next unsharing, so a group never has more tables than
/// it had members at once (plus the first); room for one table per member
/// is reserved when a member joins (fork, which can report ENOMEM), so
/// unsharing at execve, past its point of no return, never grows the
/// vector.
pub struct Dispositions {
    /// This member's hold on its table if it is not the first (see
    /// [`Table::members`]); replaced only under the group's lock (a leaf
    /// lock inside it). Declared first so that it is dropped before
    /// `group`: a member leaving is never counted on the first table
    /// while its token still counts it on another.
    member: SpinLock<Option<Arc<()>>>,
    group: Arc<SpinLock<Tables, GROUP>>,
    /// This member's table in `group`: written only under its lock.
    slot: AtomicUsize,
}

impl Dispositions {
    /// A group of its own with `acts`.
    pub fn new(acts: [SigAction; NSIG]) -> Self {
        Dispositions {
            member: SpinLock::new(None),
            group: Arc::new(SpinLock::new(Tables {
                first: acts,
                more: Vec::new(),
            })),
            slot: AtomicUsize::new(0),
        }
    }

    /// The dispositions of `other` itself (CLONE_SIGHAND): a change by
    /// either is seen by both.
    pub fn sharing(other: &Dispositions) -> Result<Self> {
        let mut tables = other.group.lock();
        // Room for a table of its own per member, the new one included.
        let members = Arc::strong_count(&other.group);
        let room = (members + 1).saturating_sub(tables.more.len());
        crate::fallible::reserve(&mut tables.more, room)?;
        let member = other.member.lock().clone();
        Ok(Dispositions {
            member: SpinLock::new(member),
            group: other.group.clone(),
            slot: AtomicUsize::new(other.slot.load(Ordering::Relaxed)),
        })
    }

    /// Runs `f` on this member's table, locked.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(&mut [SigAction; NSIG]) -> R) -> R {
        let mut tables = self.group.lock();
        let slot = self.slot.load(Ordering::Relaxed);
        f(tables.acts(slot))
    }

    /// How many tables the group has, and which one is this member's
    /// (for `ktest=sig_actions`).
    pub fn table_count(&self) -> (usize, usize) {
        let tables = self.group.lock();
        (1 + tables.more.len(), self.slot.load(Ordering::Relaxed))
    }

    /// Tables past the first the group has room for without growing.
    pub fn room(&self) -> usize {
        self.group.lock().more.capacity()
    }

    /// execve: a table shared with another member is first copied into one
    /// of this member's own; then `f` runs on it, in the same critical
    /// section. Allocates nothing but the new table's token (16 bytes).
    pub fn unshare_with(&self, f: impl FnOnce(&mut [SigAction; NSIG])) {
        let mut tables = self.group.lock();
        let mut slot = self.slot.load(Ordering::Relaxed);
        {
            let mut member = self.member.lock();
            let shared = match &*member {
                Some(token) => Arc::strong_count(token) > 1,
                None => {
                    let elsewhere: usize =
                        tables.more.iter().map(|t| t.members.strong_count()).sum();
                    Arc::strong_count(&self.group) - elsewhere > 1
                }
            };
            if shared {
                let token = Arc::new(());
                let table = Table {
                    members: Arc::downgrade(&token),
                    acts: *tables.acts(slot),
                };
                slot = 1 + match tables
                    .more
                    .iter()
                    .position(|t| t.members.strong_count() == 0)
                {
                    Some(free) => {
                        tables.more[free] = table;
                        free
                    }
                    // Within the room `sharing` reserved: no allocation.
                    None => {
                        tables.more.push(table);
                        tables.more.len() - 1
                    }
                };
                // The old token (if any) goes: one member fewer on the old table.
                *member = Some(token);
                self.slot.store(slot, Ordering::Relaxed);
            }
        }
        f(tables.acts(slot));
    }
}
