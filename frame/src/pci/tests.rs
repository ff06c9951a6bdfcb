//! Host tests of enumeration, BAR sizing, capabilities and MSI-X parsing
//! against a simulated configuration space, and of the MCFG parser.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::vec::Vec;

use super::config::{self, ConfigAccess};
use super::*;

/// One simulated function: 256 bytes of config space, and per BAR the
/// size mask the hardware would report (0 for no BAR; bit 0 of the
/// original value says I/O).
#[derive(Clone)]
struct FakeFn {
    space: [u32; 64],
    /// Writable bits of each BAR register (the decoder's size mask).
    bar_mask: [u32; 6],
    /// Writes seen on the command register while a BAR held all ones.
    sized_while_decoding: bool,
}

struct FakeBus {
    fns: Mutex<BTreeMap<Bdf, FakeFn>>,
}

fn bdf(bus: u8, device: u8, function: u8) -> Bdf {
    Bdf {
        bus,
        device,
        function,
    }
}

impl ConfigAccess for FakeBus {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn space_size(&self) -> u16 {
        256
    }
    fn read32(&self, bdf: Bdf, offset: u16) -> u32 {
        let fns = self.fns.lock().unwrap();
        match fns.get(&bdf) {
            Some(f) if offset < 256 => f.space[usize::from(offset / 4)],
            _ => u32::MAX,
        }
    }
    fn write32(&self, bdf: Bdf, offset: u16, value: u32) {
        let mut fns = self.fns.lock().unwrap();
        let Some(f) = fns.get_mut(&bdf) else { return };
        let i = usize::from(offset / 4);
        match offset {
            0x10..=0x27 => {
                let b = i - 4;
                let mask = f.bar_mask[b];
                let low = f.space[i] & !mask;
                f.space[i] = (value & mask) | low;
                if value == u32::MAX && f.space[1] & 3 != 0 {
                    f.sized_while_decoding = true;
                }
            }
            0x04 => {
                // Command is writable; status bits are write-1-to-clear.
                let status = (f.space[1] >> 16) & !(value >> 16);
                f.space[1] = (value & 0xffff) | status << 16;
            }
            _ => f.space[i] = value,
        }
    }
}

fn function(vendor: u16, device: u16, class: u32, header: u8) -> FakeFn {
    let mut space = [0u32; 64];
    space[0] = u32::from(device) << 16 | u32::from(vendor);
    space[1] = 0x0010_0007; // capabilities list; io, memory, bus master on
    space[2] = class;
    space[3] = u32::from(header) << 16;
    FakeFn {
        space,
        bar_mask: [0; 6],
        sized_while_decoding: false,
    }
}

/// A virtio-like function: BAR0 I/O (32 ports), BAR1 32-bit memory 4 KiB
/// holding the MSI-X table (3 entries) and PBA, BAR4/5 a 64-bit
/// prefetchable 16 KiB BAR above 4 GiB; capabilities: vendor (0x09),
/// MSI-X (0x11), and a list whose last entry points back at the first.
fn virtio_like() -> FakeFn {
    let mut f = function(0x1af4, 0x1042, 0x0100_0001, 0);
    f.space[4] = 0xc041; // I/O at 0xc040
    f.bar_mask[0] = 0xffff_ffe0;
    f.space[5] = 0xfeb0_0000; // 32-bit memory
    f.bar_mask[1] = 0xffff_f000;
    f.space[8] = 0x0000_000c; // 64-bit prefetchable, low half
    f.bar_mask[4] = 0xffff_c000;
    f.space[9] = 0x0000_0008; // high half: 8 << 32
    f.bar_mask[5] = 0xffff_ffff;
    f.space[11] = 0x1100_1af4; // subsystem
    f.space[15] = 0x0000_010b; // pin INTA, line 11
    f.space[13] = 0x40; // capabilities pointer
    f.space[0x40 / 4] = 0x0010_5009; // vendor cap, next 0x50
    f.space[0x50 / 4] = 0x0002_4011; // MSI-X, next 0x40 (a loop), 3 entries
    f.space[0x54 / 4] = 0x0000_0001; // table: BAR1 + 0
    f.space[0x58 / 4] = 0x0000_0801; // PBA: BAR1 + 0x800
    f
}

fn machine() -> FakeBus {
    let mut fns = BTreeMap::new();
    fns.insert(bdf(0, 0, 0), function(0x8086, 0x29c0, 0x0600_0000, 0));
    fns.insert(bdf(0, 3, 0), virtio_like());
    // A multi-function device with a hole at function 1.
    let mut mf = function(0x8086, 0x2918, 0x0601_0002, 0x80);
    mf.space[1] = 0;
    fns.insert(bdf(0, 31, 0), mf);
    fns.insert(bdf(0, 31, 2), function(0x8086, 0x2922, 0x0106_0102, 0));
    // A bridge to bus 2, and one whose secondary bus loops back to 0.
    let mut br = function(0x1b36, 0x000c, 0x0604_0000, 1);
    br.space[6] = 0x0002_0200;
    fns.insert(bdf(0, 4, 0), br);
    let mut looping = function(0x1b36, 0x000c, 0x0604_0000, 1);
    looping.space[6] = 0x0002_0202; // secondary: its own bus
    fns.insert(bdf(2, 0, 0), looping);
    fns.insert(bdf(2, 1, 0), function(0x1af4, 0x1041, 0x0200_0001, 0));
    // A device on a bus no bridge leads to is not found.
    fns.insert(bdf(7, 0, 0), function(0xdead, 0xbeef, 0, 0));
    FakeBus {
        fns: Mutex::new(fns),
    }
}

#[test]
fn bars_are_sized_with_decoding_off_and_restored() {
    let bus = machine();
    let f = bdf(0, 3, 0);
    let before = bus.fns.lock().unwrap()[&f].space;
    let bars = config::size_bars(&bus, f);
    assert_eq!(
        bars,
        [
            BarInfo::Io {
                base: 0xc040,
                size: 0x20
            },
            BarInfo::Mem {
                base: 0xfeb0_0000,
                size: 0x1000,
                prefetchable: false,
                is64: false
            },
            BarInfo::None,
            BarInfo::None,
            BarInfo::Mem {
                base: 0x8_0000_0000,
                size: 0x4000,
                prefetchable: true,
                is64: true
            },
            BarInfo::None,
        ]
    );
    let after = bus.fns.lock().unwrap()[&f].clone();
    assert_eq!(after.space, before, "every BAR and the command restored");
    assert!(
        !after.sized_while_decoding,
        "decoding was off while a BAR held all ones"
    );
}

#[test]
fn a_16_bit_io_decoder_and_an_unimplemented_bar_are_sized_right() {
    let bus = machine();
    let f = bdf(0, 3, 0);
    {
        let mut fns = bus.fns.lock().unwrap();
        let v = fns.get_mut(&f).unwrap();
        v.bar_mask[0] = 0x0000_fff0; // upper 16 bits read back as zero
        v.space[4] = 0x0101;
        v.bar_mask[1] = 0; // no decoder: reads back zero
        v.space[5] = 0;
    }
    let bars = config::size_bars(&bus, f);
    assert_eq!(
        bars[0],
        BarInfo::Io {
            base: 0x100,
            size: 0x10
        }
    );
    assert_eq!(bars[1], BarInfo::None);
}

#[test]
fn capability_walk_stops_at_a_loop_and_finds_msix() {
    let bus = machine();
    let f = bdf(0, 3, 0);
    let caps = config::capabilities(&bus, f);
    assert_eq!(caps, [(0x09, 0x40), (0x11, 0x50)]);
    let m = config::msix(&bus, f, &caps).unwrap();
    assert_eq!(
        m,
        MsixInfo {
            cap: 0x50,
            table_size: 3,
            table_bar: 1,
            table_offset: 0,
            pba_bar: 1,
            pba_offset: 0x800
        }
    );
    assert_eq!(m.ranges(), [(1, 0, 48), (1, 0x800, 8)]);
    // A pointer into the header, or no capabilities bit: no list.
    bus.fns.lock().unwrap().get_mut(&f).unwrap().space[13] = 0x3c;
    assert!(config::capabilities(&bus, f).is_empty());
    bus.fns.lock().unwrap().get_mut(&f).unwrap().space[1] &= !(0x10 << 16);
    assert!(config::capabilities(&bus, f).is_empty());
    // An MSI-X BIR past BAR 5 is not MSI-X.
    bus.fns.lock().unwrap().get_mut(&f).unwrap().space[0x54 / 4] = 6;
    assert_eq!(config::msix(&bus, f, &[(0x11, 0x50)]), None);
}

#[test]
fn enumeration_follows_bridges_once_and_disables_intx() {
    let bus = machine();
    let found = config::enumerate(&bus);
    let bdfs: Vec<Bdf> = found.iter().map(|f| f.info.bdf).collect();
    assert_eq!(
        bdfs,
        [
            bdf(0, 0, 0),
            bdf(0, 3, 0),
            bdf(0, 4, 0),
            bdf(0, 31, 0),
            bdf(0, 31, 2),
            bdf(2, 0, 0),
            bdf(2, 1, 0)
        ]
    );
    let v = found.iter().find(|f| f.info.bdf == bdf(0, 3, 0)).unwrap();
    assert_eq!(
        v.info,
        PciDeviceInfo {
            bdf: bdf(0, 3, 0),
            vendor_id: 0x1af4,
            device_id: 0x1042,
            class: 1,
            subclass: 0,
            prog_if: 0,
            revision: 1,
            subsystem_vendor_id: 0x1af4,
            subsystem_id: 0x1100,
            header_type: 0,
            interrupt_pin: 1,
        }
    );
    assert_eq!(
        v.msix_phys_ranges(),
        [(0xfeb0_0000, 0xfeb0_0030), (0xfeb0_0800, 0xfeb0_0808)]
    );
    let fns = bus.fns.lock().unwrap();
    for f in found.iter().filter(|f| f.info.header_type == 0) {
        let cmd = fns[&f.info.bdf].space[1] as u16;
        assert_ne!(cmd & CMD_INTX_DISABLE, 0, "{} INTx off", f.info.bdf);
    }
    assert_eq!(
        fns[&bdf(0, 4, 0)].space[1] as u16 & CMD_INTX_DISABLE,
        0,
        "bridges untouched"
    );
}

#[test]
fn command_updates_never_clear_status_bits() {
    let bus = machine();
    let f = bdf(0, 3, 0);
    // Status: capabilities list plus a latched error (write-1-to-clear).
    bus.fns.lock().unwrap().get_mut(&f).unwrap().space[1] |= 0x8000 << 16;
    config::update_command(&bus, f, CMD_BUS_MASTER | CMD_INTX_DISABLE, CMD_IO);
    let v = bus.fns.lock().unwrap()[&f].space[1];
    assert_eq!(
        v & 0xffff,
        u32::from(CMD_MEMORY | CMD_BUS_MASTER | CMD_INTX_DISABLE)
    );
    assert_eq!(v >> 16, 0x8010, "status kept");
}

#[test]
fn msix_enable_sets_enable_and_clears_function_mask() {
    let bus = machine();
    let f = bdf(0, 3, 0);
    bus.fns.lock().unwrap().get_mut(&f).unwrap().space[0x50 / 4] |= 1 << 30;
    let caps = config::capabilities(&bus, f);
    let m = config::msix(&bus, f, &caps).unwrap();
    config::enable_msix(&bus, f, m);
    let d = bus.fns.lock().unwrap()[&f].space[0x50 / 4];
    assert_eq!(d, 0x8002_4011);
}

#[test]
fn mcfg_parsing_takes_the_first_sane_segment_0_entry() {
    let mut t = vec![0u8; 44];
    let entry = |base: u64, seg: u16, s: u8, e: u8| {
        let mut v = base.to_le_bytes().to_vec();
        v.extend(seg.to_le_bytes());
        v.extend([s, e, 0, 0, 0, 0]);
        v
    };
    t.extend(entry(0xc000_0000, 1, 0, 255)); // another segment
    t.extend(entry(0xb000_1000, 0, 0, 255)); // misaligned
    t.extend(entry(0xb000_0000, 0, 4, 2)); // empty bus range
    assert_eq!(super::acpi::parse_mcfg(&t), None);
    t.extend(entry(0xb000_0000, 0, 0, 255));
    t.extend([0u8; 7]); // a truncated trailing entry
    assert_eq!(super::acpi::parse_mcfg(&t), Some((0xb000_0000, 0, 255)));
}

#[test]
fn config_addresses_follow_the_two_mechanisms() {
    assert_eq!(config::legacy_address(bdf(1, 2, 3), 0x3e), 0x8001_133c);
    assert_eq!(config::ecam_offset(bdf(1, 31, 7), 0xffe), 0xf_fffc);
}

#[test]
fn the_simulated_machine_has_no_pci_and_claims_fail_cleanly() {
    crate::sim::run(|| {
        // No MCFG in the simulated firmware and nothing behind 0xcfc.
        assert_eq!(config_mechanism(), "legacy");
        assert!(devices().is_empty());
        assert_eq!(claim(bdf(0, 0, 0)).err(), Some(Error::InvalidArgs));
    })
}
