//! virtio-blk disks: finds virtio block functions on PCI, drives each with
//! the `virtio-blk` driver crate inside a driver domain, and registers it
//! with the block layer as /dev/vda, /dev/vdb ... in PCI address order.
//!
//! The driver runs in a `frame::domain::Domain` (its root object is the
//! driver crate's `BlkDevice`). In front of it sits a *shadow* (the
//! [`Disk`], kernel code): it owns everything that must survive a crash of
//! the driver, and talks to the driver only through domain calls with
//! plain-data arguments:
//! - the device handle (register windows, interrupt vectors), kept in the
//!   hand-off table, from which every new driver domain takes its copy;
//! - the device facts the first driver negotiated ([`Geometry`]): a
//!   restarted driver must find the same ones;
//! - every request not yet completed, with its bio's frames mapped for
//!   DMA. The driver only ever sees bus addresses and lengths: it cannot
//!   touch the data, so a write is retried from the caller's unmodified
//!   buffer.
//!
//! All calls into the domain are made by one kernel task per disk (the
//! worker): `submit` only queues the request and wakes it, and so does the
//! queue interrupt. When a call faults, the worker resets the device (so
//! that it no longer touches the dead driver's rings), builds a new
//! domain (which negotiates features and sets the queue up again), and
//! gives it every request that had not completed. A driver that faults
//! again before a request completes is restarted after a back-off;
//! after [`MAX_FAULTS`] faults in a row the device is failed: every
//! request, queued or new, ends with EIO and a kernel log line says so.
//! docs/domains.md ("Shadow drivers and recovery") has the argument.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use frame::dma::{DmaCoherent, DmaDirection, DmaStream};
use frame::domain::{DeviceReset, Domain, Fault, Handle};
use frame::irq::IrqLine;
use frame::mm::PAGE_SIZE;
use frame::pci::{self, PciDevice};
use frame::sync::{SpinLock, WaitQueue};
use virtio::Transport;
use virtio::pci::{device_type, device_type_of};
use virtio_blk::{BlkDevice, BlkError, DmaBuffer, Op, Request, Submitted, Vectors};

use super::{Bio, BioDone, BioOp, BlockDriver};
use crate::domains::{VIRTIO_BLK, crash_point, recovered};
use crate::error::{Errno, Error, Result};
use crate::virtio_pci::{Coherent, IrqPlan, Mmio, Regs, irq_lines, map_windows};

/// Lock level of a disk's shadow state. `submit` may be called with any
/// kernel lock held and with interrupts off, so it sits above them; inside
/// it only the heap (58) and the frame allocator (60) are taken.
const SHADOW_LOCK: u8 = 56;
/// Lock level of the hand-off table: taken inside a domain call (above
/// `level::DOMAIN`), never with another lock.
const HANDOFF_LOCK: u8 = 45;
/// Most segments of one request (ext2 builds at most 32, the block layer's
/// readahead 16).
const MAX_SEGS: usize = 32;
/// Completions returned by one poll call.
const POLL_BATCH: usize = 64;
/// Driver faults in a row (no request completing in between) after which
/// the device is failed.
pub const MAX_FAULTS: u32 = 5;
/// Back-off before the second restart in a row; doubled for each further
/// one (10, 20, 40, 80 ms).
const BACKOFF_NS: u64 = 10_000_000;

// ---------------------------------------------------------------------
// Inside the driver domain.
// ---------------------------------------------------------------------

/// A data buffer as the driver sees it: a bus address and a length. The
/// shadow keeps the pages mapped (and syncs them) while the request lives.
struct BusBuffer {
    bus: u64,
    len: usize,
}

impl DmaBuffer for BusBuffer {
    fn bus_addr(&self) -> u64 {
        self.bus
    }
    fn len(&self) -> usize {
        self.len
    }
    // The shadow syncs before giving the request and after its completion.
    fn sync_for_device(&self) {}
    fn sync_for_cpu(&self) {}
}

/// What a new driver domain needs to reach its device: clones of the
/// register windows and the interrupt vectors. The shadow puts it in
/// [`HANDOFF`] at probe time; `driver_init` copies it.
#[derive(Clone)]
struct DeviceHandle {
    regs: Regs,
    vectors: Option<Vectors>,
}

/// Device handles by disk index (never removed: disks are not unplugged).
static HANDOFF: SpinLock<Vec<DeviceHandle>, HANDOFF_LOCK> = SpinLock::new(Vec::new());

/// Stops the device of disk `slot` when its driver domain dies (frame runs
/// it before it frees the rings the dead driver made): a reset through the
/// shadow's own copy of the register windows.
fn device_reset(slot: u64) -> DeviceReset {
    let transport = {
        let table = HANDOFF.lock();
        table.get(slot as usize).map(|d| d.regs.transport())
    };
    Box::new(move || {
        if let Some(t) = &transport {
            let _ = t.reset();
        }
    })
}

/// The root object of a virtio-blk domain.
struct Driver {
    dev: BlkDevice<Mmio, Coherent, BusBuffer>,
    /// Completions taken from the device and not yet returned.
    carry: VecDeque<(u64, u8)>,
}

frame::exchangeable_struct! {
    /// The device facts a driver negotiated (`DiskInfo` as plain data).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Geometry {
        capacity_sectors: u64,
        block_size: u32,
        read_only: bool,
        flush: bool,
        seg_max: u32,
        size_max: u32,
        features: u64,
        max_requests: u64,
    }
}

frame::exchangeable_struct! {
    /// One request given to the driver: its data as bus addresses.
    struct ReqIn {
        id: u64,
        op: u8,
        sector: u64,
        nseg: u64,
        bus: [u64; MAX_SEGS],
        len: [u32; MAX_SEGS],
    }
}

frame::exchangeable_struct! {
    /// Completions returned by one poll: `n` (id, status) pairs; `more`
    /// when the driver holds further ones.
    struct PollOut {
        n: u64,
        more: bool,
        ids: [u64; POLL_BATCH],
        status: [u8; POLL_BATCH],
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

/// The driver domain's interface: the shadow calls it through the proxy
/// `#[interface]` generates (`BlkDomainProxy<Driver>`, a
/// `frame::domain::Handle`), whose every call is a domain call.
#[domain_proxy::interface]
trait BlkDomain {
    /// The device facts the driver negotiated.
    fn geometry(&mut self) -> core::result::Result<Geometry, DriverFault>;
    /// Queues one request: what happened (`SUB_*`) and a status code.
    fn submit(&mut self, req: ReqIn) -> core::result::Result<(u8, u8), DriverFault>;
    /// Takes what the device completed (the interrupt-handling path).
    fn poll(&mut self) -> core::result::Result<PollOut, DriverFault>;
}

impl BlkDomain for Driver {
    fn geometry(&mut self) -> core::result::Result<Geometry, DriverFault> {
        Ok(driver_geometry(self))
    }
    fn submit(&mut self, req: ReqIn) -> core::result::Result<(u8, u8), DriverFault> {
        Ok(driver_submit(self, req))
    }
    fn poll(&mut self) -> core::result::Result<PollOut, DriverFault> {
        Ok(driver_poll(self))
    }
}

const OP_READ: u8 = 0;
const OP_WRITE: u8 = 1;
const OP_FLUSH: u8 = 2;

/// What `driver_submit` did with a request.
const SUB_QUEUED: u8 = 0;
const SUB_DONE: u8 = 1;
const SUB_BUSY: u8 = 2;
const SUB_REJECTED: u8 = 3;

/// A request's status as plain data: 0 for success.
fn status_code(s: core::result::Result<(), BlkError>) -> u8 {
    match s {
        Ok(()) => 0,
        Err(BlkError::Busy) => 1,
        Err(BlkError::Invalid) => 2,
        Err(BlkError::ReadOnly) => 3,
        Err(BlkError::Unsupported) => 4,
        Err(BlkError::Io) => 5,
        Err(BlkError::DeviceBroken) => 6,
    }
}

fn status_result(code: u8) -> Result<()> {
    match code {
        0 => Ok(()),
        1 => Err(Error::new(Errno::EAGAIN)),
        2 => Err(Error::with_message(
            Errno::EINVAL,
            "virtio-blk: request refused",
        )),
        3 => Err(Error::new(Errno::EROFS)),
        4 => Err(Error::new(Errno::EOPNOTSUPP)),
        _ => Err(Error::with_message(Errno::EIO, "virtio-blk: device error")),
    }
}

/// Builds the driver (runs inside the new domain): device reset, feature
/// negotiation, queue set-up, DRIVER_OK.
fn driver_init(slot: u64) -> Driver {
    crash_point(&VIRTIO_BLK, "init", 0);
    // The guard is dropped before anything here may panic: a fault with a
    // spin lock held is not recoverable.
    let handle = {
        let table = HANDOFF.lock();
        table.get(slot as usize).cloned()
    };
    let Some(h) = handle else {
        panic!("virtio-blk: no device handle {slot}");
    };
    let transport = h.regs.transport();
    let alloc = |bytes: usize| {
        DmaCoherent::alloc(bytes.div_ceil(PAGE_SIZE))
            .ok()
            .map(Coherent)
    };
    let dev = match BlkDevice::new(transport, alloc, h.vectors) {
        Ok(dev) => dev,
        Err(e) => panic!("virtio-blk: device initialisation failed: {e:?}"),
    };
    crash_point(&VIRTIO_BLK, "init-done", 0);
    Driver {
        dev,
        carry: VecDeque::new(),
    }
}

fn driver_geometry(d: &mut Driver) -> Geometry {
    let i = d.dev.info();
    Geometry {
        capacity_sectors: i.capacity_sectors,
        block_size: i.block_size,
        read_only: i.read_only,
        flush: i.flush,
        seg_max: i.seg_max,
        size_max: i.size_max,
        features: i.features,
        max_requests: d.dev.max_requests() as u64,
    }
}

/// Queues one request; returns what happened (`SUB_*`) and a status code.
fn driver_submit(d: &mut Driver, r: ReqIn) -> (u8, u8) {
    crash_point(&VIRTIO_BLK, "submit", 2);
    let op = match r.op {
        OP_READ => Op::Read,
        OP_WRITE => Op::Write,
        _ => Op::Flush,
    };
    let n = (r.nseg as usize).min(MAX_SEGS);
    let buffers = (0..n)
        .map(|i| BusBuffer {
            bus: r.bus[i],
            len: r.len[i] as usize,
        })
        .collect();
    let out = match d.dev.submit(Request {
        id: r.id,
        op,
        sector: r.sector,
        buffers,
    }) {
        Ok(Submitted::Queued) => (SUB_QUEUED, 0),
        Ok(Submitted::Completed(c)) => (SUB_DONE, status_code(c.status)),
        Err(rejected) if rejected.error == BlkError::Busy => (SUB_BUSY, 0),
        Err(rejected) => (SUB_REJECTED, status_code(Err(rejected.error))),
    };
    // Mid-request: the device has the request, the shadow never hears.
    crash_point(&VIRTIO_BLK, "submitted", 2);
    out
}

/// Takes what the device completed (the interrupt-handling path).
fn driver_poll(d: &mut Driver) -> PollOut {
    crash_point(&VIRTIO_BLK, "poll", 2);
    for c in d.dev.poll() {
        d.carry.push_back((c.id, status_code(c.status)));
    }
    // The completions are off the device's ring and not yet reported.
    crash_point(&VIRTIO_BLK, "polled", 2);
    let mut out = PollOut {
        n: 0,
        more: false,
        ids: [0; POLL_BATCH],
        status: [0; POLL_BATCH],
    };
    for i in 0..POLL_BATCH {
        let Some((id, status)) = d.carry.pop_front() else {
            break;
        };
        out.ids[i] = id;
        out.status[i] = status;
        out.n += 1;
    }
    out.more = !d.carry.is_empty();
    out
}

// ---------------------------------------------------------------------
// The shadow (kernel side).
// ---------------------------------------------------------------------

/// One bio segment: `len` bytes at `offset` of a page mapped for the device.
struct Segment {
    stream: DmaStream,
    offset: usize,
    len: usize,
}

/// A request the shadow holds until it completes.
struct Pending {
    op: u8,
    sector: u64,
    segments: Vec<Segment>,
    done: BioDone,
    /// While the request lives, an idle CPU polls for its completion
    /// rather than halting (`frame::task::IoPending`).
    _io: frame::task::IoPending,
}

struct State {
    /// Every request not completed yet, by id (ids are never reused).
    table: BTreeMap<u64, Pending>,
    /// Ids to give to the driver, oldest first.
    queue: VecDeque<u64>,
    next_id: u64,
    /// The device was failed: everything ends with EIO.
    failed: bool,
}

/// Recovery counters of all virtio-blk disks (debug files).
pub static RECOVERIES: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds from the last fault to the first retried request completing.
pub static LAST_RECOVERY_NS: AtomicU64 = AtomicU64::new(0);
/// The largest such time seen.
pub static MAX_RECOVERY_NS: AtomicU64 = AtomicU64::new(0);

/// One virtio-blk disk: the shadow of its driver domain.
pub struct Disk {
    /// The domain's name ("virtio-blk", "virtio-blk1" ...).
    name: &'static str,
    /// Index of its device handle in [`HANDOFF`].
    slot: u64,
    state: SpinLock<State, SHADOW_LOCK>,
    /// Set by `submit` and the interrupt; the worker sleeps until it is.
    kick: AtomicBool,
    work: WaitQueue,
    /// Nobody wakes it: the worker's back-off sleeps on it.
    backoff: WaitQueue,
    geometry: Geometry,
    /// Resets the device after a fault (the shadow's own copy of the
    /// register windows).
    reset: Transport<Mmio>,
    intx: bool,
    /// Most requests seen in flight at once (logged each time it grows).
    peak_in_flight: AtomicUsize,
    /// "MSI-X" or "INTx", for the boot log.
    irq_mode: &'static str,
    /// Interrupt lines, dropped (unregistered) with the disk.
    _irqs: Vec<IrqLine>,
    _pci: PciDevice,
}

impl Disk {
    fn wake_worker(&self) {
        self.kick.store(true, Ordering::Release);
        self.work.wake_all();
    }

    /// The worker: makes every call into the driver domain.
    fn worker(self: Arc<Self>, first: BlkDomainProxy<Driver>) {
        let mut domain = Some(first);
        // Faults since a request last completed.
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
                    Some(d) => self.pump(d, &mut faults, &mut fault_at),
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
                    }
                }
            }
        }
    }

    /// Gives the queued requests to the driver and finishes what it
    /// completed, until neither makes progress.
    fn pump(
        &self,
        d: &mut BlkDomainProxy<Driver>,
        faults: &mut u32,
        fault_at: &mut Option<u64>,
    ) -> core::result::Result<(), Fault> {
        loop {
            let mut finished = 0usize;
            while let Some((id, req)) = self.next_request() {
                match d.submit(req).map_err(|e| e.fault)? {
                    (SUB_QUEUED, _) => {}
                    (SUB_BUSY, _) => {
                        self.state.lock_irq_disabled().queue.push_front(id);
                        break;
                    }
                    (_, status) => {
                        self.finish(id, status, faults, fault_at);
                        finished += 1;
                    }
                }
            }
            loop {
                let out = d.poll().map_err(|e| e.fault)?;
                let n = (out.n as usize).min(POLL_BATCH);
                for i in 0..n {
                    self.finish(out.ids[i], out.status[i], faults, fault_at);
                }
                finished += n;
                if !out.more {
                    break;
                }
            }
            if finished == 0 || self.state.lock_irq_disabled().queue.is_empty() {
                return Ok(());
            }
        }
    }

    /// The oldest queued request, as the driver gets it (its pages synced
    /// for the device).
    fn next_request(&self) -> Option<(u64, ReqIn)> {
        let mut s = self.state.lock_irq_disabled();
        loop {
            let id = s.queue.pop_front()?;
            let Some(p) = s.table.get(&id) else {
                continue;
            };
            let mut req = ReqIn {
                id,
                op: p.op,
                sector: p.sector,
                nseg: p.segments.len() as u64,
                bus: [0; MAX_SEGS],
                len: [0; MAX_SEGS],
            };
            for (i, seg) in p.segments.iter().enumerate().take(MAX_SEGS) {
                seg.stream.sync_for_device();
                req.bus[i] = seg.stream.bus_addr() + seg.offset as u64;
                req.len[i] = seg.len as u32;
            }
            return Some((id, req));
        }
    }

    /// Completes request `id` with `status` (an id the shadow does not
    /// hold, from a confused driver, is ignored).
    fn finish(&self, id: u64, status: u8, faults: &mut u32, fault_at: &mut Option<u64>) {
        let Some(p) = self.state.lock_irq_disabled().table.remove(&id) else {
            return;
        };
        if status == 0 {
            *faults = 0;
            if let Some(at) = fault_at.take() {
                let ns = frame::timer::monotonic_ns().saturating_sub(at);
                RECOVERIES.fetch_add(1, Ordering::Relaxed);
                LAST_RECOVERY_NS.store(ns, Ordering::Relaxed);
                MAX_RECOVERY_NS.fetch_max(ns, Ordering::Relaxed);
                recovered(&VIRTIO_BLK);
                frame::log_info!(
                    "{}: recovered, a retried request completed {ns} ns after the fault",
                    self.name
                );
            }
        }
        for seg in &p.segments {
            seg.stream.sync_for_cpu();
        }
        drop(p.segments);
        (p.done)(status_result(status));
    }

    /// Ends every request with EIO (the device is failed).
    fn fail_all(&self) {
        let all = core::mem::take(&mut self.state.lock_irq_disabled().table);
        for (_, p) in all {
            drop(p.segments);
            (p.done)(Err(Error::with_message(
                Errno::EIO,
                "virtio-blk: device failed",
            )));
        }
    }

    /// After a fault: resets the device, builds a new driver domain and
    /// queues every request not completed again. `None` when the device
    /// has been failed.
    fn recover(&self, mut fault: Fault, faults: &mut u32) -> Option<BlkDomainProxy<Driver>> {
        loop {
            *faults += 1;
            frame::log_warn!(
                "{}: driver fault ({fault:?}, {} in a row): resetting the device, restarting the driver",
                self.name,
                *faults
            );
            // From here on the device touches none of the dead driver's
            // rings, and nothing of the dead driver is used again.
            if let Err(e) = self.reset.reset() {
                frame::log_warn!("{}: device reset failed: {e:?}", self.name);
                *faults = u32::MAX;
            }
            if *faults > MAX_FAULTS {
                frame::log_warn!(
                    "{}: driver crashed again after {MAX_FAULTS} restarts: device failed, requests end with EIO",
                    self.name
                );
                self.state.lock_irq_disabled().failed = true;
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
            match d.geometry() {
                Ok(g) if g == self.geometry => {}
                Ok(g) => {
                    frame::log_warn!(
                        "{}: the device changed across a restart ({g:?}): device failed",
                        self.name
                    );
                    self.state.lock_irq_disabled().failed = true;
                    return None;
                }
                Err(e) => {
                    fault = e.fault;
                    continue;
                }
            }
            // Every request not completed goes to the new driver, in
            // order: reads are read again, writes written again from the
            // same (never writable by the driver) pages.
            let mut s = self.state.lock_irq_disabled();
            let ids: VecDeque<u64> = s.table.keys().copied().collect();
            s.queue = ids;
            return Some(d);
        }
    }
}

impl BlockDriver for Disk {
    fn capacity_sectors(&self) -> u64 {
        self.geometry.capacity_sectors
    }

    fn logical_block_size(&self) -> u32 {
        self.geometry.block_size
    }

    fn read_only(&self) -> bool {
        self.geometry.read_only
    }

    fn submit(&self, bio: Bio, done: BioDone) -> Result<()> {
        let (op, dir) = match bio.op {
            BioOp::Read => (OP_READ, DmaDirection::FromDevice),
            BioOp::Write => (OP_WRITE, DmaDirection::ToDevice),
            BioOp::Flush => (OP_FLUSH, DmaDirection::ToDevice),
        };
        if bio.segments.len() > MAX_SEGS
            || bio
                .segments
                .iter()
                .any(|s| s.offset.checked_add(s.len).is_none_or(|e| e > PAGE_SIZE))
        {
            return Err(Error::new(Errno::EINVAL));
        }
        let segments = bio
            .segments
            .into_iter()
            .map(|s| Segment {
                stream: DmaStream::map(s.frame, dir),
                offset: s.offset,
                len: s.len,
            })
            .collect();
        let mut s = self.state.lock_irq_disabled();
        if s.failed {
            return Err(Error::with_message(Errno::EIO, "virtio-blk: device failed"));
        }
        let id = s.next_id;
        s.next_id += 1;
        s.table.insert(
            id,
            Pending {
                op,
                sector: bio.sector,
                segments,
                done,
                _io: frame::task::IoPending::new(),
            },
        );
        s.queue.push_back(id);
        let n = s.table.len();
        drop(s);
        self.wake_worker();
        if n > self.peak_in_flight.fetch_max(n, Ordering::Relaxed) && n.is_power_of_two() && n > 1 {
            frame::log_info!("virtio-blk: {n} requests in flight");
        }
        Ok(())
    }
}

/// Brings up one virtio-blk function: its driver domain, the shadow in
/// front of it and the shadow's worker.
fn probe(pci: PciDevice) -> Result<Arc<Disk>> {
    let windows = map_windows(&pci)?;
    // MSI-X: vector 0 for configuration changes, 1 for the queue; with one
    // entry only, the queue's. Without MSI-X: INTx, and the interrupt
    // reads the ISR.
    let (irqs, plan) = irq_lines(&pci)?;
    let vectors = match plan {
        IrqPlan::MsixTwo => Some(Vectors { config: 0, queue: 1 }),
        IrqPlan::MsixOne => Some(Vectors {
            config: virtio::transport::NO_VECTOR,
            queue: 0,
        }),
        IrqPlan::Intx => None,
    };
    let slot = {
        let mut table = HANDOFF.lock();
        table.push(DeviceHandle {
            regs: windows.regs(),
            vectors,
        });
        table.len() - 1
    };
    let reset = windows.into_transport();
    let name: &'static str = if slot == 0 {
        "virtio-blk"
    } else {
        Box::leak(format!("virtio-blk{slot}").into_boxed_str())
    };
    let domain = Domain::new_device(name, device_reset(slot as u64), driver_init, slot as u64)
        .map_err(|f| {
            let _ = reset.reset();
            frame::log_info!("{name}: the driver did not start ({f:?})");
            Error::with_message(Errno::EIO, "virtio-blk: device initialisation failed")
        })?;
    let mut domain = Handle::new(domain);
    let geometry = domain
        .geometry()
        .map_err(|_| Error::with_message(Errno::EIO, "virtio-blk: device initialisation failed"))?;
    let queue_irq = usize::from(plan == IrqPlan::MsixTwo);
    let disk = Arc::new(Disk {
        name,
        slot: slot as u64,
        state: SpinLock::new(State {
            table: BTreeMap::new(),
            queue: VecDeque::new(),
            next_id: 0,
            failed: false,
        }),
        kick: AtomicBool::new(false),
        work: WaitQueue::new(),
        backoff: WaitQueue::new(),
        geometry,
        reset,
        intx: plan == IrqPlan::Intx,
        peak_in_flight: AtomicUsize::new(0),
        irq_mode: plan.name(),
        _irqs: irqs,
        _pci: pci,
    });
    let weak = Arc::downgrade(&disk);
    if let Some(line) = disk._irqs.get(queue_irq) {
        line.on_active(move || {
            if let Some(d) = weak.upgrade() {
                if d.intx {
                    // Reading the ISR status deasserts the INTx line.
                    let _ = d.reset.read_isr();
                }
                d.wake_worker();
            }
        });
    }
    let worker = disk.clone();
    frame::task::TaskOptions::new(move || worker.worker(domain))
        .spawn()
        .map_err(|_| Error::with_message(Errno::ENOMEM, "virtio-blk: no worker task"))?;
    Ok(disk)
}

/// Finds every virtio-blk function (modern 0x1042, or transitional 0x1001
/// with modern capabilities) in PCI address order and registers each as
/// the next /dev/vdX.
pub fn probe_all() {
    let mut functions: Vec<_> = pci::devices()
        .into_iter()
        .filter(|d| device_type_of(d.vendor_id, d.device_id) == Some(device_type::BLOCK))
        .collect();
    functions.sort_by_key(|d| d.bdf);
    for info in functions {
        let disk = pci::claim(info.bdf).map_err(Error::from).and_then(probe);
        match disk {
            Ok(disk) => {
                let g = disk.geometry;
                let mode = disk.irq_mode;
                let name = disk.name;
                match super::register_disk("vd", disk) {
                    Ok(dev) => frame::log_info!(
                        "virtio-blk {}: {} ({} sectors, block size {}{}{}, {}, domain {})",
                        info.bdf,
                        dev.name(),
                        g.capacity_sectors,
                        g.block_size,
                        if g.read_only { ", read-only" } else { "" },
                        if g.flush { ", write cache" } else { "" },
                        mode,
                        name,
                    ),
                    Err(e) => frame::log_info!("virtio-blk {}: not registered: {e:?}", info.bdf),
                }
            }
            Err(e) => frame::log_info!("virtio-blk {}: {e:?}", info.bdf),
        }
    }
}

/// /sys/kernel/debug/domains/virtio-blk/recovery_ns: recoveries so far,
/// the last and the longest time from a fault to the first retried request
/// completing.
pub fn recovery_text() -> alloc::string::String {
    format!(
        "recoveries {}\nlast_ns {}\nmax_ns {}\n",
        RECOVERIES.load(Ordering::Relaxed),
        LAST_RECOVERY_NS.load(Ordering::Relaxed),
        MAX_RECOVERY_NS.load(Ordering::Relaxed)
    )
}
