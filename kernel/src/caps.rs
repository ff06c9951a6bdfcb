//! Capability numbers (capabilities(7), linux/capability.h): one bit each
//! in a capability set. Privilege checks ask for the one capability that
//! Linux asks for, in the caller's effective set; euid 0 matters only
//! through the sets it grants (see `process::creds`).

pub const CAP_CHOWN: u32 = 0;
pub const CAP_DAC_OVERRIDE: u32 = 1;
pub const CAP_DAC_READ_SEARCH: u32 = 2;
pub const CAP_FOWNER: u32 = 3;
pub const CAP_FSETID: u32 = 4;
pub const CAP_KILL: u32 = 5;
pub const CAP_SETGID: u32 = 6;
pub const CAP_SETUID: u32 = 7;
pub const CAP_SETPCAP: u32 = 8;
pub const CAP_IPC_LOCK: u32 = 14;
pub const CAP_IPC_OWNER: u32 = 15;
pub const CAP_SYS_RAWIO: u32 = 17;
pub const CAP_SYS_CHROOT: u32 = 18;
pub const CAP_SYS_PTRACE: u32 = 19;
pub const CAP_SYS_ADMIN: u32 = 21;
pub const CAP_SYS_BOOT: u32 = 22;
pub const CAP_SYS_NICE: u32 = 23;
pub const CAP_SYS_RESOURCE: u32 = 24;
pub const CAP_SYS_TIME: u32 = 25;
pub const CAP_MKNOD: u32 = 27;
pub const CAP_SYSLOG: u32 = 34;
/// The highest capability number (CAP_CHECKPOINT_RESTORE,
/// /proc/sys/kernel/cap_last_cap).
pub const CAP_LAST_CAP: u32 = 40;
/// Every capability: the bounding set.
pub const CAP_FULL: u64 = (1 << (CAP_LAST_CAP + 1)) - 1;

/// Whether `set` holds `cap`.
pub fn has(set: u64, cap: u32) -> bool {
    cap <= CAP_LAST_CAP && set & (1 << cap) != 0
}
