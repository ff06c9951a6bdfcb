//! The simulated machine's devices, as frame's drivers see them: the port
//! I/O devices (COM1 UART, the two 8259 PICs, PIT channel 2 with its gate
//! in port 0x61, the CMOS RTC, QEMU's isa-debug-exit) and the MMIO pages
//! of the local APIC and the I/O APIC.
//!
//! MMIO pages are plain memory (atomics, so tests can look at them): a
//! register keeps the last value written, and the APIC timer's current
//! count is rewritten whenever simulated time moves (see
//! [`sync_apic_current`]).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::AtomicU32;
use std::vec::Vec;

use crate::mm::Paddr;

/// TSC frequency of the simulated CPU.
pub const TSC_HZ: u64 = 1_000_000_000;
/// What the local APIC timer counts per second (after its divider).
pub const APIC_TIMER_HZ: u32 = 62_500_000;
const PIT_HZ: u64 = 1_193_182;
/// The RTC's time at power-on: 2026-05-20 12:34:56 UTC.
pub const RTC_UNIX_TIME: u64 = 1_779_280_496;

pub const LAPIC_PADDR: Paddr = 0xfee0_0000;
/// The local APIC's timer registers (offsets in its page).
pub const LAPIC_TIMER_CURRENT: usize = 0x390;

/// Sets the local APIC timer's current-count register for time `tsc`: a
/// count that runs down at [`APIC_TIMER_HZ`] from power-on, wrapping. The
/// model does not restart it when an initial count is written (it keeps
/// no write hooks on MMIO pages): only calibration reads it, and that
/// uses differences between readings.
pub fn sync_apic_current(tsc: u64) {
    let ticks = u128::from(tsc) * u128::from(APIC_TIMER_HZ) / u128::from(TSC_HZ);
    LAPIC.reg(LAPIC_TIMER_CURRENT).store(
        u32::MAX.wrapping_sub(ticks as u32),
        core::sync::atomic::Ordering::Relaxed,
    );
}

/// A 4 KiB MMIO page.
#[repr(C, align(4096))]
pub struct MmioPage(pub [AtomicU32; 1024]);

impl MmioPage {
    const fn new() -> MmioPage {
        MmioPage([const { AtomicU32::new(0) }; 1024])
    }

    /// The register at byte offset `off`.
    pub fn reg(&self, off: usize) -> &AtomicU32 {
        &self.0[off / 4]
    }
}

pub static LAPIC: MmioPage = MmioPage::new();
pub static IOAPIC: MmioPage = MmioPage::new();
/// Two pages of a simulated PCI memory BAR (plain registers), outside RAM
/// and outside every frame-owned range: what `io::IoMem` tests map.
pub const DEVICE_BAR_PADDR: Paddr = 0xfe00_0000;
pub static DEVICE_BAR: [MmioPage; 2] = [MmioPage::new(), MmioPage::new()];

/// The MMIO page at physical address `pa`, if a device lives there.
pub fn mmio_page(pa: Paddr) -> Option<&'static MmioPage> {
    match pa & !0xfff {
        LAPIC_PADDR => Some(&LAPIC),
        p if p == crate::arch::x86_64::ioapic::IOAPIC_PADDR => Some(&IOAPIC),
        DEVICE_BAR_PADDR => Some(&DEVICE_BAR[0]),
        p if p == DEVICE_BAR_PADDR + 0x1000 => Some(&DEVICE_BAR[1]),
        _ => None,
    }
}

/// The state of the port I/O devices.
#[derive(Default)]
pub struct Ports {
    /// COM1: line control (DLAB in bit 7), interrupt enable, and the bytes
    /// written and still to be read.
    pub uart_lcr: u8,
    pub uart_ier: u8,
    pub uart_divisor: u16,
    pub uart_out: Vec<u8>,
    pub uart_in: VecDeque<u8>,
    /// The two PICs: initialisation words received, vector offset, mask.
    pub pic: [Pic; 2],
    /// PIT channel 2 in mode 0: the count being loaded (low byte first),
    /// the count, the TSC at which it was loaded, and a latched count with
    /// the byte of it to be read next. As in QEMU (hw/timer/i8254.c), the
    /// count runs from the moment it is loaded and the gate (port 0x61
    /// bit 0) neither starts nor pauses it in mode 0.
    pit_lo: Option<u8>,
    pub pit_count: u16,
    pit_loaded_at: Option<u64>,
    pit_latch: Option<(u16, bool)>,
    port61: u8,
    /// CMOS: the selected register, and how often status A was read.
    cmos_index: u8,
    cmos_status_a_reads: u32,
    /// What was written to QEMU's isa-debug-exit port.
    pub exit_code: Option<u8>,
}

#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pic {
    /// Initialisation words still expected after ICW1.
    icw_left: u8,
    pub vector_base: u8,
    pub mask: u8,
    pub initialised: bool,
}

pub static PORTS: Mutex<Ports> = Mutex::new(Ports {
    uart_lcr: 0,
    uart_ier: 0,
    uart_divisor: 0,
    uart_out: Vec::new(),
    uart_in: VecDeque::new(),
    pic: [Pic {
        icw_left: 0,
        vector_base: 0,
        mask: 0,
        initialised: false,
    }; 2],
    pit_lo: None,
    pit_count: 0,
    pit_loaded_at: None,
    pit_latch: None,
    port61: 0,
    cmos_index: 0,
    cmos_status_a_reads: 0,
    exit_code: None,
});

const COM1: u16 = 0x3f8;

fn bcd(v: u64) -> u8 {
    ((v / 10) << 4 | (v % 10)) as u8
}

impl Ports {
    /// `out` to `port` at time `tsc`.
    pub fn write(&mut self, port: u16, value: u8, tsc: u64) {
        match port {
            COM1 if self.uart_lcr & 0x80 != 0 => {
                self.uart_divisor = (self.uart_divisor & 0xff00) | u16::from(value)
            }
            COM1 => self.uart_out.push(value),
            0x3f9 if self.uart_lcr & 0x80 != 0 => {
                self.uart_divisor = (self.uart_divisor & 0xff) | u16::from(value) << 8
            }
            0x3f9 => self.uart_ier = value,
            0x3fa | 0x3fc => {} // FIFO control, modem control
            0x3fb => self.uart_lcr = value,
            0x20 | 0xa0 => {
                let pic = &mut self.pic[usize::from(port == 0xa0)];
                assert_eq!(
                    value, 0x11,
                    "sim: PIC {port:#x}: only ICW1 with ICW4 is modelled"
                );
                *pic = Pic {
                    icw_left: 3,
                    ..Pic::default()
                };
            }
            0x21 | 0xa1 => {
                let pic = &mut self.pic[usize::from(port == 0xa1)];
                match pic.icw_left {
                    3 => pic.vector_base = value,
                    2 => {}
                    1 => {
                        assert_eq!(
                            value & 1,
                            1,
                            "sim: PIC {port:#x}: ICW4 must select 8086 mode"
                        );
                        pic.initialised = true;
                    }
                    _ => pic.mask = value,
                }
                pic.icw_left = pic.icw_left.saturating_sub(1);
            }
            0x43 => {
                assert_eq!(value & 0xc0, 0x80, "sim: only PIT channel 2 is modelled");
                if value & 0x30 == 0 {
                    // Counter latch: the current count, low byte first.
                    self.pit_latch = Some((self.pit_current(tsc), false));
                } else {
                    assert_eq!(value & 0x3f, 0x30, "sim: PIT: only mode 0, lo/hi, binary");
                    self.pit_lo = None;
                    self.pit_loaded_at = None;
                }
            }
            0x42 => match self.pit_lo.take() {
                None => self.pit_lo = Some(value),
                Some(lo) => {
                    self.pit_count = u16::from(lo) | u16::from(value) << 8;
                    self.pit_loaded_at = Some(tsc);
                }
            },
            0x61 => self.port61 = value,
            0x70 => self.cmos_index = value & 0x7f,
            0xf4 => self.exit_code = Some(value),
            _ => panic!("sim: write {value:#x} to port {port:#x}, which has no device"),
        }
    }

    /// `in` from `port` at time `tsc`.
    pub fn read(&mut self, port: u16, tsc: u64) -> u8 {
        match port {
            COM1 => self.uart_in.pop_front().unwrap_or(0),
            // Line status: transmitter always empty; data ready if input waits.
            0x3fd => 0x20 | u8::from(!self.uart_in.is_empty()),
            0x42 => match self.pit_latch.take() {
                Some((count, false)) => {
                    self.pit_latch = Some((count, true));
                    count as u8
                }
                Some((count, true)) => (count >> 8) as u8,
                None => panic!("sim: PIT count read without a latch command"),
            },
            0x61 => {
                // Mode 0: the output goes high when the count reaches 0 and
                // stays high until a new count is written.
                let out2 = self
                    .pit_ticks_since_load(tsc)
                    .is_some_and(|t| t >= u64::from(self.pit_count));
                (self.port61 & 0x0f) | if out2 { 0x20 } else { 0 }
            }
            0x71 => self.cmos(),
            _ => panic!("sim: read from port {port:#x}, which has no device"),
        }
    }

    /// PIT input-clock ticks since the count was loaded.
    fn pit_ticks_since_load(&self, tsc: u64) -> Option<u64> {
        let at = self.pit_loaded_at?;
        Some((u128::from(tsc - at) * u128::from(PIT_HZ) / u128::from(TSC_HZ)) as u64)
    }

    /// The count as a latch would read it: counting down from the loaded
    /// count, wrapping through 0xffff after 0 (mode 0 goes on counting).
    fn pit_current(&self, tsc: u64) -> u16 {
        let ticks = self.pit_ticks_since_load(tsc).unwrap_or(0);
        self.pit_count.wrapping_sub(ticks as u16)
    }

    fn cmos(&mut self) -> u8 {
        let t = RTC_UNIX_TIME;
        let (days, secs) = (t / 86400, t % 86400);
        // 2026-05-20 is the day RTC_UNIX_TIME falls on.
        assert_eq!(days, 20593);
        match self.cmos_index {
            0x00 => bcd(secs % 60),
            0x02 => bcd(secs / 60 % 60),
            0x04 => bcd(secs / 3600),
            0x07 => bcd(20),
            0x08 => bcd(5),
            0x09 => bcd(26),
            // Status A: an update is in progress on the first read.
            0x0a => {
                self.cmos_status_a_reads += 1;
                if self.cmos_status_a_reads == 1 {
                    0x80
                } else {
                    0
                }
            }
            // Status B: BCD, 24-hour clock.
            0x0b => 0x02,
            r => panic!("sim: CMOS register {r:#x} is not modelled"),
        }
    }
}
