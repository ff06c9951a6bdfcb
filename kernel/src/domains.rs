//! Driver domains, the kernel's side: fault injection into drivers that
//! run in a domain (`drivers.crash=` and /sys/kernel/debug/domains), and
//! the text of /proc/domains. The mechanism (running code in a domain,
//! catching its faults) is `frame::domain`; the shadow that restarts the
//! virtio-blk driver is in `block::virtio_blk`.
//!
//! Injection:
//! - `drivers.crash=virtio-blk:1s` (also `500ms`, `2s`...; `virtio-net`
//!   for the NICs' driver) on the kernel command line: about once per period, the driver panics at one of the
//!   points of its request path where it calls [`crash_point`] (a random
//!   one of those it reaches after the period is over). The period counts
//!   from the driver's recovery from the last crash ([`recovered`]), so
//!   periodic crashes never come in a row.
//! - `/sys/kernel/debug/domains/virtio-blk/crash` (root, 0644): writing
//!   `N` makes the next `N` crash points reached panic, initialisation
//!   included (what makes a driver crash again during its recovery).
//! - `/sys/kernel/debug/domains/virtio-blk/period_ns`: the period of
//!   `drivers.crash=` (0: off), to read or to set at run time (the bench's
//!   crash rows turn it on for one row only). A period set after 0 counts
//!   from the first crash point reached after it is set.

use alloc::format;
use alloc::string::String;
use core::fmt::Write;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::sysctl::Sysctl;

/// One driver that can be made to crash.
pub struct CrashConfig {
    /// Name on the command line and under /sys/kernel/debug/domains.
    pub name: &'static str,
    /// `drivers.crash=` period in nanoseconds (0: off); the debug file
    /// `period_ns`.
    pub period_ns: Sysctl,
    /// When the next periodic crash becomes due (0: not scheduled yet;
    /// [`AFTER_RECOVERY`]: once the driver has recovered from the last).
    due_ns: AtomicU64,
    /// Crashes still to inject at the next points reached (the debug file).
    pub forced: Sysctl,
    /// Crashes injected so far.
    pub injected: AtomicU64,
}

impl CrashConfig {
    const fn new(name: &'static str) -> CrashConfig {
        CrashConfig {
            name,
            period_ns: Sysctl::new(0, 0, MAX_PERIOD_NS),
            due_ns: AtomicU64::new(0),
            forced: Sysctl::new(0, 0, 1_000_000),
            injected: AtomicU64::new(0),
        }
    }
}

/// The longest period accepted (an hour).
const MAX_PERIOD_NS: u64 = 3_600_000_000_000;

/// `due_ns` after a periodic crash: the next period starts when the
/// shadow reports that the restarted driver did useful work again
/// ([`recovered`]). Counting it from the crash instead let a crash land on
/// every retransmission of a TCP connection backing off for longer than
/// the period, so that periodic injection alone could reach the shadow's
/// "faults in a row" limit and fail the device.
const AFTER_RECOVERY: u64 = u64::MAX;

/// The virtio-blk driver's injection state.
pub static VIRTIO_BLK: CrashConfig = CrashConfig::new("virtio-blk");

/// The virtio-net driver's injection state (one for every NIC).
pub static VIRTIO_NET: CrashConfig = CrashConfig::new("virtio-net");

const ALL: &[&CrashConfig] = &[&VIRTIO_BLK, &VIRTIO_NET];

/// State of the draw that picks the crash point (xorshift64).
static RNG: AtomicU64 = AtomicU64::new(0x2545_f491_4f6c_dd1d);

fn draw() -> u64 {
    let mut x = RNG.load(Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    RNG.store(x, Ordering::Relaxed);
    x
}

/// Parses a period: `1s`, `250ms`, `20us`, or plain nanoseconds.
fn parse_period(text: &str) -> Option<u64> {
    let (num, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    let n: u64 = num.parse().ok()?;
    let scale = match unit {
        "" | "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return None,
    };
    n.checked_mul(scale).filter(|&p| p > 0)
}

/// `drivers.crash=NAME:PERIOD[,NAME:PERIOD...]` from the command line.
pub fn boot_param(value: &str) {
    for item in value.split(',') {
        let Some((name, period)) = item.split_once(':') else {
            continue;
        };
        let (Some(cfg), Some(ns)) = (ALL.iter().find(|c| c.name == name), parse_period(period))
        else {
            frame::log_info!("drivers.crash: ignored {item:?}");
            continue;
        };
        if cfg
            .period_ns
            .write_text(format!("{ns}").as_bytes())
            .is_err()
        {
            frame::log_info!("drivers.crash: ignored {item:?} (period too long)");
            continue;
        }
        RNG.fetch_xor(frame::timer::monotonic_ns() | 1, Ordering::Relaxed);
        frame::log_info!("drivers.crash: {name} crashes every {ns} ns");
    }
}

/// A point of `cfg`'s driver where an injected crash may happen: panics
/// when a forced crash is pending, or when the periodic crash is due and
/// the draw picks this point (one chance in `1 << spread`, so that the
/// crash lands on a random point among those the driver passes).
/// Called inside the driver's domain only: the panic is the domain's.
pub fn crash_point(cfg: &CrashConfig, point: &'static str, spread: u32) {
    if cfg.forced.take_one() {
        cfg.injected.fetch_add(1, Ordering::Relaxed);
        panic!("{}: injected crash at {point} (forced)", cfg.name);
    }
    let period = cfg.period_ns.get();
    let due = cfg.due_ns.load(Ordering::Relaxed);
    if period == 0 {
        // Off: the next period, if one is set, counts from its first point.
        if due != 0 {
            cfg.due_ns.store(0, Ordering::Relaxed);
        }
        return;
    }
    let now = frame::timer::monotonic_ns();
    if due == 0 {
        cfg.due_ns.store(now + period, Ordering::Relaxed);
        return;
    }
    if now < due || draw() & ((1 << spread) - 1) != 0 {
        return;
    }
    cfg.due_ns.store(AFTER_RECOVERY, Ordering::Relaxed);
    cfg.injected.fetch_add(1, Ordering::Relaxed);
    panic!("{}: injected crash at {point}", cfg.name);
}

/// Called by a shadow when its restarted driver completed work (a frame,
/// a request) after a fault: a periodic crash is due one period later.
pub fn recovered(cfg: &CrashConfig) {
    let period = cfg.period_ns.get();
    if period != 0 {
        let next = frame::timer::monotonic_ns().saturating_add(period);
        let _ = cfg
            .due_ns
            .compare_exchange(AFTER_RECOVERY, next, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// /proc/domains: one line per domain name seen since boot.
pub fn proc_domains() -> String {
    let mut s = String::from("name             alive heap_bytes      calls crashes restarts\n");
    for d in frame::domain::domains() {
        let _ = writeln!(
            s,
            "{:<16} {:<5} {:>10} {:>10} {:>7} {:>8}",
            d.name,
            if d.alive { "yes" } else { "no" },
            d.heap_bytes,
            d.calls,
            d.crashes,
            d.restarts
        );
    }
    s
}

/// The `injected` counter as text (debug file `injected`).
pub fn virtio_blk_injected() -> String {
    format!("{}\n", VIRTIO_BLK.injected.load(Ordering::Relaxed))
}

/// The virtio-net `injected` counter as text.
pub fn virtio_net_injected() -> String {
    format!("{}\n", VIRTIO_NET.injected.load(Ordering::Relaxed))
}
