//! The driver against a simulated virtio-blk device (virtio's `sim`), which
//! plays the device side of the queue over a RAM disk.

use alloc::vec;
use alloc::vec::Vec;

use super::*;
use virtio::sim::{
    SIM_NOTIFY_MULTIPLIER, SimBus, SimChain, SimPciDevice, SimQueue, SimRegion, SimRegs, SimWindow,
};
use virtio::transport::status;

impl DmaBuffer for SimRegion {
    fn bus_addr(&self) -> u64 {
        DeviceMemory::bus_addr(self)
    }
    fn len(&self) -> usize {
        DeviceMemory::len(self)
    }
    fn sync_for_device(&self) {}
    fn sync_for_cpu(&self) {}
}

type Dev = BlkDevice<SimRegs, SimRegion, SimRegion>;

/// The device side: register file, queue 0 and a RAM disk.
struct SimBlk {
    pci: SimPciDevice,
    bus: SimBus,
    queue: Option<SimQueue>,
    disk: Vec<u8>,
    /// Requests touching this sector fail with VIRTIO_BLK_S_IOERR.
    bad_sector: Option<u64>,
    /// Flush answers VIRTIO_BLK_S_UNSUPP.
    unsupp_flush: bool,
}

impl SimBlk {
    fn new(features: u64, sectors: u64, blk_size: u32, seg_max: u32) -> Self {
        let mut cfg = vec![0u8; 64];
        cfg[0..8].copy_from_slice(&sectors.to_le_bytes());
        cfg[8..12].copy_from_slice(&(64u32 << 10).to_le_bytes()); // size_max
        cfg[12..16].copy_from_slice(&seg_max.to_le_bytes());
        cfg[20..24].copy_from_slice(&blk_size.to_le_bytes());
        let pci = SimPciDevice::new(virtio::feature::VERSION_1 | features, &[256], 2, cfg);
        let disk = (0..sectors as usize * SECTOR_SIZE)
            .map(|i| (i / SECTOR_SIZE) as u8 ^ (i % 251) as u8)
            .collect();
        Self {
            pci,
            bus: SimBus::new(4 << 20),
            queue: None,
            disk,
            bad_sector: None,
            unsupp_flush: false,
        }
    }

    fn driver(&mut self, vectors: Option<Vectors>) -> Result<Dev, ProbeError> {
        let p = &self.pci;
        let t = Transport::new(
            p.regs(SimWindow::Common),
            p.regs(SimWindow::Notify),
            SIM_NOTIFY_MULTIPLIER,
            p.regs(SimWindow::Isr),
            Some(p.regs(SimWindow::Device)),
        );
        let bus = self.bus.clone();
        let d = Dev::new(t, |n| Some(bus.alloc(n)), vectors)?;
        let q = self.pci.queue(0);
        assert!(q.enabled);
        self.queue = Some(SimQueue::new(
            &self.bus,
            q.size,
            (q.desc, q.driver, q.device),
        ));
        Ok(d)
    }

    fn buffer(&self, sectors: usize) -> SimRegion {
        self.bus.alloc(sectors * SECTOR_SIZE)
    }

    fn take_all(&mut self) -> Vec<SimChain> {
        let q = self.queue.as_mut().unwrap();
        core::iter::from_fn(|| q.pop_avail()).collect()
    }

    /// Carries out one chain and returns the used length (bytes written).
    fn serve(&mut self, c: &SimChain) -> u32 {
        let bus = self.bus.clone();
        let mut hdr = [0u8; 16];
        assert!(!c.descs[0].writable && c.descs[0].len == 16);
        bus.read(c.descs[0].addr, &mut hdr).unwrap();
        let kind = u32::from_le_bytes(hdr[0..4].try_into().unwrap());
        let sector = u64::from_le_bytes(hdr[8..16].try_into().unwrap());
        let status = c.descs.last().unwrap();
        assert!(status.writable && status.len == 1);
        let data = &c.descs[1..c.descs.len() - 1];
        let mut pos = sector as usize * SECTOR_SIZE;
        let mut written = 0u32;
        let bad = self.bad_sector.is_some_and(|b| {
            let bytes: u32 = data.iter().map(|d| d.len).sum();
            (sector..sector + u64::from(bytes) / 512).contains(&b)
        });
        let st = match kind {
            _ if bad => S_IOERR,
            T_IN => {
                for d in data {
                    assert!(d.writable);
                    bus.write(d.addr, &self.disk[pos..pos + d.len as usize])
                        .unwrap();
                    pos += d.len as usize;
                    written += d.len;
                }
                S_OK
            }
            T_OUT => {
                for d in data {
                    assert!(!d.writable);
                    bus.read(d.addr, &mut self.disk[pos..pos + d.len as usize])
                        .unwrap();
                    pos += d.len as usize;
                }
                S_OK
            }
            T_FLUSH if self.unsupp_flush => S_UNSUPP,
            T_FLUSH => S_OK,
            _ => S_UNSUPP,
        };
        bus.write(status.addr, &[st]).unwrap();
        written + 1
    }

    fn complete(&mut self, head: u16, len: u32) {
        self.queue.as_mut().unwrap().push_used(u32::from(head), len);
    }

    /// Serves every available chain in order.
    fn run(&mut self) {
        for c in self.take_all() {
            let len = self.serve(&c);
            self.complete(c.head, len);
        }
    }
}

fn read_req(id: u64, sector: u64, bufs: Vec<SimRegion>) -> Request<SimRegion> {
    Request {
        id,
        op: Op::Read,
        sector,
        buffers: bufs,
    }
}

fn bytes_of(r: &SimRegion) -> Vec<u8> {
    let mut v = vec![0; DeviceMemory::len(r)];
    r.read_bytes(0, &mut v).unwrap();
    v
}

fn queued(r: Result<Submitted<SimRegion>, Rejected<SimRegion>>) {
    match r {
        Ok(Submitted::Queued) => {}
        Ok(Submitted::Completed(_)) => panic!("completed without the device"),
        Err(e) => panic!("rejected: {:?}", e.error),
    }
}

#[test]
fn probe_negotiates_features_and_reads_capacity_and_block_size() {
    let mut sim = SimBlk::new(
        feature::BLK_SIZE | feature::FLUSH | feature::SEG_MAX | (1 << 10),
        2048,
        4096,
        32,
    );
    let d = sim
        .driver(Some(Vectors {
            config: 0,
            queue: 1,
        }))
        .unwrap();
    let info = d.info();
    assert_eq!(
        (
            info.capacity_sectors,
            info.block_size,
            info.read_only,
            info.flush
        ),
        (2048, 4096, false, true)
    );
    assert_eq!(info.seg_max, 32);
    assert_eq!(
        sim.pci.driver_features(),
        virtio::feature::VERSION_1 | feature::BLK_SIZE | feature::FLUSH | feature::SEG_MAX,
        "TOPOLOGY is not taken"
    );
    assert_eq!(
        sim.pci.status(),
        status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK | status::DRIVER_OK
    );
    assert_eq!(
        (sim.pci.config_msix(), sim.pci.queue(0).msix_vector),
        (0, 1)
    );
    assert_eq!(sim.pci.queue(0).size, 128, "capped at the driver's maximum");
}

#[test]
fn a_block_size_that_is_not_a_power_of_two_falls_back_to_512() {
    let mut sim = SimBlk::new(feature::BLK_SIZE, 64, 1000, 0);
    assert_eq!(sim.driver(None).unwrap().info().block_size, 512);
}

#[test]
fn several_reads_in_flight_complete_out_of_order_with_their_data() {
    let mut sim = SimBlk::new(feature::SEG_MAX, 256, 512, 8);
    let mut d = sim.driver(None).unwrap();
    for id in 0..6u64 {
        // Two segments per request: 1 sector then 2 sectors.
        queued(d.submit(read_req(id, id * 10, vec![sim.buffer(1), sim.buffer(2)])));
    }
    assert_eq!(d.in_flight(), 6 * 4);
    assert_eq!(
        sim.pci.take_notifications(),
        vec![0; 6],
        "one kick per submit without event idx"
    );
    let chains = sim.take_all();
    assert_eq!(chains.len(), 6);
    for c in chains.iter().rev() {
        let len = sim.serve(c);
        assert_eq!(len, 3 * 512 + 1);
        sim.complete(c.head, len);
    }
    let done = d.poll();
    let ids: Vec<u64> = done.iter().map(|c| c.id).collect();
    assert_eq!(ids, [5, 4, 3, 2, 1, 0]);
    for c in &done {
        assert_eq!(c.status, Ok(()));
        let start = c.id as usize * 10 * SECTOR_SIZE;
        let mut got = bytes_of(&c.buffers[0]);
        got.extend(bytes_of(&c.buffers[1]));
        assert_eq!(got, sim.disk[start..start + 3 * SECTOR_SIZE]);
    }
    assert_eq!(d.in_flight(), 0);
}

#[test]
fn a_write_lands_on_the_disk_and_reads_back() {
    let mut sim = SimBlk::new(feature::FLUSH, 64, 512, 0);
    let mut d = sim.driver(None).unwrap();
    let buf = sim.buffer(2);
    let pattern: Vec<u8> = (0..1024).map(|i| (i * 7 % 256) as u8).collect();
    buf.write_bytes(0, &pattern).unwrap();
    queued(d.submit(Request {
        id: 1,
        op: Op::Write,
        sector: 5,
        buffers: vec![buf],
    }));
    queued(d.submit(Request {
        id: 2,
        op: Op::Flush,
        sector: 0,
        buffers: vec![],
    }));
    sim.run();
    let done = d.poll();
    assert_eq!(
        done.iter().map(|c| (c.id, c.status)).collect::<Vec<_>>(),
        [(1, Ok(())), (2, Ok(()))]
    );
    assert_eq!(sim.disk[5 * 512..7 * 512], pattern[..]);
    queued(d.submit(read_req(3, 5, vec![sim.buffer(2)])));
    sim.run();
    let done = d.poll();
    assert_eq!(bytes_of(&done[0].buffers[0]), pattern);
}

#[test]
fn a_device_error_fails_that_request_only() {
    let mut sim = SimBlk::new(feature::FLUSH, 64, 512, 0);
    let mut d = sim.driver(None).unwrap();
    sim.bad_sector = Some(9);
    sim.unsupp_flush = true;
    queued(d.submit(read_req(1, 0, vec![sim.buffer(4)])));
    queued(d.submit(read_req(2, 8, vec![sim.buffer(4)])));
    queued(d.submit(Request {
        id: 3,
        op: Op::Flush,
        sector: 0,
        buffers: vec![],
    }));
    queued(d.submit(read_req(4, 12, vec![sim.buffer(1)])));
    sim.run();
    let st: Vec<_> = d.poll().iter().map(|c| (c.id, c.status)).collect();
    assert_eq!(
        st,
        [
            (1, Ok(())),
            (2, Err(BlkError::Io)),
            (3, Err(BlkError::Unsupported)),
            (4, Ok(()))
        ]
    );
    // The driver goes on as before.
    queued(d.submit(read_req(5, 0, vec![sim.buffer(1)])));
    sim.run();
    assert_eq!(d.poll()[0].status, Ok(()));
}

#[test]
fn bad_requests_are_handed_back_untouched() {
    let mut sim = SimBlk::new(feature::RO | feature::SEG_MAX, 64, 512, 2);
    let mut d = sim.driver(None).unwrap();
    assert!(d.info().read_only);
    let cases = [
        (
            Request {
                id: 1,
                op: Op::Write,
                sector: 0,
                buffers: vec![sim.buffer(1)],
            },
            BlkError::ReadOnly,
        ),
        (read_req(2, 63, vec![sim.buffer(2)]), BlkError::Invalid),
        (
            read_req(3, u64::MAX, vec![sim.buffer(1)]),
            BlkError::Invalid,
        ),
        (read_req(4, 0, vec![]), BlkError::Invalid),
        (read_req(5, 0, vec![sim.bus.alloc(100)]), BlkError::Invalid),
        (
            read_req(6, 0, vec![sim.buffer(1), sim.buffer(1), sim.buffer(1)]),
            BlkError::Invalid,
        ),
        (
            Request {
                id: 7,
                op: Op::Flush,
                sector: 0,
                buffers: vec![sim.buffer(1)],
            },
            BlkError::Invalid,
        ),
    ];
    for (req, want) in cases {
        let id = req.id;
        let n = req.buffers.len();
        match d.submit(req) {
            Err(r) => {
                assert_eq!(
                    (r.error, r.request.id, r.request.buffers.len()),
                    (want, id, n)
                );
            }
            Ok(_) => panic!("request {id} accepted"),
        }
    }
    assert_eq!(d.in_flight(), 0);
    assert!(sim.take_all().is_empty());
    // Without FLUSH the device writes through: a flush completes at once.
    match d.submit(Request {
        id: 8,
        op: Op::Flush,
        sector: 0,
        buffers: vec![],
    }) {
        Ok(Submitted::Completed(c)) => assert_eq!((c.id, c.status), (8, Ok(()))),
        _ => panic!("flush on a write-through device"),
    }
}

#[test]
fn a_full_queue_answers_busy_and_recovers() {
    let mut sim = SimBlk::new(0, 1024, 512, 0);
    let mut d = sim.driver(None).unwrap();
    let mut n = 0;
    let rejected = loop {
        match d.submit(read_req(n, n, vec![sim.buffer(1)])) {
            Ok(_) => n += 1,
            Err(r) => break r,
        }
    };
    assert_eq!(n, 128 / 3, "three descriptors per request");
    assert_eq!((rejected.error, rejected.request.id), (BlkError::Busy, n));
    sim.run();
    assert_eq!(d.poll().len() as u64, n);
    queued(d.submit(rejected.request));
}

#[test]
fn a_misbehaving_device_fails_requests_without_a_panic() {
    let mut sim = SimBlk::new(0, 64, 512, 0);
    let mut d = sim.driver(None).unwrap();
    queued(d.submit(read_req(1, 0, vec![sim.buffer(1)])));
    queued(d.submit(read_req(2, 1, vec![sim.buffer(1)])));
    queued(d.submit(read_req(3, 2, vec![sim.buffer(1)])));
    let c = sim.take_all();
    for x in &c {
        sim.serve(x);
    }
    sim.complete(c[0].head, 4096); // more than the chain's 513 writable bytes
    sim.complete(77, 1); // no such chain
    sim.complete(c[1].head, 0); // the status byte not written
    sim.complete(c[2].head, 513);
    let st: Vec<_> = d.poll().iter().map(|c| (c.id, c.status)).collect();
    assert_eq!(
        st,
        [(1, Err(BlkError::Io)), (2, Err(BlkError::Io)), (3, Ok(()))]
    );
    assert_eq!(d.device_errors(), 2);
    assert!(!d.is_broken());
    assert_eq!(d.in_flight(), 0);
}

#[test]
fn a_device_that_breaks_the_ring_is_reset_and_everything_in_flight_fails() {
    let mut sim = SimBlk::new(0, 64, 512, 0);
    let mut d = sim.driver(None).unwrap();
    queued(d.submit(read_req(1, 0, vec![sim.buffer(1)])));
    queued(d.submit(read_req(2, 1, vec![sim.buffer(1)])));
    sim.take_all();
    sim.queue.as_mut().unwrap().set_used_idx(1000);
    let done = d.poll();
    let mut st: Vec<_> = done
        .iter()
        .map(|c| (c.id, c.status, c.buffers.len()))
        .collect();
    st.sort_by_key(|x| x.0);
    assert_eq!(
        st,
        [
            (1, Err(BlkError::DeviceBroken), 1),
            (2, Err(BlkError::DeviceBroken), 1)
        ]
    );
    assert!(d.is_broken());
    assert_eq!(sim.pci.status(), 0, "the device was reset");
    let r = d.submit(read_req(3, 0, vec![sim.buffer(1)]));
    assert!(matches!(
        r,
        Err(Rejected {
            error: BlkError::DeviceBroken,
            ..
        })
    ));
}

#[test]
fn probe_fails_cleanly_on_a_legacy_device_or_no_memory() {
    fn t(p: &SimPciDevice) -> Transport<SimRegs> {
        Transport::new(
            p.regs(SimWindow::Common),
            p.regs(SimWindow::Notify),
            SIM_NOTIFY_MULTIPLIER,
            p.regs(SimWindow::Isr),
            Some(p.regs(SimWindow::Device)),
        )
    }
    let sim = SimBlk::new(0, 64, 512, 0);
    let r = Dev::new(t(&sim.pci), |_| None, None);
    assert!(matches!(r, Err(ProbeError::NoMemory)));
    assert_eq!(sim.pci.status() & status::FAILED, status::FAILED);
    let legacy = SimPciDevice::new(0, &[128], 1, vec![0; 64]);
    let r = Dev::new(t(&legacy), |n| Some(sim.bus.alloc(n)), None);
    assert!(matches!(
        r,
        Err(ProbeError::Transport(TransportError::NoVersion1))
    ));
}
