//! What a new or grown mapping is checked against: vm.mmap_min_addr and
//! the caller's RLIMIT_MEMLOCK, RLIMIT_AS and RLIMIT_DATA, with the
//! capabilities that lift them (CAP_SYS_RAWIO, CAP_IPC_LOCK, and
//! CAP_SYS_ADMIN for the commit limit's admin reserve).

use crate::process::Process;
use crate::process::rlimit::{RLIMIT_AS, RLIMIT_DATA, RLIMIT_MEMLOCK};

#[derive(Clone, Copy, Debug)]
pub struct MapLimits {
    /// The lowest address that may be mapped (EPERM below it).
    pub min_addr: usize,
    /// Bytes that may be locked (EAGAIN beyond); None: no limit.
    pub memlock: Option<usize>,
    /// Bytes of address space (ENOMEM beyond); None: no limit.
    pub address_space: Option<usize>,
    /// Bytes of private writable memory, the heap included (ENOMEM
    /// beyond); None: no limit.
    pub data: Option<usize>,
    /// CAP_SYS_ADMIN: may use the admin reserve of the commit limit
    /// (vm.overcommit_memory=2).
    pub admin: bool,
}

impl MapLimits {
    /// No limits (the kernel's own mappings).
    pub const NONE: MapLimits = MapLimits { min_addr: 0, memlock: None, address_space: None, data: None, admin: true };

    /// The limits of `process` now.
    pub fn of(process: &Process) -> MapLimits {
        let creds = process.creds();
        let rl = process.rlimits.lock().0;
        let bytes = |r: usize| usize::try_from(rl[r].cur).ok().filter(|b| *b != usize::MAX);
        MapLimits {
            // Linux's cap_mmap_addr and can_do_mlock.
            min_addr: if creds.capable(crate::caps::CAP_SYS_RAWIO) { 0 } else { crate::sysctl::mmap_min_addr() },
            memlock: if creds.capable(crate::caps::CAP_IPC_LOCK) { None } else { bytes(RLIMIT_MEMLOCK) },
            address_space: bytes(RLIMIT_AS),
            data: bytes(RLIMIT_DATA),
            admin: creds.capable(crate::caps::CAP_SYS_ADMIN),
        }
    }
}
