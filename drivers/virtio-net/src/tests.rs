//! The driver against a simulated virtio-net device (virtio's `sim`), which
//! plays the device side of both queues: it fills receive buffers with
//! frames "from the wire" and collects the frames the driver sends.

use alloc::vec;
use alloc::vec::Vec;

use super::*;
use virtio::sim::{
    SIM_NOTIFY_MULTIPLIER, SimBus, SimChain, SimPciDevice, SimQueue, SimRegion, SimRegs, SimWindow,
};
use virtio::transport::status;

type Dev = NetDevice<SimRegs, SimRegion>;

const MAC: [u8; 6] = [0x52, 0x54, 0x00, 0x12, 0x34, 0x56];
const FALLBACK: [u8; 6] = [0x02, 0, 0, 0, 0, 1];

/// The device side: register file and both queues.
struct SimNet {
    pci: SimPciDevice,
    bus: SimBus,
    rx: Option<SimQueue>,
    tx: Option<SimQueue>,
}

impl SimNet {
    /// A device offering `features` (plus VERSION_1 and a few offloads the
    /// driver must not take) with queues of `rx`/`tx` entries at most.
    fn new(features: u64, rx: u16, tx: u16, link_up: bool) -> Self {
        let mut cfg = vec![0u8; 12];
        cfg[0..6].copy_from_slice(&MAC);
        cfg[6..8].copy_from_slice(&u16::from(link_up).to_le_bytes());
        let offered = virtio::feature::VERSION_1
            | features
            | feature::CSUM
            | feature::GUEST_CSUM
            | feature::HOST_TSO4
            | feature::GUEST_TSO4
            | feature::MRG_RXBUF
            | feature::CTRL_VQ;
        Self {
            pci: SimPciDevice::new(offered, &[rx, tx, 64], 3, cfg),
            bus: SimBus::new(4 << 20),
            rx: None,
            tx: None,
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
        let d = Dev::new(t, |n| Some(bus.alloc(n)), vectors, FALLBACK)?;
        for (i, q) in [&mut self.rx, &mut self.tx].into_iter().enumerate() {
            let r = self.pci.queue(i);
            assert!(r.enabled);
            *q = Some(SimQueue::new(
                &self.bus,
                r.size,
                (r.desc, r.driver, r.device),
            ));
        }
        Ok(d)
    }

    fn rxq(&mut self) -> &mut SimQueue {
        self.rx.as_mut().unwrap()
    }

    fn txq(&mut self) -> &mut SimQueue {
        self.tx.as_mut().unwrap()
    }

    /// Every receive buffer the driver has posted (and not yet taken).
    fn rx_buffers(&mut self) -> Vec<SimChain> {
        let q = self.rxq();
        core::iter::from_fn(|| q.pop_avail()).collect()
    }

    /// The device receives `frame` into `chain`: header (num_buffers 1)
    /// then the frame; returns the used length it would report.
    fn fill(&self, chain: &SimChain, frame: &[u8]) -> u32 {
        assert_eq!(chain.descs.len(), 1);
        let d = chain.descs[0];
        assert!(d.writable && d.len as usize == SLOT_SIZE);
        let mut hdr = [0u8; HDR_LEN];
        hdr[10] = 1;
        self.bus.write(d.addr, &hdr).unwrap();
        self.bus.write(d.addr + HDR_LEN as u64, frame).unwrap();
        (HDR_LEN + frame.len()) as u32
    }

    /// The frames the driver made available on the transmit queue, checked
    /// for a zeroed header, with their chains.
    fn sent(&mut self) -> Vec<(SimChain, Vec<u8>)> {
        let q = self.txq();
        let chains: Vec<SimChain> = core::iter::from_fn(|| q.pop_avail()).collect();
        chains
            .into_iter()
            .map(|c| {
                assert_eq!(c.descs.len(), 1);
                let d = c.descs[0];
                assert!(!d.writable);
                let mut bytes = vec![0u8; d.len as usize];
                self.bus.read(d.addr, &mut bytes).unwrap();
                assert_eq!(bytes[..HDR_LEN], [0; HDR_LEN], "no offload asked for");
                let frame = bytes.split_off(HDR_LEN);
                (c, frame)
            })
            .collect()
    }
}

fn frame(n: u8, len: usize) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(7) ^ n).collect();
    f[12] = 0x08; // IPv4 EtherType, for the look of it
    f[13] = 0x00;
    f
}

fn msix() -> Option<Vectors> {
    Some(Vectors {
        config: 0,
        rx: 1,
        tx: 2,
    })
}

#[test]
fn probe_takes_mac_and_status_but_no_offloads_and_fills_the_receive_ring() {
    let mut sim = SimNet::new(feature::MAC | feature::STATUS, 256, 256, true);
    let mut d = sim.driver(msix()).unwrap();
    assert_eq!(
        sim.pci.driver_features(),
        virtio::feature::VERSION_1 | feature::MAC | feature::STATUS,
        "no CSUM, TSO, MRG_RXBUF or CTRL_VQ"
    );
    assert_eq!(
        sim.pci.status(),
        status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK | status::DRIVER_OK
    );
    assert_eq!(d.mac(), MAC);
    assert_eq!(d.mtu(), 1500);
    assert!(d.link_up());
    assert_eq!(sim.pci.config_msix(), 0);
    assert_eq!(
        (sim.pci.queue(0).msix_vector, sim.pci.queue(1).msix_vector),
        (1, 2)
    );
    assert_eq!(
        sim.pci.queue(0).size,
        MAX_RX_QUEUE,
        "capped at the driver's maximum"
    );
    assert_eq!(sim.pci.queue(1).size, MAX_TX_QUEUE);
    assert!(!sim.pci.queue(2).enabled, "no control queue");
    assert_eq!(d.rx_posted(), usize::from(MAX_RX_QUEUE));
    assert_eq!(
        sim.pci.take_notifications(),
        vec![0],
        "one kick for the whole ring"
    );
    let bufs = sim.rx_buffers();
    assert_eq!(bufs.len(), usize::from(MAX_RX_QUEUE));
    let mut addrs: Vec<u64> = bufs.iter().map(|c| c.descs[0].addr).collect();
    addrs.sort();
    addrs.dedup();
    assert_eq!(addrs.len(), bufs.len(), "every buffer is its own memory");
    assert!(addrs.windows(2).all(|w| w[1] - w[0] >= SLOT_SIZE as u64));
    assert_eq!(d.receive(), None);
}

#[test]
fn without_mac_and_status_the_fallback_mac_is_used_and_the_link_is_up() {
    let mut sim = SimNet::new(0, 16, 16, false);
    let d = sim.driver(None).unwrap();
    assert_eq!(d.mac(), FALLBACK);
    assert!(d.link_up(), "no STATUS feature: the link is always up");

    let mut sim = SimNet::new(feature::STATUS, 16, 16, false);
    let d = sim.driver(None).unwrap();
    assert!(!d.link_up());
    sim.pci.set_device_cfg(6, &1u16.to_le_bytes());
    assert!(d.link_up());
}

#[test]
fn small_queues_and_missing_memory_fail_the_device() {
    let mut sim = SimNet::new(0, 1, 16, true);
    assert_eq!(sim.driver(None).err(), Some(ProbeError::QueueTooSmall));
    assert_eq!(sim.pci.status() & status::FAILED, status::FAILED);

    let sim = SimNet::new(0, 16, 16, true);
    let p = &sim.pci;
    let t = Transport::new(
        p.regs(SimWindow::Common),
        p.regs(SimWindow::Notify),
        SIM_NOTIFY_MULTIPLIER,
        p.regs(SimWindow::Isr),
        Some(p.regs(SimWindow::Device)),
    );
    let bus = sim.bus.clone();
    let mut left = 3;
    let r = Dev::new(
        t,
        |n| {
            left -= 1;
            (left >= 0).then(|| bus.alloc(n))
        },
        None,
        FALLBACK,
    );
    assert_eq!(r.err(), Some(ProbeError::NoMemory));
    assert_eq!(sim.pci.status() & status::FAILED, status::FAILED);
}

#[test]
fn frames_arrive_in_used_order_and_every_buffer_is_posted_again() {
    let mut sim = SimNet::new(feature::MAC, 32, 32, true);
    let mut d = sim.driver(None).unwrap();
    let bufs = sim.rx_buffers();
    assert_eq!(bufs.len(), 32);
    // The device fills five buffers, completing them out of order.
    let sent: Vec<Vec<u8>> = (0..5).map(|i| frame(i, 60 + 300 * i as usize)).collect();
    for i in [3usize, 0, 4, 1, 2] {
        let len = sim.fill(&bufs[i], &sent[i]);
        sim.rxq().push_used(u32::from(bufs[i].head), len);
    }
    assert!(d.rx_pending());
    for i in [3usize, 0, 4, 1, 2] {
        assert_eq!(d.receive().as_deref(), Some(&sent[i][..]));
    }
    assert_eq!(d.receive(), None);
    assert!(!d.rx_pending());
    let s = d.stats();
    assert_eq!(s.rx_packets, 5);
    assert_eq!(s.rx_bytes, sent.iter().map(|f| f.len() as u64).sum::<u64>());
    assert_eq!((s.rx_dropped, s.device_errors), (0, 0));
    // Refilled: all 32 on the device again, the 5 new ones the same slots.
    assert_eq!(d.rx_posted(), 32);
    let again = sim.rx_buffers();
    assert_eq!(again.len(), 5);
    let mut old: Vec<u64> = bufs[..5].iter().map(|c| c.descs[0].addr).collect();
    let mut new: Vec<u64> = again.iter().map(|c| c.descs[0].addr).collect();
    old.sort();
    new.sort();
    assert_eq!(old, new);

    // A full-size frame (1514 bytes) and a VLAN-tagged one fit a buffer.
    for (i, len) in [(0usize, 1514usize), (1, 1518)] {
        let f = frame(9, len);
        let n = sim.fill(&again[i], &f);
        sim.rxq().push_used(u32::from(again[i].head), n);
        assert_eq!(d.receive(), Some(f));
    }
}

#[test]
fn several_frames_in_flight_then_a_full_ring_then_room_after_completion() {
    let mut sim = SimNet::new(feature::MAC, 16, 8, true);
    let mut d = sim.driver(msix()).unwrap();
    sim.pci.take_notifications();
    let frames: Vec<Vec<u8>> = (0..8).map(|i| frame(i, 42 + 100 * i as usize)).collect();
    for f in &frames {
        d.transmit(f).unwrap();
    }
    assert_eq!(d.tx_in_flight(), 8);
    assert_eq!(
        sim.pci.take_notifications(),
        vec![1; 8],
        "one kick per frame without event idx"
    );
    // The ring is full: the next frame is refused without touching it.
    assert_eq!(d.transmit(&frames[0]), Err(TxError::Full));
    assert_eq!(d.tx_in_flight(), 8);
    assert!(sim.pci.take_notifications().is_empty());

    let got = sim.sent();
    let bodies: Vec<Vec<u8>> = got.iter().map(|(_, f)| f.clone()).collect();
    assert_eq!(bodies, frames, "every frame on the wire, in order, intact");
    // The device finishes two (out of order, len 0 as §2.7.8 says).
    sim.txq().push_used(u32::from(got[5].0.head), 0);
    sim.txq().push_used(u32::from(got[2].0.head), 0);
    d.transmit(&frames[3]).unwrap();
    d.transmit(&frames[4]).unwrap();
    assert_eq!(d.transmit(&frames[5]), Err(TxError::Full));
    let more = sim.sent();
    assert_eq!(more.len(), 2);
    assert_eq!(more[0].1, frames[3]);
    assert_eq!(more[1].1, frames[4]);
    // The two new frames went into the two freed slots.
    let mut freed = vec![got[5].0.descs[0].addr, got[2].0.descs[0].addr];
    let mut reused = vec![more[0].0.descs[0].addr, more[1].0.descs[0].addr];
    freed.sort();
    reused.sort();
    assert_eq!(freed, reused);
    let rest = got
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 5 && *i != 2)
        .map(|(_, c)| c)
        .chain(more.iter());
    for (c, _) in rest {
        sim.txq().push_used(u32::from(c.head), 0);
    }
    assert_eq!(
        d.reclaim_tx(),
        8,
        "six of the first batch and the two new ones (the first two were reclaimed when the ring was full)"
    );
    assert_eq!(d.tx_in_flight(), 0);
    let s = d.stats();
    assert_eq!(s.tx_packets, 10);
    assert_eq!(s.device_errors, 0);
}

#[test]
fn frames_of_bad_length_are_refused_before_the_ring() {
    let mut sim = SimNet::new(0, 16, 16, true);
    let mut d = sim.driver(None).unwrap();
    assert_eq!(d.transmit(&[0u8; 13]), Err(TxError::BadLength));
    assert_eq!(d.transmit(&[]), Err(TxError::BadLength));
    assert_eq!(d.transmit(&vec![0u8; 1519]), Err(TxError::BadLength));
    assert_eq!(d.transmit(&vec![0u8; 65536]), Err(TxError::BadLength));
    assert_eq!(d.tx_in_flight(), 0);
    assert!(sim.sent().is_empty());
    assert_eq!(d.stats().tx_dropped, 4);
    d.transmit(&vec![0u8; 1518]).unwrap();
    d.transmit(&[1u8; 14]).unwrap();
    assert_eq!(sim.sent().len(), 2);
}

#[test]
fn hostile_receive_lengths_and_ids_are_counted_and_dropped() {
    let mut sim = SimNet::new(feature::MAC, 16, 16, true);
    let mut d = sim.driver(None).unwrap();
    let bufs = sim.rx_buffers();
    let good = frame(1, 100);
    // 0 bytes; the header only; header + 13 bytes (no Ethernet header);
    // one byte more than the buffer; u32::MAX.
    for (i, len) in [0u32, 12, 25, SLOT_SIZE as u32 + 1, u32::MAX]
        .into_iter()
        .enumerate()
    {
        sim.fill(&bufs[i], &good);
        sim.rxq().push_used(u32::from(bufs[i].head), len);
    }
    // An id out of range, one that is not a chain head in flight (already
    // completed above), and one far out of u16.
    sim.rxq().push_used(16, 0);
    sim.rxq().push_used(u32::from(bufs[0].head), 100);
    sim.rxq().push_used(0x1_0000, 100);
    // Then a good frame.
    let n = sim.fill(&bufs[5], &good);
    sim.rxq().push_used(u32::from(bufs[5].head), n);

    assert_eq!(
        d.receive(),
        Some(good.clone()),
        "the good frame gets through"
    );
    assert_eq!(d.receive(), None);
    let s = d.stats();
    assert_eq!((s.rx_dropped, s.rx_length_errors), (5, 5));
    assert_eq!(s.device_errors, 3);
    assert_eq!((s.rx_packets, s.rx_bytes), (1, 100));
    assert!(!d.is_broken());
    assert!(d.link_up());
    assert_eq!(d.rx_posted(), 16, "dropped buffers are posted again");
    assert_eq!(sim.rx_buffers().len(), 6);
    // And the device still works both ways.
    d.transmit(&good).unwrap();
    assert_eq!(sim.sent()[0].1, good);
}

#[test]
fn a_transmit_completion_with_a_length_is_counted_but_frees_the_slot() {
    let mut sim = SimNet::new(0, 16, 4, true);
    let mut d = sim.driver(None).unwrap();
    for i in 0..4 {
        d.transmit(&frame(i, 60)).unwrap();
    }
    let got = sim.sent();
    sim.txq().push_used(u32::from(got[0].0.head), 72);
    sim.txq().push_used(u32::from(got[0].0.head), 0); // completed twice
    sim.txq().push_used(99, 0);
    assert_eq!(d.reclaim_tx(), 1);
    assert_eq!(d.stats().device_errors, 3);
    d.transmit(&frame(7, 60)).unwrap();
    assert_eq!(d.transmit(&frame(8, 60)), Err(TxError::Full));
}

#[test]
fn a_used_index_jump_resets_the_device_and_takes_the_link_down() {
    let mut sim = SimNet::new(feature::STATUS, 16, 16, true);
    let mut d = sim.driver(None).unwrap();
    d.transmit(&frame(0, 60)).unwrap();
    assert!(d.link_up());
    sim.rx_buffers();
    sim.rxq().set_used_idx(100);
    assert_eq!(d.receive(), None);
    assert!(d.is_broken());
    assert_eq!(sim.pci.status(), 0, "reset: the device touches no buffer");
    assert!(!d.link_up());
    assert_eq!(d.transmit(&frame(1, 60)), Err(TxError::Broken));
    assert_eq!(d.receive(), None);
    assert_eq!(d.reclaim_tx(), 0);
    assert_eq!(d.stats().device_errors, 1);
}

#[test]
fn a_jump_on_the_transmit_queue_breaks_it_too() {
    let mut sim = SimNet::new(0, 16, 2, true);
    let mut d = sim.driver(None).unwrap();
    d.transmit(&frame(0, 60)).unwrap();
    d.transmit(&frame(1, 60)).unwrap();
    sim.txq().set_used_idx(3);
    assert_eq!(d.transmit(&frame(2, 60)), Err(TxError::Broken));
    assert!(d.is_broken());
    assert_eq!(sim.pci.status(), 0);
}

#[test]
fn intx_reads_the_isr_and_msix_does_not() {
    let mut sim = SimNet::new(0, 16, 16, true);
    let d = sim.driver(None).unwrap();
    sim.pci.set_isr(virtio::transport::ISR_QUEUE);
    assert_eq!(d.ack_interrupt(), virtio::transport::ISR_QUEUE);
    assert_eq!(d.ack_interrupt(), 0, "reading acknowledged it");

    let mut sim = SimNet::new(0, 16, 16, true);
    let d = sim.driver(msix()).unwrap();
    sim.pci.set_isr(virtio::transport::ISR_QUEUE);
    assert_eq!(d.ack_interrupt(), 0);
}

#[test]
fn many_frames_through_a_small_ring_wrap_the_indices() {
    let mut sim = SimNet::new(virtio::feature::RING_EVENT_IDX, 4, 4, true);
    let mut d = sim.driver(None).unwrap();
    assert_ne!(d.features() & virtio::feature::RING_EVENT_IDX, 0);
    let mut received = 0u64;
    for round in 0..70_000u32 {
        let f = frame(round as u8, 60 + (round % 1400) as usize);
        // Whatever the driver posted since the last round: the device fills
        // each with the frame and the driver takes them all.
        let bufs = sim.rx_buffers();
        assert!(!bufs.is_empty(), "no receive buffer in round {round}");
        for c in &bufs {
            let n = sim.fill(c, &f);
            sim.rxq().push_used(u32::from(c.head), n);
        }
        for _ in &bufs {
            assert_eq!(d.receive().as_ref(), Some(&f));
            received += 1;
        }
        assert_eq!(d.receive(), None);
        d.transmit(&f).unwrap();
        let sent = sim.sent();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].1, f);
        sim.txq().push_used(u32::from(sent[0].0.head), 0);
    }
    let s = d.stats();
    assert_eq!(s.device_errors, 0);
    assert_eq!(s.rx_packets, received);
    assert_eq!(s.tx_packets, 70_000);
    assert_eq!(d.rx_posted(), 4);
}

#[test]
fn dropping_the_driver_resets_the_device() {
    let mut sim = SimNet::new(0, 16, 16, true);
    let d = sim.driver(None).unwrap();
    assert_ne!(sim.pci.status() & status::DRIVER_OK, 0);
    drop(d);
    assert_eq!(sim.pci.status(), 0);
}

#[test]
fn receive_into_copies_into_the_callers_buffer_and_drops_what_does_not_fit() {
    let mut sim = SimNet::new(feature::MAC, 8, 8, true);
    let mut d = sim.driver(None).unwrap();
    let bufs = sim.rx_buffers();
    let (small, big) = (frame(1, 60), frame(2, 1000));
    for (i, f) in [(0usize, &small), (1, &big), (2, &small)] {
        let len = sim.fill(&bufs[i], f);
        sim.rxq().push_used(u32::from(bufs[i].head), len);
    }
    // A buffer the size of a slot's frame room takes any frame.
    let mut out = [0xaau8; SLOT_SIZE - HDR_LEN];
    assert_eq!(d.receive_into(&mut out), Some(60));
    assert_eq!(&out[..60], &small[..]);
    // Too small for the 1000-byte frame: it is dropped and counted, and
    // the next one is returned; every slot goes back to the device.
    let mut short = [0u8; 100];
    assert_eq!(d.receive_into(&mut short), Some(60));
    assert_eq!(&short[..60], &small[..]);
    assert_eq!(d.receive_into(&mut short), None);
    let s = d.stats();
    assert_eq!((s.rx_packets, s.rx_dropped, s.rx_length_errors), (2, 1, 1));
    assert_eq!(d.rx_posted(), 8);
}
