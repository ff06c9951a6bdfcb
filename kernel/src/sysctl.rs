//! Kernel tunables that change behaviour (sysctl(8)): the values behind
//! the writable files of /proc/sys. Each has Linux's default on a Debian
//! system and the range Linux's handler accepts (EINVAL outside it).

use core::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Errno, Error, Result};

/// One integer tunable.
pub struct Sysctl {
    value: AtomicU64,
    min: u64,
    max: u64,
}

impl Sysctl {
    pub(crate) const fn new(default: u64, min: u64, max: u64) -> Sysctl {
        Sysctl { value: AtomicU64::new(default), min, max }
    }

    pub fn get(&self) -> u64 {
        self.value.load(Ordering::Relaxed)
    }

    /// Takes one from a countdown (failslab/times): false if it is
    /// already 0; u64::MAX counts as no limit and stays.
    pub fn take_one(&self) -> bool {
        self.value
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| match v {
                0 => None,
                u64::MAX => Some(v),
                v => Some(v - 1),
            })
            .is_ok()
    }

    /// A write to the /proc/sys file: one decimal number, surrounding
    /// white space allowed; EINVAL if it is not one or is out of range.
    pub fn write_text(&self, text: &[u8]) -> Result<()> {
        let text = core::str::from_utf8(text).map_err(|_| Error::new(Errno::EINVAL))?;
        let v: u64 = text.trim().parse().map_err(|_| Error::new(Errno::EINVAL))?;
        if v < self.min || v > self.max {
            return Err(Error::new(Errno::EINVAL));
        }
        self.value.store(v, Ordering::Relaxed);
        Ok(())
    }
}

/// fs.protected_hardlinks: only the owner (or a caller able to read and
/// write a plain file) may hard-link it (Debian's default 1).
pub static PROTECTED_HARDLINKS: Sysctl = Sysctl::new(1, 0, 1);
/// fs.protected_symlinks: a symlink in a sticky world-writable directory
/// is followed only by its owner or when it has the directory's owner
/// (Debian's default 1).
pub static PROTECTED_SYMLINKS: Sysctl = Sysctl::new(1, 0, 1);
/// kernel.randomize_va_space: 0 no address-space layout randomization,
/// 1 randomizes the stack, the PIE base and the mmap base (where the
/// dynamic linker, the libraries and the vDSO go), 2 also the start of
/// brk; Debian's default is 2.
pub static RANDOMIZE_VA_SPACE: Sysctl = Sysctl::new(2, 0, 2);
/// vm.mmap_min_addr: the lowest address an unprivileged process may map.
pub static MMAP_MIN_ADDR: Sysctl = Sysctl::new(65536, 0, u64::MAX);
/// fs.nr_open: the largest RLIMIT_NOFILE. Linux accepts up to about 2^31;
/// descriptor tables here are bounded at Linux's default.
pub const NR_OPEN_MAX: u64 = 1 << 20;
pub static NR_OPEN: Sysctl = Sysctl::new(NR_OPEN_MAX, 64, NR_OPEN_MAX);

/// vm.overcommit_memory: 0 heuristic (Linux's default), 1 always, 2
/// never beyond CommitLimit (crate::mm::commit).
pub static OVERCOMMIT_MEMORY: Sysctl = Sysctl::new(0, 0, 2);
/// vm.overcommit_ratio: the percentage of RAM in CommitLimit (mode 2).
pub static OVERCOMMIT_RATIO: Sysctl = Sysctl::new(50, 0, i32::MAX as u64);
/// vm.overcommit_kbytes: CommitLimit in kB when not 0 (it then takes
/// precedence over the ratio, as in Linux's vm_commit_limit).
pub static OVERCOMMIT_KBYTES: Sysctl = Sysctl::new(0, 0, i64::MAX as u64);

/// kernel.pid_max: pids (and tids) stay below it, wrapping to 300 when
/// they reach it (Debian's 4194304, PID_MAX_LIMIT on 64-bit; Linux's
/// handler accepts RESERVED_PIDS + 1 up to PID_MAX_LIMIT).
pub static PID_MAX: Sysctl = Sysctl::new(4_194_304, 301, 4_194_304);

/// kernel.threads-max: fork and clone fail with EAGAIN while this many
/// threads exist (root too). Linux derives it from memory at boot
/// ([`init_threads_max`]); its handler accepts 1 to FUTEX_TID_MASK.
pub static THREADS_MAX: Sysctl = Sysctl::new(MIN_THREADS, 1, MAX_THREADS);
/// Linux's MIN_THREADS and MAX_THREADS (FUTEX_TID_MASK).
const MIN_THREADS: u64 = 20;
const MAX_THREADS: u64 = 0x3fff_ffff;

/// Sets kernel.threads-max as Linux's set_max_threads() does: threads
/// whose stacks (THREAD_SIZE, 16 KiB on x86-64) would take an eighth of
/// the RAM, within [MIN_THREADS, MAX_THREADS].
pub fn init_threads_max(ram_bytes: u64) {
    const THREAD_SIZE: u64 = 16 * 1024;
    let threads = (ram_bytes / (THREAD_SIZE * 8)).clamp(MIN_THREADS, MAX_THREADS);
    THREADS_MAX.value.store(threads, Ordering::Relaxed);
}

/// vm.mmap_min_addr, page-aligned up (what mappings are checked against).
pub fn mmap_min_addr() -> usize {
    let v = usize::try_from(MMAP_MIN_ADDR.get()).unwrap_or(usize::MAX);
    v.checked_next_multiple_of(frame::mm::PAGE_SIZE).unwrap_or(usize::MAX)
}
