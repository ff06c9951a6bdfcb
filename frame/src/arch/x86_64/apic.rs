//! Local APIC (through the direct map) and its timer (one-shot mode,
//! calibrated against the PIT); the legacy 8259 PICs are remapped and
//! masked. TSC-deadline mode is not used: QEMU's TCG does not offer it
//! (CPUID.1:ECX bit 24 is clear), and the one-shot count has a 16 ns
//! resolution at QEMU's 1 GHz APIC bus clock.

use super::cpu::{MSR_APIC_BASE, inb, outb, rdmsr, rdtsc};
use crate::mm::{linear_ptr, paddr_to_vaddr};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

pub const TIMER_VECTOR: u8 = 32;
pub const SPURIOUS_VECTOR: u8 = 0xff;
/// COM1 receive interrupt (ISA IRQ 4 through the I/O APIC).
pub const SERIAL_VECTOR: u8 = 0x24;
/// Where the (masked) legacy PICs would deliver, away from our vectors.
pub const PIC_BASE_VECTOR: u8 = 0xe0;

const REG_EOI: usize = 0xb0;
const REG_SVR: usize = 0xf0;
const REG_LVT_TIMER: usize = 0x320;
const REG_TIMER_INIT: usize = 0x380;
const REG_TIMER_CURRENT: usize = 0x390;
const REG_TIMER_DIVIDE: usize = 0x3e0;

static APIC_VADDR: AtomicUsize = AtomicUsize::new(0);
static TSC_HZ: AtomicU64 = AtomicU64::new(0);
/// What the timer counts per second (bus clock / 16), measured at boot.
static APIC_TIMER_HZ: AtomicU64 = AtomicU64::new(0);

fn write(reg: usize, value: u32) {
    let base = APIC_VADDR.load(Ordering::Relaxed);
    assert!(base != 0, "local APIC used before apic::init");
    // SAFETY: `base` is the direct-map address of the local APIC's MMIO page
    // (set in `init`), and `reg` is one of the register offsets above.
    unsafe { core::ptr::write_volatile(linear_ptr::<u32>(base + reg), value) }
}

fn read(reg: usize) -> u32 {
    let base = APIC_VADDR.load(Ordering::Relaxed);
    assert!(base != 0, "local APIC used before apic::init");
    // SAFETY: see `write`.
    unsafe { core::ptr::read_volatile(linear_ptr::<u32>(base + reg)) }
}

fn mask_legacy_pics() {
    // ICW1..ICW4: remap to 0xe0/0xe8 so stray IRQs never look like
    // exceptions or our own vectors; then mask everything.
    for (cmd, data, offset, cascade) in [
        (0x20u16, 0x21u16, PIC_BASE_VECTOR, 4u8),
        (0xa0, 0xa1, PIC_BASE_VECTOR + 8, 2),
    ] {
        outb(cmd, 0x11);
        outb(data, offset);
        outb(data, cascade);
        outb(data, 0x01);
        outb(data, 0xff);
    }
}

/// The PIT's input clock.
const PIT_HZ: u64 = 1_193_182;
/// How long a calibration interval lasts at least: 20 ms of PIT ticks.
const CALIBRATION_TICKS: u16 = (PIT_HZ / 50) as u16;
/// How long it may last before the attempt is given up: the count starts
/// at 0xffff and must not reach 0 (about 55 ms).
const CALIBRATION_MAX_TICKS: u16 = 0xf000;
/// The accepted uncertainty of a calibration: 1/2000 (500 ppm).
const CALIBRATION_ACCURACY: u64 = 2000;
/// Attempts before settling for the least uncertain interval seen.
const CALIBRATION_ATTEMPTS: u32 = 20;

/// One reading of PIT channel 2's count and of the APIC timer's current
/// count, between two TSC readings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ClockSample {
    pub tsc_before: u64,
    pub tsc_after: u64,
    pub pit: u16,
    pub apic: u32,
}

/// TSC and APIC-timer rates measured against the PIT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rates {
    pub tsc_hz: u64,
    pub apic_hz: u64,
    /// The uncertainty of the interval, in parts per million.
    pub error_ppm: u64,
}

/// The rates over the interval from `a` to `b` (PIT channel 2 counting
/// down in mode 0 and not through 0 between them; the APIC timer counting
/// down from one initial count), with their uncertainty: the time of each
/// reading is only known to lie between its two TSC readings. `None` if
/// the interval is shorter than [`CALIBRATION_TICKS`] or a clock went the
/// wrong way.
pub(crate) fn measure(a: &ClockSample, b: &ClockSample) -> Option<Rates> {
    let pit = u64::from(a.pit.checked_sub(b.pit)?);
    if pit < u64::from(CALIBRATION_TICKS) {
        return None;
    }
    let (a_width, b_width) = (
        a.tsc_after.checked_sub(a.tsc_before)?,
        b.tsc_after.checked_sub(b.tsc_before)?,
    );
    // Midpoints, halved first so that nothing can overflow.
    let tsc = (b.tsc_before + b_width / 2).checked_sub(a.tsc_before + a_width / 2)?;
    if tsc == 0 {
        return None;
    }
    let uncertainty = a_width / 2 + b_width / 2 + 2;
    let apic = u64::from(a.apic.checked_sub(b.apic)?);
    let per_second = |ticks: u64| (u128::from(ticks) * u128::from(PIT_HZ) / u128::from(pit)) as u64;
    Some(Rates {
        tsc_hz: per_second(tsc),
        apic_hz: per_second(apic),
        error_ppm: (u128::from(uncertainty) * 1_000_000 / u128::from(tsc)) as u64,
    })
}

/// Whether a measurement is accurate enough to keep.
pub(crate) fn accurate(r: &Rates) -> bool {
    r.error_ppm <= 1_000_000 / CALIBRATION_ACCURACY
}

/// Reads PIT channel 2 (latched) and the APIC timer between two TSC
/// readings, and whether the PIT's output has gone high (its count
/// reached 0) by then.
fn sample() -> (ClockSample, bool) {
    let tsc_before = rdtsc();
    outb(0x43, 0b1000_0000); // channel 2: latch the count
    let lo = inb(0x42);
    let hi = inb(0x42);
    let apic = read(REG_TIMER_CURRENT);
    let out = inb(0x61) & 0x20 != 0;
    let tsc_after = rdtsc();
    let s = ClockSample {
        tsc_before,
        tsc_after,
        pit: u16::from(lo) | u16::from(hi) << 8,
        apic,
    };
    (s, out)
}

/// One calibration attempt: PIT channel 2 counts down from 0xffff (mode 0,
/// gate on, speaker off) and the APIC timer from its maximum (masked);
/// readings are taken until the interval from the first one is at least
/// 20 ms long and [`accurate`]. Returns the least uncertain interval seen,
/// if any.
///
/// Why the interval is bracketed at both ends: the old calibration waited
/// for the PIT's output with one TSC reading at each end, which counts the
/// PIT interval from when the count was loaded (QEMU starts mode 0 at the
/// load and ignores the gate). A host that descheduled QEMU's CPU thread
/// between the load and the first TSC reading for more than 10 ms left a
/// few microseconds of TSC for 10 ms of PIT: the clock then ran thousands
/// of times too fast (under a load of 20, 2 boots in 25: a getppid loop
/// measured 7.68 ms per call, CLOCK_MONOTONIC thousands of seconds ahead).
/// A stall now only widens one reading, which is then not accurate, or
/// lengthens the interval, which both clocks see.
fn calibrate_once() -> Option<Rates> {
    outb(0x61, (inb(0x61) & !0x02) | 0x01);
    outb(0x43, 0b1011_0000); // channel 2, lo/hi byte, mode 0, binary
    outb(0x42, 0xff);
    outb(0x42, 0xff);
    write(REG_TIMER_DIVIDE, 0b0011); // divide by 16
    write(REG_LVT_TIMER, 1 << 16); // masked, one-shot
    write(REG_TIMER_INIT, u32::MAX);
    let (first, out) = sample();
    if out {
        return None;
    }
    let mut best: Option<Rates> = None;
    loop {
        let (s, out) = sample();
        // Once the count reached 0 the interval may have wrapped.
        let ticks = first.pit.checked_sub(s.pit);
        if out || ticks.is_none_or(|t| t > CALIBRATION_MAX_TICKS) {
            return best;
        }
        if let Some(r) = measure(&first, &s) {
            if accurate(&r) {
                return Some(r);
            }
            // A slow reading (the host took the CPU away in the middle of
            // one): a longer interval shrinks the relative uncertainty.
            if best.is_none_or(|b| r.error_ppm < b.error_ppm) {
                best = Some(r);
            }
        }
    }
}

/// Measures the TSC and APIC-timer rates against PIT channel 2: the first
/// [`accurate`] interval, else after [`CALIBRATION_ATTEMPTS`] attempts the
/// least uncertain one seen.
pub(crate) fn calibrate() -> Rates {
    let mut best: Option<Rates> = None;
    for _ in 0..CALIBRATION_ATTEMPTS {
        match calibrate_once() {
            Some(r) if accurate(&r) => return r,
            Some(r) if best.is_none_or(|b| r.error_ppm < b.error_ppm) => best = Some(r),
            _ => {}
        }
    }
    best.expect("PIT calibration: PIT channel 2 never counted 20 ms without reaching 0")
}

/// Initialises the local APIC and puts its timer in one-shot mode,
/// disarmed: [`arm_timer_ns`] starts each count (frame::timer decides when).
pub fn init() {
    mask_legacy_pics();
    let base = (rdmsr(MSR_APIC_BASE) & 0x000f_ffff_ffff_f000) as usize;
    APIC_VADDR.store(paddr_to_vaddr(base), Ordering::Relaxed);
    write(REG_SVR, 0x100 | u32::from(SPURIOUS_VECTOR));
    let rates = calibrate();
    TSC_HZ.store(rates.tsc_hz.max(1), Ordering::Relaxed);
    APIC_TIMER_HZ.store(rates.apic_hz.max(1), Ordering::Relaxed);
    write(REG_TIMER_DIVIDE, 0b0011);
    write(REG_TIMER_INIT, 0); // stopped
    write(REG_LVT_TIMER, u32::from(TIMER_VECTOR)); // one-shot, unmasked
}

/// The APIC timer count that covers `ns` nanoseconds, rounded up (so the
/// interrupt does not come before the time has passed, as far as the
/// calibration goes), at least 1 and at most the counter's range.
pub fn timer_count_for_ns(ns: u64, apic_hz: u64) -> u32 {
    let count = (u128::from(ns) * u128::from(apic_hz)).div_ceil(1_000_000_000);
    count.clamp(1, u128::from(u32::MAX)) as u32
}

/// Starts the one-shot timer to interrupt once, `ns` nanoseconds from
/// now (a longer wait than the counter holds ends early: the caller
/// re-arms). Restarts a count already running.
pub fn arm_timer_ns(ns: u64) {
    write(
        REG_TIMER_INIT,
        timer_count_for_ns(ns, APIC_TIMER_HZ.load(Ordering::Relaxed)),
    );
}

/// Stops the timer (no interrupt until the next [`arm_timer_ns`]).
pub fn stop_timer() {
    write(REG_TIMER_INIT, 0);
}

pub fn eoi() {
    write(REG_EOI, 0);
}

/// TSC frequency measured at boot.
pub fn tsc_hz() -> u64 {
    TSC_HZ.load(Ordering::Relaxed)
}

/// [`calibrate`] with the timer registers put back afterwards (tests
/// calibrate again on the running simulated machine).
#[cfg(test)]
pub(crate) fn calibrate_keeping_timer() -> Rates {
    let saved = [REG_TIMER_DIVIDE, REG_LVT_TIMER, REG_TIMER_INIT].map(|r| (r, read(r)));
    let rates = calibrate();
    for (reg, value) in saved {
        write(reg, value);
    }
    rates
}
