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

/// Measures TSC and APIC-timer ticks over 10 ms of PIT channel 2.
fn calibrate() -> (u64, u32) {
    const PIT_HZ: u64 = 1_193_182;
    const COUNT: u64 = PIT_HZ / 100;
    outb(0x61, (inb(0x61) & !0x02) | 0x01);
    outb(0x43, 0b1011_0000); // channel 2, lo/hi byte, mode 0
    outb(0x42, COUNT as u8);
    outb(0x42, (COUNT >> 8) as u8);
    let gate = inb(0x61) & !0x01;
    outb(0x61, gate);
    write(REG_TIMER_DIVIDE, 0b0011); // divide by 16
    write(REG_LVT_TIMER, 1 << 16); // masked, one-shot
    write(REG_TIMER_INIT, u32::MAX);
    let tsc0 = rdtsc();
    outb(0x61, gate | 0x01);
    while inb(0x61) & 0x20 == 0 {
        core::hint::spin_loop();
    }
    let tsc = rdtsc() - tsc0;
    let apic = u32::MAX - read(REG_TIMER_CURRENT);
    (tsc * 100, apic.saturating_mul(100))
}

/// Initialises the local APIC and puts its timer in one-shot mode,
/// disarmed: [`arm_timer_ns`] starts each count (frame::timer decides when).
pub fn init() {
    mask_legacy_pics();
    let base = (rdmsr(MSR_APIC_BASE) & 0x000f_ffff_ffff_f000) as usize;
    APIC_VADDR.store(paddr_to_vaddr(base), Ordering::Relaxed);
    write(REG_SVR, 0x100 | u32::from(SPURIOUS_VECTOR));
    let (tsc_hz, apic_hz) = calibrate();
    TSC_HZ.store(tsc_hz.max(1), Ordering::Relaxed);
    APIC_TIMER_HZ.store(u64::from(apic_hz.max(1)), Ordering::Relaxed);
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
