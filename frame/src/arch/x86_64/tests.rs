//! The boot CPU set-up, checked on the simulated machine after it booted
//! through `boot::rust_entry` and `frame::init` (the CPU model has checked
//! each descriptor table and register write as it happened).

use core::sync::atomic::Ordering;

use super::apic::{PIC_BASE_VECTOR, SERIAL_VECTOR, SPURIOUS_VECTOR, TIMER_VECTOR};
use super::cpu::*;
use super::trap::SYSCALL_RFLAGS_MASK;
use crate::sim::{self, devices};

#[test]
fn boot_cpu_tables_are_loaded_and_checked() {
    sim::run(|| {
        let c = sim::cpu::state();
        assert_eq!(c.gdt.map(<[u64]>::len), Some(9));
        assert!(c.idt.is_some());
        assert_eq!(c.cr3 as usize, crate::mm::kernel_root().unwrap());
        // syscall enabled, entering at the entry stub with every flag masked.
        assert_eq!(c.msrs[&MSR_EFER] & 1, 1);
        assert_eq!(c.msrs[&MSR_LSTAR], syscall_entry());
        assert_eq!(c.msrs[&MSR_SFMASK], SYSCALL_RFLAGS_MASK);
        assert_eq!(c.msrs[&MSR_STAR] >> 32, 0x0020_0008);
        // FPU/SSE on (EM off, MP and NE on, OSFXSR, OSXMMEXCPT); SMEP, SMAP.
        assert_eq!(c.cr0 & 0b10_0110, 0b10_0010);
        assert_eq!(c.cr4 & (0b11 << 9 | 0b11 << 20), 0b11 << 9 | 0b11 << 20);
    });
    assert_eq!(sim::run(crate::boot::smep_smap_enabled), (true, true));
}

#[test]
fn boot_programs_the_interrupt_controllers_and_the_timer() {
    sim::run(|| {
        let ports = devices::PORTS.lock().unwrap();
        // Legacy PICs remapped away from exceptions, and masked.
        for (i, pic) in ports.pic.iter().enumerate() {
            assert!(pic.initialised);
            assert_eq!(pic.vector_base, PIC_BASE_VECTOR + 8 * i as u8);
            assert_eq!(pic.mask, 0xff);
        }
        // COM1 at 115200 8N1, receive interrupt on (console input).
        assert_eq!((ports.uart_divisor, ports.uart_lcr & 0x7f), (1, 3));
        assert_eq!(ports.uart_ier, 1);
        drop(ports);
        let lapic = |off| devices::LAPIC.reg(off).load(Ordering::Relaxed);
        assert_eq!(lapic(0xf0), 0x100 | u32::from(SPURIOUS_VECTOR));
        assert_eq!(lapic(0x320), u32::from(TIMER_VECTOR), "one-shot, unmasked");
        assert_eq!(lapic(0x3e0), 0b0011, "divide by 16");
        // Calibrated against the PIT, and armed for the first scheduler
        // tick: at most one tick period of counts from when it was armed,
        // at the calibrated rate (within 1/2000 of the true one).
        let tick = devices::APIC_TIMER_HZ / crate::timer::TICK_HZ;
        let most = tick + tick / 2000;
        assert!((1..=most).contains(&lapic(0x380)), "{}", lapic(0x380));
        // The last I/O APIC register written: GSI 4's low word, COM1's vector.
        let ioapic = |off| devices::IOAPIC.reg(off).load(Ordering::Relaxed);
        assert_eq!(
            (ioapic(0), ioapic(0x10)),
            (0x10 + 2 * 4, u32::from(SERIAL_VECTOR))
        );
        let tsc_hz = crate::cpu::tsc_hz();
        assert!(
            tsc_hz.abs_diff(devices::TSC_HZ) < devices::TSC_HZ / 100,
            "calibrated TSC {tsc_hz} Hz"
        );
        assert_eq!(
            crate::timer::realtime_at_boot_ns(),
            devices::RTC_UNIX_TIME * 1_000_000_000
        );
    });
}

#[test]
fn apic_timer_counts_round_up_and_stay_in_range() {
    use super::apic::timer_count_for_ns;
    let hz = u64::from(devices::APIC_TIMER_HZ); // 16 ns per count
    assert_eq!(timer_count_for_ns(16, hz), 1);
    assert_eq!(timer_count_for_ns(17, hz), 2, "rounded up: never early");
    assert_eq!(timer_count_for_ns(1_000_000, hz), 62_500);
    assert_eq!(timer_count_for_ns(0, hz), 1, "a passed deadline: at once");
    assert_eq!(timer_count_for_ns(u64::MAX, hz), u32::MAX, "clamped");
    assert_eq!(timer_count_for_ns(1_000, 0), 1);
}

#[test]
fn boot_banner_reaches_the_serial_console_and_the_log() {
    let banner = format!(
        "trellis: framekernel booting, cmdline \"{}\"\r\n",
        sim::CMDLINE
    );
    let (log, _) = sim::run(|| crate::console::read_log(0));
    assert!(sim::serial_output().contains(&banner));
    let log = String::from_utf8(log).unwrap();
    assert!(log.contains(banner.trim_end_matches("\r\n")), "{log}");
    let vendor = sim::run(|| {
        let r = crate::cpu::cpuid(0, 0);
        [r.ebx, r.edx, r.ecx].map(u32::to_le_bytes).concat()
    });
    assert_eq!(vendor, b"SimulatedCPU");
}

#[test]
fn calibration_intervals_and_their_uncertainty() {
    use super::apic::{ClockSample, accurate, measure};
    let at = |tsc: u64, width: u64, pit: u16, apic: u32| ClockSample {
        tsc_before: tsc,
        tsc_after: tsc + width,
        pit,
        apic,
    };
    // 23,864 PIT ticks (20.0 ms): 40 M TSC ticks and 1.25 M APIC counts.
    let a = at(1_000, 10, 60_000, 4_000_000);
    let b = at(40_001_000, 10, 60_000 - 23_864, 2_750_000);
    let r = measure(&a, &b).unwrap();
    assert_eq!(r.tsc_hz, 40_000_000 * 1_193_182 / 23_864);
    assert!(r.tsc_hz.abs_diff(2_000_000_000) < 100_000, "{}", r.tsc_hz);
    assert!(r.apic_hz.abs_diff(62_500_000) < 5_000, "{}", r.apic_hz);
    assert!(accurate(&r), "{r:?}");
    // A reading that took 1 ms (the host descheduled the CPU in the
    // middle of it) makes the same interval too uncertain.
    let slow = at(1_000, 2_000_000, 60_000, 4_000_000);
    let r = measure(&slow, &b).unwrap();
    assert!(!accurate(&r) && r.error_ppm >= 24_000, "{r:?}");
    // Too short, or clocks running backwards: no measurement.
    assert_eq!(measure(&a, &at(2_000, 10, 59_000, 3_000_000)), None);
    assert_eq!(measure(&b, &a), None);
    assert_eq!(measure(&a, &at(500, 10, 30_000, 1_000_000)), None);
    assert_eq!(measure(&a, &at(40_001_000, 10, 30_000, 4_000_001)), None);
}

/// Calibrates again with the simulated host stalling QEMU's CPU thread at
/// `port`'s write after `skip` others, for `ns`; returns the rates.
fn calibrate_with_stall(port: u16, skip: u32, ns: u64) -> super::apic::Rates {
    sim::run(move || {
        sim::cpu::stall_after_write(port, skip, ns);
        let rates = super::apic::calibrate_keeping_timer();
        assert_eq!(sim::cpu::state().stall, None, "the stall happened");
        rates
    })
}

fn assert_calibrated(r: &super::apic::Rates) {
    let close = |x: u64, want: u64| x.abs_diff(want) <= want / 1000;
    assert!(close(r.tsc_hz, devices::TSC_HZ), "{r:?}");
    assert!(close(r.apic_hz, u64::from(devices::APIC_TIMER_HZ)), "{r:?}");
    assert!(super::apic::accurate(r), "{r:?}");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "tens of thousands of simulated port reads; boot runs the same code under Miri"
)]
fn calibration_survives_a_stall_after_the_count_is_loaded() {
    // The old calibration's failure: 30 ms pass between loading the PIT
    // count (the second byte to port 0x42) and the first TSC reading, so
    // the PIT's 10 ms were over before the TSC interval began (it measured
    // about 1 us of TSC for 10 ms: a clock 10,000 times too fast).
    assert_calibrated(&calibrate_with_stall(0x42, 1, 30_000_000));
    // 50 ms: the count reaches 0 before 20 ms can be measured; the attempt
    // is dropped and the next one measures.
    assert_calibrated(&calibrate_with_stall(0x42, 1, 50_000_000));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "tens of thousands of simulated port reads; boot runs the same code under Miri"
)]
fn calibration_survives_a_stall_inside_a_reading() {
    // The first reading's latch command (the second write to port 0x43)
    // is followed by 5 ms: that reading is too uncertain for any interval
    // the count allows, so the next attempt measures.
    assert_calibrated(&calibrate_with_stall(0x43, 1, 5_000_000));
    // A stall in a later reading (the 100th) only makes the interval end
    // at a later one.
    assert_calibrated(&calibrate_with_stall(0x43, 100, 5_000_000));
}
