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

/// One disposition table of a group.
struct Table {
    /// Alive while a member uses the table: each member holds an `Arc` of
    /// it (`Dispositions::member`), so the strong count is the number of
    /// members, and members leave without taking the group's lock.
    members: Weak<()>,
    acts: [SigAction; NSIG],
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
/// the group's lock. A table no member holds any more is reused by the next
/// unsharing, so a group never has more tables than it had members at
/// once; room for one table per member is reserved when a member joins
/// (fork, which can report ENOMEM), so unsharing at execve, past its point
/// of no return, never grows the vector.
pub struct Dispositions {
    group: Arc<SpinLock<Vec<Table>, GROUP>>,
    /// This member's table in `group`: written only under its lock.
    slot: AtomicUsize,
    /// This member's hold on its table (see [`Table::members`]); replaced
    /// only under the group's lock (a leaf lock inside it).
    member: SpinLock<Arc<()>>,
}

impl Dispositions {
    /// A group of its own with `acts`.
    pub fn new(acts: [SigAction; NSIG]) -> Self {
        let member = Arc::new(());
        let table = Table {
            members: Arc::downgrade(&member),
            acts,
        };
        Dispositions {
            group: Arc::new(SpinLock::new(alloc::vec![table])),
            slot: AtomicUsize::new(0),
            member: SpinLock::new(member),
        }
    }

    /// The dispositions of `other` itself (CLONE_SIGHAND): a change by
    /// either is seen by both.
    pub fn sharing(other: &Dispositions) -> Result<Self> {
        let mut tables = other.group.lock();
        let members: usize = tables.iter().map(|t| t.members.strong_count()).sum();
        // Room for a table per member, the new one included.
        let room = (members + 1).saturating_sub(tables.len());
        crate::fallible::reserve(&mut *tables, room)?;
        let member = other.member.lock().clone();
        Ok(Dispositions {
            group: other.group.clone(),
            slot: AtomicUsize::new(other.slot.load(Ordering::Relaxed)),
            member: SpinLock::new(member),
        })
    }

    /// Runs `f` on this member's table, locked.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(&mut [SigAction; NSIG]) -> R) -> R {
        let mut tables = self.group.lock();
        let slot = self.slot.load(Ordering::Relaxed);
        f(&mut tables[slot].acts)
    }

    /// How many tables the group has, and which one is this member's
    /// (for `ktest=sig_actions`).
    pub fn table_count(&self) -> (usize, usize) {
        let tables = self.group.lock();
        (tables.len(), self.slot.load(Ordering::Relaxed))
    }

    /// Tables the group has room for without growing.
    pub fn room(&self) -> usize {
        self.group.lock().capacity()
    }

    /// execve: a table shared with another member is first copied into one
    /// of this member's own; then `f` runs on it, in the same critical
    /// section. Allocates nothing but the new table's token (16 bytes).
    pub fn unshare_with(&self, f: impl FnOnce(&mut [SigAction; NSIG])) {
        let mut tables = self.group.lock();
        let mut slot = self.slot.load(Ordering::Relaxed);
        {
            let mut member = self.member.lock();
            if Arc::strong_count(&member) > 1 {
                let token = Arc::new(());
                let table = Table {
                    members: Arc::downgrade(&token),
                    acts: tables[slot].acts,
                };
                slot = match tables.iter().position(|t| t.members.strong_count() == 0) {
                    Some(free) => {
                        tables[free] = table;
                        free
                    }
                    // Within the room `sharing` reserved: no allocation.
                    None => {
                        tables.push(table);
                        tables.len() - 1
                    }
                };
                // The old token goes: one member fewer on the old table.
                *member = token;
                self.slot.store(slot, Ordering::Relaxed);
            }
        }
        f(&mut tables[slot].acts);
    }
}
