//! virtio-net interfaces: finds virtio network functions on PCI, drives
//! each with the `virtio-net` driver crate inside a driver domain, and
//! registers it with the network stack (`net::device::register_netdev`) as
//! eth0, eth1 ... in PCI address order.
//!
//! The driver runs in a `frame::domain::Domain` (its root object is the
//! driver crate's `NetDevice`, which owns the rings and the packet slots).
//! In front of it sits a *shadow* (the [`Nic`], kernel code), which is what
//! the stack sees. It keeps what must survive a crash of the driver, and
//! talks to the driver only through domain calls (the proxy
//! `#[domain_proxy::interface]` generates) with plain data and lent
//! `RRef`s crossing:
//! - the device handle (register windows, interrupt vectors, the fallback
//!   MAC), in the hand-off table every new driver domain copies from;
//! - the device facts the first driver negotiated (MAC, features): a
//!   restarted driver must find the same ones;
//! - the frames the stack queued and the driver has not taken yet, and the
//!   frames received and not yet taken by the stack.
//!
//! The stack calls `transmit` and `receive` with its own spin lock held,
//! where a domain call (which may sleep) is not allowed: `transmit` only
//! queues the frame and wakes the NIC's worker task, the interrupt only
//! wakes the worker, and the worker makes every call into the domain:
//! it gives the queued frames to the driver, takes received frames into
//! the receive queue and wakes the stack.
//!
//! When a call faults, the worker resets the device (so that it touches
//! none of the dead driver's rings), builds a new domain (which negotiates
//! the features, reads the MAC, sets the queues up and posts every receive
//! buffer again) and goes on with the frames still queued. A frame the dead
//! driver had already given to the device is lost (a NIC may lose frames:
//! TCP retransmits). After [`MAX_FAULTS`] faults in a row the device is
//! failed: the link goes down, `transmit` returns ENETDOWN, and a kernel log
//! line says so. docs/domains.md ("virtio-net") has the argument.

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use frame::dma::DmaCoherent;
use frame::domain::{DeviceReset, Domain, Fault, Handle, RRef};
use frame::irq::IrqLine;
use frame::mm::PAGE_SIZE;
use frame::pci::{self, PciDevice};
use frame::sync::{Once, SpinLock, WaitQueue};
use virtio::Transport;
use virtio::pci::{device_type, device_type_of};
use virtio_net::{NetDevice, NetStats, TxError, Vectors};

use super::device::{NetDevHandle, NetDriver, register_netdev};
use crate::virtio_pci::{Coherent, IrqPlan, Mmio, Regs, irq_lines, map_windows};
use crate::domains::{VIRTIO_NET, crash_point, recovered};
use crate::error::{Errno, Error, Result};

/// Lock level of a NIC's shadow state: above the stack (34), which calls
/// in with its own lock held. Only the heap (58) and the frame allocator
/// (60) are taken inside, never a domain call.
const SHADOW_LOCK: u8 = 56;
/// Lock level of the hand-off table: taken inside a domain call (above
/// `level::DOMAIN`) and by the probe, never with another lock.
const HANDOFF_LOCK: u8 = 45;
/// Driver faults in a row (no frame sent or received in between) after
/// which the device is failed.
pub const MAX_FAULTS: u32 = 5;
/// Back-off before the second restart in a row; doubled for each further
/// one (10, 20, 40, 80 ms).
const BACKOFF_NS: u64 = 10_000_000;
/// Bytes of one frame buffer crossing the domain boundary: the largest
/// frame the driver accepts (MTU + Ethernet header + one VLAN tag) and the
/// largest it can receive, rounded up.
const BUF_SIZE: usize = virtio_net::SLOT_SIZE;
/// Frames the shadow queues for the driver before `transmit` says EAGAIN.
const TX_QUEUE_MAX: usize = 256;
/// Received frames the shadow holds for the stack; beyond, frames stay on
/// the device's ring (which drops when it runs out of buffers).
const RX_QUEUE_MAX: usize = 256;

/// One frame as it crosses into or out of the driver domain.
type FrameBuf = [u8; BUF_SIZE];

// ---------------------------------------------------------------------
// Inside the driver domain.
// ---------------------------------------------------------------------

/// What a new driver domain needs to reach its device. The shadow puts it
/// in [`HANDOFF`] at probe time; `driver_init` copies it.
#[derive(Clone)]
struct DeviceHandle {
    regs: Regs,
    vectors: Option<Vectors>,
    fallback_mac: [u8; 6],
}

/// Device handles by NIC index (never removed: NICs are not unplugged).
static HANDOFF: SpinLock<Vec<DeviceHandle>, HANDOFF_LOCK> = SpinLock::new(Vec::new());

/// A transport over the register windows of hand-off entry `slot`.
fn transport_of(slot: u64) -> Option<Transport<Mmio>> {
    let table = HANDOFF.lock();
    table.get(slot as usize).map(|d| d.regs.transport())
}

/// Stops the device of NIC `slot` when its driver domain dies (frame runs
/// it before it frees the rings and slots the dead driver made).
fn device_reset(slot: u64) -> DeviceReset {
    let transport = transport_of(slot);
    Box::new(move || {
        if let Some(t) = &transport {
            let _ = t.reset();
        }
    })
}

/// The root object of a virtio-net domain.
struct Driver {
    dev: NetDevice<Mmio, Coherent>,
}

frame::exchangeable_struct! {
    /// The device facts a driver negotiated.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Info {
        mac: [u8; 6],
        features: u64,
        link_up: bool,
    }
}

frame::exchangeable_struct! {
    /// What one poll saw: a received frame of `len` bytes in the lent
    /// buffer (0: none), whether more are waiting, the link, the frames
    /// in flight and the driver's counters (`NetStats` in field order).
    struct PollOut {
        len: u32,
        more: bool,
        link_up: bool,
        tx_in_flight: u32,
        stats: [u64; 8],
    }
}

frame::exchangeable_struct! {
    /// How a call into the driver domain failed (the proxy's error).
    #[derive(Debug)]
    struct DriverFault {
        fault: Fault,
    }
}

impl From<Fault> for DriverFault {
    fn from(fault: Fault) -> Self {
        DriverFault { fault }
    }
}

/// What `transmit` did with a frame.
const TX_SENT: u8 = 0;
const TX_FULL: u8 = 1;
const TX_BAD_LENGTH: u8 = 2;
const TX_BROKEN: u8 = 3;

/// The driver domain's interface: the shadow calls it through the proxy
/// (`NetDomainProxy<Driver>`, a `frame::domain::Handle`).
#[domain_proxy::interface]
trait NetDomain {
    /// The device facts the driver negotiated, and the link state.
    fn info(&mut self) -> core::result::Result<Info, DriverFault>;
    /// Sends the first `len` bytes of the lent frame (`TX_*`).
    fn transmit(&mut self, len: u32, frame: &RRef<FrameBuf>) -> core::result::Result<u8, DriverFault>;
    /// Reclaims sent slots and takes one received frame into `buf` (the
    /// interrupt-handling path).
    fn poll(&mut self, buf: &mut RRef<FrameBuf>) -> core::result::Result<PollOut, DriverFault>;
}

impl NetDomain for Driver {
    fn info(&mut self) -> core::result::Result<Info, DriverFault> {
        Ok(Info {
            mac: self.dev.mac(),
            features: self.dev.features(),
            link_up: self.dev.link_up(),
        })
    }

    fn transmit(&mut self, len: u32, frame: &RRef<FrameBuf>) -> core::result::Result<u8, DriverFault> {
        crash_point(&VIRTIO_NET, "transmit", 2);
        let len = (len as usize).min(BUF_SIZE);
        let r = match self.dev.transmit(&frame[..len]) {
            Ok(()) => TX_SENT,
            Err(TxError::Full) => TX_FULL,
            Err(TxError::BadLength) => TX_BAD_LENGTH,
            Err(TxError::Broken) => TX_BROKEN,
        };
        // The device has the frame; the shadow never hears of it.
        crash_point(&VIRTIO_NET, "transmitted", 2);
        Ok(r)
    }

    fn poll(&mut self, buf: &mut RRef<FrameBuf>) -> core::result::Result<PollOut, DriverFault> {
        crash_point(&VIRTIO_NET, "poll", 3);
        self.dev.reclaim_tx();
        let len = self.dev.receive_into(&mut buf[..]).unwrap_or(0);
        if len > 0 {
            // The frame is off the device's ring and not yet reported.
            crash_point(&VIRTIO_NET, "polled", 2);
        }
        let s = self.dev.stats();
        Ok(PollOut {
            len: len as u32,
            more: self.dev.rx_pending(),
            link_up: self.dev.link_up(),
            tx_in_flight: self.dev.tx_in_flight() as u32,
            stats: [
                s.rx_packets,
                s.rx_bytes,
                s.rx_dropped,
                s.rx_length_errors,
                s.tx_packets,
                s.tx_bytes,
                s.tx_dropped,
                s.device_errors,
            ],
        })
    }
}

/// Builds the driver (runs inside the new domain): device reset, feature
/// negotiation, the MAC, both queues, every receive buffer posted,
/// DRIVER_OK.
fn driver_init(slot: u64) -> Driver {
    crash_point(&VIRTIO_NET, "init", 0);
    // The guard is dropped before anything here may panic: a fault with a
    // spin lock held is not recoverable.
    let handle = {
        let table = HANDOFF.lock();
        table.get(slot as usize).cloned()
    };
    let Some(h) = handle else {
        panic!("virtio-net: no device handle {slot}");
    };
    let transport = h.regs.transport();
    let alloc = |bytes: usize| {
        DmaCoherent::alloc(bytes.div_ceil(PAGE_SIZE))
            .ok()
            .map(Coherent)
    };
    let dev = match NetDevice::new(transport, alloc, h.vectors, h.fallback_mac) {
        Ok(dev) => dev,
        Err(e) => panic!("virtio-net: device initialisation failed: {e:?}"),
    };
    crash_point(&VIRTIO_NET, "init-done", 0);
    Driver { dev }
}

// ---------------------------------------------------------------------
// The shadow (kernel side).
// ---------------------------------------------------------------------

struct State {
    /// Frames to give to the driver, oldest first: length and bytes.
    tx: VecDeque<(u32, RRef<FrameBuf>)>,
    /// Frame buffers to reuse for `tx`.
    pool: Vec<RRef<FrameBuf>>,
    /// Frames received, for the stack.
    rx: VecDeque<Vec<u8>>,
    /// The device was failed: link down, ENETDOWN to senders.
    failed: bool,
    link_up: bool,
    /// Frames the driver had in flight at its last poll.
    tx_in_flight: usize,
    /// Counters of dead drivers, plus those of the live one.
    base: NetStats,
    stats: NetStats,
    /// Frames the shadow refused for their length (in `tx_dropped`).
    refused: u64,
}

/// Recovery counters of all virtio-net NICs (debug files).
static RECOVERIES: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds from the last fault to the first frame sent or received by
/// the new driver.
static LAST_RECOVERY_NS: AtomicU64 = AtomicU64::new(0);
/// The largest such time seen.
static MAX_RECOVERY_NS: AtomicU64 = AtomicU64::new(0);

/// One virtio-net function: the shadow of its driver domain.
pub struct Nic {
    /// The domain's name ("virtio-net", "virtio-net1" ...).
    name: &'static str,
    /// Index of its device handle in [`HANDOFF`].
    slot: u64,
    mac: [u8; 6],
    /// The features the first driver negotiated.
    features: u64,
    state: SpinLock<State, SHADOW_LOCK>,
    /// Set by `transmit`, `receive` and the interrupt; the worker sleeps
    /// until it is.
    kick: AtomicBool,
    work: WaitQueue,
    /// Nobody wakes it: the worker's back-off sleeps on it.
    backoff: WaitQueue,
    /// Resets the device after a fault, reads the ISR with INTx (the
    /// shadow's own copy of the register windows).
    reset: Transport<Mmio>,
    intx: bool,
    /// The stack's handle, once registered: the worker calls its `notify`.
    handle: Once<NetDevHandle>,
    /// Device errors already reported in the log.
    reported_errors: AtomicU64,
    /// Frames dropped for their length, already reported.
    reported_drops: AtomicU64,
    /// Interrupts taken (the ktest checks that frames arrive with one).
    interrupts: AtomicU64,
    /// "MSI-X" or "INTx", for the boot log.
    irq_mode: &'static str,
    _irqs: Vec<IrqLine>,
    _pci: PciDevice,
}

fn stats_of(a: [u64; 8]) -> NetStats {
    NetStats {
        rx_packets: a[0],
        rx_bytes: a[1],
        rx_dropped: a[2],
        rx_length_errors: a[3],
        tx_packets: a[4],
        tx_bytes: a[5],
        tx_dropped: a[6],
        device_errors: a[7],
    }
}

fn add_stats(a: &NetStats, b: &NetStats) -> NetStats {
    NetStats {
        rx_packets: a.rx_packets + b.rx_packets,
        rx_bytes: a.rx_bytes + b.rx_bytes,
        rx_dropped: a.rx_dropped + b.rx_dropped,
        rx_length_errors: a.rx_length_errors + b.rx_length_errors,
        tx_packets: a.tx_packets + b.tx_packets,
        tx_bytes: a.tx_bytes + b.tx_bytes,
        tx_dropped: a.tx_dropped + b.tx_dropped,
        device_errors: a.device_errors + b.device_errors,
    }
}

impl Nic {
    fn wake_worker(&self) {
        self.kick.store(true, Ordering::Release);
        self.work.wake_all();
    }

    /// The device interrupted (a queue or its configuration): acknowledge
    /// it with INTx, then wake the worker. Interrupt context: only wakes.
    fn interrupt(&self) {
        self.interrupts.fetch_add(1, Ordering::Relaxed);
        if self.intx {
            // Reading the ISR status deasserts the INTx line.
            let _ = self.reset.read_isr();
        }
        self.wake_worker();
    }

    fn notify_stack(&self) {
        if let Some(h) = self.handle.get() {
            h.notify();
        }
    }

    pub fn stats(&self) -> NetStats {
        self.state.lock_irq_disabled().stats
    }

    /// Logs device errors and dropped frames when their counts reach a new
    /// power of two (so a hostile device cannot flood the log).
    fn report(&self, s: &NetStats) {
        for (count, seen, what) in [
            (
                s.device_errors,
                &self.reported_errors,
                "bad used elements from the device",
            ),
            (
                s.rx_length_errors,
                &self.reported_drops,
                "received frames dropped for their length",
            ),
        ] {
            let old = seen.load(Ordering::Relaxed);
            if count > old && count.is_power_of_two() {
                seen.store(count, Ordering::Relaxed);
                frame::log_info!("virtio-net {}: {count} {what}", mac_string(self.mac));
            }
        }
    }

    /// The worker: makes every call into the driver domain.
    fn worker(self: Arc<Self>, first: NetDomainProxy<Driver>, mut rxbuf: RRef<FrameBuf>) {
        let mut domain = Some(first);
        // Faults since a frame last went through.
        let mut faults = 0u32;
        // When the fault being recovered from happened.
        let mut fault_at: Option<u64> = None;
        loop {
            self.work
                .wait_until(|| self.kick.swap(false, Ordering::AcqRel).then_some(()));
            loop {
                if self.state.lock_irq_disabled().failed {
                    self.fail_all();
                    break;
                }
                let result = match &mut domain {
                    Some(d) => self.pump(d, &mut rxbuf, &mut faults, &mut fault_at),
                    None => Err(Fault::Dead),
                };
                match result {
                    Ok(()) => break,
                    Err(fault) => {
                        fault_at.get_or_insert_with(frame::timer::monotonic_ns);
                        // The dead domain (and its forgotten root) goes
                        // before the device is reset and rebuilt.
                        drop(domain.take());
                        domain = self.recover(fault, &mut faults);
                        if domain.is_none() {
                            self.notify_stack();
                        }
                    }
                }
            }
        }
    }

    /// A frame went through the driver: the driver works again.
    fn progress(&self, faults: &mut u32, fault_at: &mut Option<u64>) {
        *faults = 0;
        if let Some(at) = fault_at.take() {
            let ns = frame::timer::monotonic_ns().saturating_sub(at);
            RECOVERIES.fetch_add(1, Ordering::Relaxed);
            LAST_RECOVERY_NS.store(ns, Ordering::Relaxed);
            MAX_RECOVERY_NS.fetch_max(ns, Ordering::Relaxed);
            recovered(&VIRTIO_NET);
            frame::log_info!(
                "{}: recovered, a frame went through {ns} ns after the fault",
                self.name
            );
        }
    }

    /// Gives the queued frames to the driver and takes what it received,
    /// until neither makes progress.
    fn pump(
        &self,
        d: &mut NetDomainProxy<Driver>,
        rxbuf: &mut RRef<FrameBuf>,
        faults: &mut u32,
        fault_at: &mut Option<u64>,
    ) -> core::result::Result<(), Fault> {
        loop {
            let mut moved = false;
            // Transmit: oldest first; a frame goes back to the head of the
            // queue when the ring is full or the driver faults on it (the
            // new driver sends it: a duplicate at worst, which IP allows).
            loop {
                let Some((len, buf)) = self.state.lock_irq_disabled().tx.pop_front() else {
                    break;
                };
                let r = d.transmit(len, &buf);
                let status = match r {
                    Ok(s) => s,
                    Err(e) => {
                        self.state.lock_irq_disabled().tx.push_front((len, buf));
                        return Err(e.fault);
                    }
                };
                if status == TX_FULL {
                    self.state.lock_irq_disabled().tx.push_front((len, buf));
                    break;
                }
                if status == TX_SENT {
                    self.progress(faults, fault_at);
                    moved = true;
                }
                self.state.lock_irq_disabled().pool.push(buf);
            }
            // Receive (and reclaim sent slots).
            let mut received = false;
            loop {
                if self.state.lock_irq_disabled().rx.len() >= RX_QUEUE_MAX {
                    break;
                }
                let out = d.poll(rxbuf).map_err(|e| e.fault)?;
                let len = (out.len as usize).min(BUF_SIZE);
                let frame = (len > 0).then(|| rxbuf[..len].to_vec());
                let stats = {
                    let mut s = self.state.lock_irq_disabled();
                    s.link_up = out.link_up;
                    s.tx_in_flight = out.tx_in_flight as usize;
                    s.stats = add_stats(&s.base, &stats_of(out.stats));
                    s.stats.tx_dropped += s.refused;
                    if let Some(f) = frame {
                        s.rx.push_back(f);
                        received = true;
                    }
                    s.stats
                };
                self.report(&stats);
                if !out.more {
                    break;
                }
            }
            if received {
                self.progress(faults, fault_at);
                self.notify_stack();
                moved = true;
            }
            if !moved {
                return Ok(());
            }
        }
    }

    /// Drops every queued frame (the device is failed).
    fn fail_all(&self) {
        let (tx, rx) = {
            let mut s = self.state.lock_irq_disabled();
            s.link_up = false;
            (core::mem::take(&mut s.tx), core::mem::take(&mut s.rx))
        };
        drop(tx);
        drop(rx);
    }

    /// After a fault: resets the device and builds a new driver domain.
    /// `None` when the device has been failed.
    fn recover(&self, mut fault: Fault, faults: &mut u32) -> Option<NetDomainProxy<Driver>> {
        {
            // The dead driver's counters stay counted.
            let mut s = self.state.lock_irq_disabled();
            s.base = s.stats;
            s.base.tx_dropped = s.base.tx_dropped.saturating_sub(s.refused);
            s.tx_in_flight = 0;
        }
        loop {
            *faults += 1;
            frame::log_warn!(
                "{}: driver fault ({fault:?}, {} in a row): resetting the device, restarting the driver",
                self.name,
                *faults
            );
            // From here on the device touches none of the dead driver's
            // rings and slots; the frames they held are lost.
            if let Err(e) = self.reset.reset() {
                frame::log_warn!("{}: device reset failed: {e:?}", self.name);
                *faults = u32::MAX;
            }
            if *faults > MAX_FAULTS {
                frame::log_warn!(
                    "{}: driver crashed again after {MAX_FAULTS} restarts: device failed, link down",
                    self.name
                );
                let mut s = self.state.lock_irq_disabled();
                s.failed = true;
                s.link_up = false;
                return None;
            }
            if *faults > 1 {
                let wait = BACKOFF_NS << (*faults - 2);
                let deadline = frame::timer::monotonic_ns().saturating_add(wait);
                self.backoff.wait_until_or_deadline(|| None::<()>, deadline);
            }
            let mut d = match Domain::new_device(
                self.name,
                device_reset(self.slot),
                driver_init,
                self.slot,
            ) {
                Ok(d) => Handle::new(d),
                Err(f) => {
                    fault = f;
                    continue;
                }
            };
            match d.info() {
                Ok(i) if i.mac == self.mac && i.features == self.features => return Some(d),
                Ok(i) => {
                    frame::log_warn!(
                        "{}: the device changed across a restart ({i:?}): device failed, link down",
                        self.name
                    );
                    let mut s = self.state.lock_irq_disabled();
                    s.failed = true;
                    s.link_up = false;
                    return None;
                }
                Err(e) => fault = e.fault,
            }
        }
    }

    /// Whether the device was failed (the crash layer's fail-cleanly case
    /// and the ktest look).
    pub fn is_failed(&self) -> bool {
        self.state.lock_irq_disabled().failed
    }
}

impl NetDriver for Nic {
    fn mac(&self) -> [u8; 6] {
        self.mac
    }

    fn mtu(&self) -> usize {
        virtio_net::MTU
    }

    fn link_up(&self) -> bool {
        let s = self.state.lock_irq_disabled();
        s.link_up && !s.failed
    }

    /// Queues the frame for the worker. EMSGSIZE for a bad length (as the
    /// driver would refuse it), EAGAIN when the queue is full, ENETDOWN once
    /// the device is failed.
    fn transmit(&self, frame: &[u8]) -> Result<()> {
        if frame.len() < virtio_net::ETH_HLEN
            || frame.len() > virtio_net::MTU + virtio_net::ETH_HLEN + 4
        {
            let mut s = self.state.lock_irq_disabled();
            s.refused += 1;
            s.stats.tx_dropped += 1;
            return Err(Error::new(Errno::EMSGSIZE));
        }
        let reuse = {
            let mut s = self.state.lock_irq_disabled();
            if s.failed {
                return Err(Error::with_message(
                    Errno::ENETDOWN,
                    "virtio-net: device failed",
                ));
            }
            if s.tx.len() >= TX_QUEUE_MAX {
                return Err(Error::new(Errno::EAGAIN));
            }
            s.pool.pop()
        };
        let mut buf = match reuse {
            Some(b) => b,
            None => RRef::new([0u8; BUF_SIZE]).map_err(|_| Error::new(Errno::ENOBUFS))?,
        };
        buf[..frame.len()].copy_from_slice(frame);
        self.state
            .lock_irq_disabled()
            .tx
            .push_back((frame.len() as u32, buf));
        self.wake_worker();
        Ok(())
    }

    fn receive(&self) -> Option<Vec<u8>> {
        let (frame, was_full) = {
            let mut s = self.state.lock_irq_disabled();
            let full = s.rx.len() >= RX_QUEUE_MAX;
            (s.rx.pop_front(), full)
        };
        if was_full {
            // The worker left frames on the device's ring: room again.
            self.wake_worker();
        }
        frame
    }
}

pub fn mac_string(m: [u8; 6]) -> String {
    alloc::format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0],
        m[1],
        m[2],
        m[3],
        m[4],
        m[5]
    )
}

/// Brings up one virtio-net function: its driver domain, the shadow in
/// front of it and the shadow's worker. `index` picks the fallback MAC of
/// a device without VIRTIO_NET_F_MAC (52:54:00:12:34:56 + index).
fn probe(pci: PciDevice, index: u8) -> Result<Arc<Nic>> {
    let windows = map_windows(&pci)?;
    // MSI-X: entry 0 for configuration changes (the link), entry 1 for both
    // queues; with one entry, everything on it. Without MSI-X: INTx, and
    // the interrupt reads the ISR status.
    let (irqs, plan) = irq_lines(&pci)?;
    let vectors = match plan {
        IrqPlan::MsixTwo => Some(Vectors {
            config: 0,
            rx: 1,
            tx: 1,
        }),
        IrqPlan::MsixOne => Some(Vectors {
            config: 0,
            rx: 0,
            tx: 0,
        }),
        IrqPlan::Intx => None,
    };
    let fallback_mac = [0x52, 0x54, 0x00, 0x12, 0x34, 0x56u8.wrapping_add(index)];
    let slot = {
        let mut table = HANDOFF.lock();
        table.push(DeviceHandle {
            regs: windows.regs(),
            vectors,
            fallback_mac,
        });
        table.len() - 1
    };
    let reset = windows.into_transport();
    let name: &'static str = if slot == 0 {
        "virtio-net"
    } else {
        Box::leak(format!("virtio-net{slot}").into_boxed_str())
    };
    let failed = || Error::with_message(Errno::EIO, "virtio-net: device initialisation failed");
    let domain = Domain::new_device(name, device_reset(slot as u64), driver_init, slot as u64)
        .map_err(|f| {
            let _ = reset.reset();
            frame::log_info!("{name}: the driver did not start ({f:?})");
            failed()
        })?;
    let mut domain = Handle::new(domain);
    let info = domain.info().map_err(|_| failed())?;
    let rxbuf = RRef::new([0u8; BUF_SIZE]).map_err(|_| Error::new(Errno::ENOMEM))?;
    let nic = Arc::new(Nic {
        name,
        slot: slot as u64,
        mac: info.mac,
        features: info.features,
        state: SpinLock::new(State {
            tx: VecDeque::new(),
            pool: Vec::new(),
            rx: VecDeque::new(),
            failed: false,
            link_up: info.link_up,
            tx_in_flight: 0,
            base: NetStats::default(),
            stats: NetStats::default(),
            refused: 0,
        }),
        kick: AtomicBool::new(true),
        work: WaitQueue::new(),
        backoff: WaitQueue::new(),
        reset,
        intx: plan == IrqPlan::Intx,
        handle: Once::new(),
        reported_errors: AtomicU64::new(0),
        reported_drops: AtomicU64::new(0),
        interrupts: AtomicU64::new(0),
        irq_mode: plan.name(),
        _irqs: irqs,
        _pci: pci,
    });
    for line in &nic._irqs {
        let weak = Arc::downgrade(&nic);
        line.on_active(move || {
            if let Some(n) = weak.upgrade() {
                n.interrupt();
            }
        });
    }
    let worker = nic.clone();
    frame::task::TaskOptions::new(move || worker.worker(domain, rxbuf))
        .spawn()
        .map_err(|_| Error::with_message(Errno::ENOMEM, "virtio-net: no worker task"))?;
    // The first poll reads the link status.
    nic.wake_worker();
    Ok(nic)
}

/// Every virtio-net function found at boot, registered or not: they live
/// as long as the kernel.
static NICS: SpinLock<Vec<Arc<Nic>>, SHADOW_LOCK> = SpinLock::new(Vec::new());

/// The virtio-net functions in PCI address order.
fn functions() -> Vec<pci::PciDeviceInfo> {
    let mut f: Vec<_> = pci::devices()
        .into_iter()
        .filter(|d| device_type_of(d.vendor_id, d.device_id) == Some(device_type::NET))
        .collect();
    f.sort_by_key(|d| d.bdf);
    f
}

/// Finds every virtio-net function (modern 0x1041, or transitional 0x1000
/// with modern capabilities) in PCI address order, brings it up and
/// registers it with the stack as the next ethN.
pub fn probe_all() {
    for (i, info) in functions().into_iter().enumerate() {
        let nic = pci::claim(info.bdf)
            .map_err(Error::from)
            .and_then(|p| probe(p, i as u8));
        let nic = match nic {
            Ok(n) => n,
            Err(e) => {
                frame::log_info!("virtio-net {}: {e:?}", info.bdf);
                continue;
            }
        };
        let (mac, mode, name) = (mac_string(nic.mac), nic.irq_mode, nic.name);
        match register_netdev(nic.clone()) {
            Ok(handle) => {
                let index = handle.index;
                nic.handle.call_once(|| handle);
                frame::log_info!(
                    "virtio-net {}: interface {index}, MAC {mac}, {mode}, domain {name}",
                    info.bdf
                );
                // Frames may have arrived before the handle was there.
                nic.notify_stack();
            }
            Err(e) => frame::log_info!(
                "virtio-net {}: MAC {mac}, {mode}; not registered: {e:?}",
                info.bdf
            ),
        }
        NICS.lock_irq_disabled().push(nic);
    }
}

/// For the `virtio_net` ktest: brings up the first virtio-net function
/// without registering it, so the test alone sees its frames.
pub fn probe_first_unregistered() -> Result<Arc<Nic>> {
    let info = functions()
        .into_iter()
        .next()
        .ok_or(Error::with_message(Errno::ENODEV, "no virtio-net function"))?;
    let nic = probe(pci::claim(info.bdf).map_err(Error::from)?, 0)?;
    NICS.lock_irq_disabled().push(nic.clone());
    Ok(nic)
}

impl Nic {
    /// Received frames waiting for the stack.
    pub fn rx_pending(&self) -> bool {
        !self.state.lock_irq_disabled().rx.is_empty()
    }

    /// Frames queued for the driver or in flight on the device (as of the
    /// driver's last poll).
    pub fn tx_in_flight(&self) -> usize {
        let s = self.state.lock_irq_disabled();
        s.tx.len() + s.tx_in_flight
    }

    pub fn interrupts(&self) -> u64 {
        self.interrupts.load(Ordering::Relaxed)
    }

    pub fn irq_mode(&self) -> &'static str {
        self.irq_mode
    }
}

/// /sys/kernel/debug/domains/virtio-net/recovery_ns: recoveries so far,
/// the last and the longest time from a fault to the first frame through
/// the new driver.
pub fn recovery_text() -> String {
    format!(
        "recoveries {}\nlast_ns {}\nmax_ns {}\n",
        RECOVERIES.load(Ordering::Relaxed),
        LAST_RECOVERY_NS.load(Ordering::Relaxed),
        MAX_RECOVERY_NS.load(Ordering::Relaxed)
    )
}
