//! System identity and randomness.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The release string `uname -r` reports: a Linux version glibc accepts,
/// naming Trellis.
pub const RELEASE: &str = "6.1.0-trellis";
pub const VERSION: &str = "#1 SMP Trellis framekernel";

/// AT_HWCAP: CPUID.1:EDX, as Linux reports it on x86-64.
pub fn hwcap() -> u64 {
    0x0789_fbff
}

static RNG_STATE: AtomicU64 = AtomicU64::new(0);

/// A non-cryptographic generator (splitmix64) seeded from the clocks. Good
/// enough for AT_RANDOM and getrandom until a real entropy source exists.
pub fn random_u64() -> u64 {
    let mut s = RNG_STATE.load(Ordering::Relaxed);
    if s == 0 {
        s = frame::timer::monotonic_ns() ^ frame::timer::realtime_at_boot_ns() ^ 0x9e37_79b9_7f4a_7c15;
    }
    let next = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    RNG_STATE.store(next, Ordering::Relaxed);
    let mut z = next ^ frame::timer::monotonic_ns().rotate_left(17);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub fn fill_random(buf: &mut [u8]) {
    for chunk in buf.chunks_mut(8) {
        let r = random_u64().to_le_bytes();
        chunk.copy_from_slice(&r[..chunk.len()]);
    }
}

pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    fill_random(&mut b);
    b
}

/// The UTS names sethostname(2) and setdomainname(2) change (one set for
/// the whole system: there are no UTS namespaces).
struct UtsNames {
    hostname: ([u8; 64], usize),
    domainname: ([u8; 64], usize),
}

/// Ranked above everything a reader of the names may hold.
const UTS_LEVEL: u8 = 47;

static UTS: frame::sync::SpinLock<UtsNames, UTS_LEVEL> = frame::sync::SpinLock::new(UtsNames {
    hostname: name_of(b"trellis"),
    domainname: name_of(b"(none)"),
});

const fn name_of(s: &[u8]) -> ([u8; 64], usize) {
    let mut out = [0u8; 64];
    let mut i = 0;
    while i < s.len() && i < 64 {
        out[i] = s[i];
        i += 1;
    }
    (out, i)
}

/// The host name (uname's nodename), at most 64 bytes.
pub fn hostname() -> alloc::vec::Vec<u8> {
    let u = UTS.lock();
    u.hostname.0[..u.hostname.1].to_vec()
}

/// The NIS domain name (uname's domainname), at most 64 bytes.
pub fn domainname() -> alloc::vec::Vec<u8> {
    let u = UTS.lock();
    u.domainname.0[..u.domainname.1].to_vec()
}

/// Sets the host name (`domain`: the domain name); the caller checked
/// that it is at most 64 bytes.
pub fn set_uts_name(domain: bool, name: &[u8]) {
    let mut u = UTS.lock();
    let slot = if domain { &mut u.domainname } else { &mut u.hostname };
    *slot = name_of(name);
}

/// reboot(2)'s Ctrl-Alt-Del setting: on, the key combination would restart
/// at once; off (the default), it would signal init. Recorded only: the
/// serial console has no such key.
static CTRL_ALT_DEL: AtomicBool = AtomicBool::new(false);

pub fn set_ctrl_alt_del(on: bool) {
    CTRL_ALT_DEL.store(on, Ordering::Relaxed);
}

pub fn ctrl_alt_del() -> bool {
    CTRL_ALT_DEL.load(Ordering::Relaxed)
}

/// Powers the machine off after writing back the mounted ext2 volumes,
/// printing the `trellis: poweroff status=N` line the test harness waits
/// for (`code` becomes QEMU's exit status).
pub fn power_off(code: u32) -> ! {
    crate::fs::ext2::shutdown_all();
    frame::println!("trellis: poweroff status={code}");
    frame::power_off(code)
}
