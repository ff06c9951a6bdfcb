//! In-kernel checks of frame's device layer (`ktest=pci`, `pci_irq`, `pci_intx`)
//! on QEMU's q35 machine: enumeration through ECAM, claiming, BARs with
//! their MSI-X holes, I/O ports, and MSI-X delivery (q35's default NIC,
//! an e1000e, raises an interrupt on request).

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU32, Ordering};

use frame::Error;
use frame::pci::{self, Bar, Bdf, PciDevice, PciDeviceInfo};

type Res = core::result::Result<(), String>;

fn check(cond: bool, what: &str) -> Res {
    if cond {
        Ok(())
    } else {
        Err(String::from(what))
    }
}

const CAP_MSIX: u8 = 0x11;

/// (table BAR, table offset, entries), (PBA BAR, PBA offset).
type MsixLayout = ((usize, usize, usize), (usize, usize));

/// The MSI-X table and PBA of a claimed function, as its config space says.
fn msix_layout(dev: &PciDevice) -> Option<MsixLayout> {
    let &(_, cap) = dev.capabilities().iter().find(|(id, _)| *id == CAP_MSIX)?;
    let ctrl = dev.config_read_u16(cap + 2).ok()?;
    let table = dev.config_read_u32(cap + 4).ok()?;
    let pba = dev.config_read_u32(cap + 8).ok()?;
    Some((
        (
            (table & 7) as usize,
            (table & !7) as usize,
            usize::from(ctrl & 0x7ff) + 1,
        ),
        ((pba & 7) as usize, (pba & !7) as usize),
    ))
}

fn describe(d: &PciDeviceInfo) -> String {
    format!(
        "{} {:04x}:{:04x} class {:02x}.{:02x}.{:02x} rev {} subsys {:04x}:{:04x} pin {}",
        d.bdf,
        d.vendor_id,
        d.device_id,
        d.class,
        d.subclass,
        d.prog_if,
        d.revision,
        d.subsystem_vendor_id,
        d.subsystem_id,
        d.interrupt_pin
    )
}

pub fn pci() -> Res {
    let mech = pci::config_mechanism();
    frame::println!("pci: configuration access through {mech}");
    let devs = pci::devices();
    for d in &devs {
        frame::println!("pci: {}", describe(d));
    }
    let host = Bdf {
        bus: 0,
        device: 0,
        function: 0,
    };
    let hb = devs
        .iter()
        .find(|d| d.bdf == host)
        .ok_or("no host bridge at 00:00.0")?;
    check(
        hb.class == 6 && hb.subclass == 0,
        "00:00.0 is not a host bridge",
    )?;
    // q35 (host bridge 8086:29c0) has an MCFG table; QEMU's `pc` machine
    // (i440FX, 8086:1237) has none, so frame falls back to 0xcf8/0xcfc.
    let q35 = hb.vendor_id == 0x8086 && hb.device_id == 0x29c0;
    check(
        mech == if q35 { "ecam" } else { "legacy" },
        "ECAM on q35, the legacy ports without an MCFG",
    )?;
    check(
        pci::claim(Bdf {
            bus: 0,
            device: 31,
            function: 7,
        })
        .err()
            == Some(Error::InvalidArgs),
        "claiming a missing function",
    )?;

    // Claiming: once at a time.
    let first = pci::claim(host).map_err(|e| format!("claim 00:00.0: {e:?}"))?;
    check(
        pci::claim(host).err() == Some(Error::AccessDenied),
        "a second claim must be refused",
    )?;
    check(
        first.config_read_u16(0).ok() == Some(hb.vendor_id),
        "config read of the vendor id",
    )?;
    check(
        first.config_read_u32(2).is_err() && first.config_read_u16(1).is_err(),
        "unaligned config reads are refused",
    )?;
    check(
        first.config_read_u32(4096).is_err(),
        "config reads past the space are refused",
    )?;
    drop(first);
    drop(pci::claim(host).map_err(|e| format!("claim after release: {e:?}"))?);

    // Every BAR of every device maps (32- and 64-bit memory, I/O); a BAR
    // index without a BAR is refused.
    for d in devs.iter().filter(|d| d.header_type == 0) {
        let dev = pci::claim(d.bdf).map_err(|e| format!("claim {}: {e:?}", d.bdf))?;
        for i in 0..6 {
            match dev.bar(i) {
                Ok(Bar::Mem(m)) => {
                    frame::println!(
                        "pci: {} BAR {i}: memory {:#x}+{:#x}",
                        d.bdf,
                        m.paddr(),
                        m.len()
                    );
                    check(
                        m.len() >= 16 && m.len().is_power_of_two(),
                        "a memory BAR's size is a power of two",
                    )?;
                }
                Ok(Bar::Port(p)) => frame::println!(
                    "pci: {} BAR {i}: ports {:#x}+{:#x}",
                    d.bdf,
                    p.base(),
                    p.len()
                ),
                Err(e) => check(e == Error::InvalidArgs, "a missing BAR is InvalidArgs")?,
            }
        }
        check(dev.bar(6).is_err(), "BAR 6 does not exist")?;
    }

    // A function with MSI-X: its table and PBA stay frame's.
    let mut msix_checked = false;
    for d in devs.iter().filter(|d| d.header_type == 0) {
        let dev = pci::claim(d.bdf).map_err(|e| format!("claim {}: {e:?}", d.bdf))?;
        let Some(((tbar, toff, n), (pbar, poff))) = msix_layout(&dev) else {
            continue;
        };
        let Ok(Bar::Mem(mem)) = dev.bar(tbar) else {
            return Err(format!("{}: MSI-X table BAR {tbar} is not memory", d.bdf));
        };
        frame::println!(
            "pci: {} MSI-X: {n} entries in BAR {tbar} at {toff:#x}, PBA in BAR {pbar} at {poff:#x}; BAR len {:#x}",
            d.bdf,
            mem.len()
        );
        for off in [toff, toff + 12, toff + 16 * n - 4] {
            check(
                mem.read_u32(off) == Err(Error::AccessDenied),
                "a read of the MSI-X table is refused",
            )?;
            check(
                mem.write_u32(off, 0) == Err(Error::AccessDenied),
                "a write to the MSI-X table is refused",
            )?;
        }
        check(
            mem.read_u64(toff + 16 * n - 8) == Err(Error::AccessDenied),
            "a wide read into the table is refused",
        )?;
        if let Ok(Bar::Mem(pmem)) = dev.bar(pbar) {
            check(
                pmem.read_u32(poff) == Err(Error::AccessDenied),
                "a read of the PBA is refused",
            )?;
        }
        // The sub-window after the table is the device's (if any).
        if toff + 16 * n + 4 <= mem.len() && !(pbar == tbar && poff == toff + 16 * n) {
            let s = mem
                .slice(toff + 16 * n, 4)
                .map_err(|e| format!("slice: {e:?}"))?;
            check(
                s.read_u32(0).is_ok(),
                "a register past the table is readable",
            )?;
        }
        check(
            mem.read_u32(mem.len()).is_err(),
            "a read past the BAR is refused",
        )?;
        check(mem.read_u32(2).is_err(), "an unaligned read is refused")?;
        check(
            mem.slice(mem.len(), 1).is_err(),
            "a slice past the BAR is refused",
        )?;
        msix_checked = true;
        break;
    }
    check(
        msix_checked || !q35,
        "no function with MSI-X found (q35 has an e1000e)",
    )?;

    // An I/O BAR: checked against its range.
    let mut port_checked = false;
    for d in devs.iter().filter(|d| d.header_type == 0) {
        let dev = pci::claim(d.bdf).map_err(|e| format!("claim {}: {e:?}", d.bdf))?;
        for i in 0..6 {
            if let Ok(Bar::Port(p)) = dev.bar(i) {
                frame::println!(
                    "pci: {} BAR {i}: ports {:#x}+{:#x}",
                    d.bdf,
                    p.base(),
                    p.len()
                );
                check(
                    p.read_u8(p.len() as u16).is_err(),
                    "a port past the range is refused",
                )?;
                check(
                    p.read_u32(p.len() as u16 - 2).is_err(),
                    "a wide read straddling the end is refused",
                )?;
                check(p.read_u8(0).is_ok(), "a port in the range is readable")?;
                port_checked = true;
            }
        }
    }
    check(
        port_checked,
        "no I/O BAR found (q35 has AHCI and SMBus I/O BARs)",
    )?;
    Ok(())
}

/// MSI-X delivery: the e1000e sets an "other" cause (link status change)
/// on a write to its ICS register; with IVAR mapping "other" to vector 0,
/// the message arrives at our `IrqLine`.
pub fn pci_irq() -> Res {
    let nic = pci::devices()
        .into_iter()
        .find(|d| d.vendor_id == 0x8086 && d.device_id == 0x10d3)
        .ok_or("no e1000e (8086:10d3) on this machine")?;
    let dev = pci::claim(nic.bdf).map_err(|e| format!("claim: {e:?}"))?;
    let Ok(Bar::Mem(regs)) = dev.bar(0) else {
        return Err("e1000e BAR 0 is not memory".into());
    };
    let lines = dev.irq_lines(1).map_err(|e| format!("irq_lines: {e:?}"))?;
    check(
        dev.irq_lines(1).err() == Some(Error::AccessDenied),
        "a second irq_lines is refused",
    )?;
    let count = Arc::new(AtomicU32::new(0));
    let c = count.clone();
    let regs2 = regs.clone();
    lines[0].on_active(move || {
        // Acknowledge every cause (ICR is write-1-to-clear).
        let _ = regs2.write_u32(0xc0, u32::MAX);
        c.fetch_add(1, Ordering::Relaxed);
    });
    dev.enable_memory_space();
    dev.enable_bus_master();
    const ICS: usize = 0xc8;
    const IMS: usize = 0xd0;
    const IVAR: usize = 0xe4;
    const LSC: u32 = 1 << 2;
    const OTHER: u32 = 1 << 24;
    regs.write_u32(IVAR, 0x8 << 16)
        .map_err(|e| format!("IVAR: {e:?}"))?;
    regs.write_u32(IMS, LSC | OTHER)
        .map_err(|e| format!("IMS: {e:?}"))?;
    let mut raised = 0;
    for round in 1..=3u32 {
        regs.write_u32(ICS, LSC)
            .map_err(|e| format!("ICS: {e:?}"))?;
        raised += 1;
        let until = frame::timer::jiffies() + 100;
        while count.load(Ordering::Relaxed) < round && frame::timer::jiffies() < until {
            frame::task::yield_now();
        }
        frame::println!(
            "pci_irq: round {round}: {} interrupts",
            count.load(Ordering::Relaxed)
        );
    }
    check(
        count.load(Ordering::Relaxed) >= raised,
        "every ICS write was delivered as an MSI-X interrupt",
    )?;
    // Masked: no more callbacks.
    lines[0].mask();
    let before = count.load(Ordering::Relaxed);
    regs.write_u32(ICS, LSC)
        .map_err(|e| format!("ICS: {e:?}"))?;
    let until = frame::timer::jiffies() + 20;
    while frame::timer::jiffies() < until {
        frame::task::yield_now();
    }
    check(
        count.load(Ordering::Relaxed) == before,
        "a masked line delivers nothing",
    )?;
    lines[0].unmask();
    let until = frame::timer::jiffies() + 100;
    while count.load(Ordering::Relaxed) == before && frame::timer::jiffies() < until {
        frame::task::yield_now();
    }
    check(
        count.load(Ordering::Relaxed) > before,
        "unmasking delivers the pending message",
    )?;
    let vector = lines[0].vector();
    drop(lines);
    let _ = regs.write_u32(IMS, 0);
    frame::println!("pci_irq: vector {vector:#x} freed");
    // The claim stays while the device handle lives; dropping both frees it.
    drop(dev);
    drop(pci::claim(nic.bdf).map_err(|e| format!("claim after release: {e:?}"))?);
    Ok(())
}

/// Legacy INTx through the I/O APIC: the e1000e with MSI-X left off raises
/// INTA on an ICS write; reading ICR deasserts it. The line is shared by
/// every INTx pin, so the callback runs only while the function's status
/// register shows its interrupt.
pub fn pci_intx() -> Res {
    let nic = pci::devices()
        .into_iter()
        .find(|d| d.vendor_id == 0x8086 && d.device_id == 0x10d3)
        .ok_or("no e1000e (8086:10d3) on this machine")?;
    check(nic.interrupt_pin == 1, "the e1000e uses INTA")?;
    let dev = pci::claim(nic.bdf).map_err(|e| format!("claim: {e:?}"))?;
    let Ok(Bar::Mem(regs)) = dev.bar(0) else {
        return Err("e1000e BAR 0 is not memory".into());
    };
    let line = dev
        .legacy_irq_line()
        .map_err(|e| format!("legacy_irq_line: {e:?}"))?;
    check(
        dev.irq_lines(1).err() == Some(Error::AccessDenied),
        "irq_lines after legacy_irq_line is refused",
    )?;
    let count = Arc::new(AtomicU32::new(0));
    let c = count.clone();
    let regs2 = regs.clone();
    line.on_active(move || {
        // Reading ICR clears the causes and deasserts INTx.
        let _ = regs2.read_u32(0xc0);
        c.fetch_add(1, Ordering::Relaxed);
    });
    // A second INTx user on the same (shared) vector: the AHCI controller
    // (MSI but no MSI-X, so irq_lines gives its INTx line). It never
    // asserts here, so its callback must never run.
    let ahci = pci::devices()
        .into_iter()
        .find(|d| d.class == 1 && d.subclass == 6)
        .ok_or("no AHCI controller")?;
    let ahci = pci::claim(ahci.bdf).map_err(|e| format!("claim AHCI: {e:?}"))?;
    let ahci_lines = ahci
        .irq_lines(1)
        .map_err(|e| format!("AHCI irq_lines: {e:?}"))?;
    check(
        ahci_lines.len() == 1 && ahci_lines[0].vector() == line.vector(),
        "INTx lines share one vector",
    )?;
    let ahci_count = Arc::new(AtomicU32::new(0));
    let ac = ahci_count.clone();
    ahci_lines[0].on_active(move || {
        ac.fetch_add(1, Ordering::Relaxed);
    });
    dev.enable_memory_space();
    const ICS: usize = 0xc8;
    const IMS: usize = 0xd0;
    const LSC: u32 = 1 << 2;
    regs.write_u32(IMS, LSC)
        .map_err(|e| format!("IMS: {e:?}"))?;
    for round in 1..=3u32 {
        regs.write_u32(ICS, LSC)
            .map_err(|e| format!("ICS: {e:?}"))?;
        let until = frame::timer::jiffies() + 100;
        while count.load(Ordering::Relaxed) < round && frame::timer::jiffies() < until {
            frame::task::yield_now();
        }
        frame::println!(
            "pci_intx: round {round}: {} interrupts on vector {:#x}",
            count.load(Ordering::Relaxed),
            line.vector()
        );
    }
    check(
        count.load(Ordering::Relaxed) == 3,
        "each ICS write was delivered once through the I/O APIC",
    )?;
    check(
        ahci_count.load(Ordering::Relaxed) == 0,
        "a sharer whose status shows no interrupt is not called",
    )?;
    // Masked at the source (the INTx disable bit): nothing is delivered.
    line.mask();
    regs.write_u32(ICS, LSC)
        .map_err(|e| format!("ICS: {e:?}"))?;
    let until = frame::timer::jiffies() + 20;
    while frame::timer::jiffies() < until {
        frame::task::yield_now();
    }
    check(
        count.load(Ordering::Relaxed) == 3,
        "a masked INTx line delivers nothing",
    )?;
    line.unmask();
    let until = frame::timer::jiffies() + 100;
    while count.load(Ordering::Relaxed) == 3 && frame::timer::jiffies() < until {
        frame::task::yield_now();
    }
    check(
        count.load(Ordering::Relaxed) == 4,
        "unmasking delivers the still-asserted INTx",
    )?;
    drop(line);
    let _ = regs.write_u32(IMS, 0);
    check(
        ahci_count.load(Ordering::Relaxed) == 0,
        "the AHCI callback never ran",
    )?;
    drop(ahci_lines);
    Ok(())
}

/// `ktest=virtio_net`: the virtio-net driver alone, on QEMU user networking
/// (the xtask case boots with `-netdev user` and a virtio-net-pci NIC).
/// ARP requests for the gateway 10.0.2.2 and the DNS server 10.0.2.3 go
/// out, more than the transmit ring holds, so its slots are reused;
/// QEMU's slirp answers each, and the replies must come back through the
/// receive ring with an interrupt.
///
/// `mode` is the interrupt mode the boot arranged: "MSI-X", or "INTx" for
/// `ktest=virtio_net_intx` (QEMU's `vectors=0`), where each interrupt must
/// be acknowledged through the ISR status or the level-triggered line
/// would fire forever.
pub fn virtio_net(mode: &str) -> Res {
    use crate::error::Errno;
    use crate::net::device::NetDriver;

    let nic = crate::net::virtio_net::probe_first_unregistered()
        .map_err(|e| format!("probe: {e:?}"))?;
    let mac = nic.mac();
    frame::println!(
        "virtio-net: MAC {}, {}, link {}",
        crate::net::virtio_net::mac_string(mac),
        nic.irq_mode(),
        if nic.link_up() { "up" } else { "down" }
    );
    check(nic.link_up(), "the link is up")?;
    check(nic.irq_mode() == mode, "the interrupt mode the boot arranged")?;
    check(mac == [0x52, 0x54, 0, 0x12, 0x34, 0x56], "QEMU's default MAC")?;
    check(
        nic.transmit(&[0u8; 13]).err().map(|e| e.errno()) == Some(Errno::EMSGSIZE),
        "a 13-byte frame is refused",
    )?;
    check(
        nic.transmit(&[0u8; 1519]).err().map(|e| e.errno()) == Some(Errno::EMSGSIZE),
        "a frame above 1518 bytes is refused",
    )?;

    let ours = [10u8, 0, 2, 15];
    let arp_request = |target: [u8; 4]| {
        let mut f = alloc::vec![0u8; 60];
        f[0..6].copy_from_slice(&[0xff; 6]);
        f[6..12].copy_from_slice(&mac);
        f[12..14].copy_from_slice(&[0x08, 0x06]);
        f[14..22].copy_from_slice(&[0, 1, 0x08, 0x00, 6, 4, 0, 1]);
        f[22..28].copy_from_slice(&mac);
        f[28..32].copy_from_slice(&ours);
        f[38..42].copy_from_slice(&target);
        f
    };
    // An ARP reply to us: (sender IP, sender MAC).
    let parse_reply = |f: &[u8]| -> Option<([u8; 4], [u8; 6])> {
        if f.len() < 42 || f[12..14] != [0x08, 0x06] || f[20..22] != [0, 2] || f[38..42] != ours {
            return None;
        }
        Some((f[28..32].try_into().ok()?, f[22..28].try_into().ok()?))
    };

    const REQUESTS: usize = 100;
    let (mut sent, mut full, mut replies, mut other) = (0usize, 0usize, [0usize; 2], 0usize);
    let targets = [[10u8, 0, 2, 2], [10u8, 0, 2, 3]];
    let mut gateway_mac = None;
    let until = frame::timer::jiffies() + 30 * u64::from(frame::timer::TICK_HZ);
    let mut peak = 0;
    while (sent < REQUESTS || replies.iter().sum::<usize>() < REQUESTS)
        && frame::timer::jiffies() < until
    {
        // Send as many as the ring takes.
        while sent < REQUESTS {
            match nic.transmit(&arp_request(targets[sent % 2])) {
                Ok(()) => sent += 1,
                Err(e) if e.errno() == Errno::EAGAIN => {
                    full += 1;
                    break;
                }
                Err(e) => return Err(format!("transmit: {e:?}")),
            }
        }
        peak = peak.max(nic.tx_in_flight());
        while let Some(f) = nic.receive() {
            match parse_reply(&f) {
                Some((ip, from)) if ip == targets[0] => {
                    replies[0] += 1;
                    gateway_mac = Some(from);
                }
                Some((ip, _)) if ip == targets[1] => replies[1] += 1,
                _ => other += 1,
            }
        }
        frame::task::yield_now();
    }
    let stats = nic.stats();
    frame::println!(
        "virtio-net: {sent} ARP requests sent ({full} times the ring was full, {peak} in flight at most), \
         replies {replies:?}, {other} other frames, {} interrupts; stats {stats:?}",
        nic.interrupts()
    );
    if let Some(m) = gateway_mac {
        frame::println!("virtio-net: 10.0.2.2 is at {}", crate::net::virtio_net::mac_string(m));
    }
    check(sent == REQUESTS, "every request was queued")?;
    // Slots are reclaimed only when the ring is full, so after 100 frames
    // through 64 slots at least 36 are in flight (full rings and EAGAIN are
    // the host tests' business: QEMU drains the ring too fast to count on).
    check(peak >= 2, "several frames in flight at once")?;
    check(replies[0] > 0 && replies[1] > 0, "both 10.0.2.2 and 10.0.2.3 answered")?;
    check(
        replies.iter().sum::<usize>() == REQUESTS,
        "one reply per request",
    )?;
    check(nic.interrupts() > 0, "frames arrived with interrupts")?;
    check(
        stats.rx_dropped == 0 && stats.device_errors == 0,
        "QEMU's device is well-behaved",
    )?;
    check(stats.tx_packets == REQUESTS as u64, "tx_packets counts the requests")?;
    restart_cycles(&nic, &arp_request(targets[0]), &parse_reply)
}

/// An ARP reply's sender IP and MAC.
type ArpReply = ([u8; 4], [u8; 6]);

/// The NIC's driver runs in a domain behind a shadow: `CYCLES` (1,000) times, the
/// next crash point is made to panic and an ARP request is sent; the
/// shadow restarts the driver (device reset, new domain, receive buffers
/// posted again) and the request must still be answered. Afterwards the
/// free frames are where they were (the dead drivers' rings and slots
/// came back) and the link is up.
fn restart_cycles(
    nic: &crate::net::virtio_net::Nic,
    request: &[u8],
    parse_reply: &dyn Fn(&[u8]) -> Option<ArpReply>,
) -> Res {
    use crate::net::device::NetDriver;
    use frame::mm::frame_alloc::free_frames;

    const CYCLES: u64 = 1000;
    let cfg = &crate::domains::VIRTIO_NET;
    let mut before = 0;
    let restarts_before = frame::domain::domains()
        .iter()
        .find(|d| d.name == "virtio-net")
        .map_or(0, |d| d.restarts);
    for i in 0..=CYCLES {
        while nic.receive().is_some() {}
        if i == 1 {
            // Cycle 0 warmed the kernel's own structures up.
            before = free_frames();
        }
        cfg.forced
            .write_text(b"1")
            .map_err(|e| alloc::format!("arming the crash: {e:?}"))?;
        let until = frame::timer::jiffies() + 10 * u64::from(frame::timer::TICK_HZ);
        let mut answered = false;
        let mut sent = false;
        while !answered && frame::timer::jiffies() < until {
            if !sent {
                sent = nic.transmit(request).is_ok();
            }
            while let Some(f) = nic.receive() {
                answered |= parse_reply(&f).is_some();
            }
            frame::task::yield_now();
        }
        check(sent, "the request was queued")?;
        if !answered {
            return Err(alloc::format!("cycle {i}: no reply after the driver's restart"));
        }
        check(!nic.is_failed(), "the device was not failed")?;
    }
    while nic.receive().is_some() {}
    let after = free_frames();
    let restarts = frame::domain::domains()
        .iter()
        .find(|d| d.name == "virtio-net")
        .map_or(0, |d| d.restarts)
        - restarts_before;
    frame::println!(
        "virtio-net: {CYCLES} crash-and-restart cycles: free frames {before} -> {after}, {restarts} restarts, link {}",
        if nic.link_up() { "up" } else { "down" }
    );
    check(restarts > CYCLES, "the driver restarted every cycle")?;
    check(cfg.forced.get() == 0, "every armed crash happened")?;
    check(after + 1 >= before, "the restarts left the free frames where they were")?;
    check(nic.link_up(), "the link is up after the restarts")?;
    Ok(())
}
