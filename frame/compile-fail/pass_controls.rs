// The control: what the failing cases take away is otherwise allowed, so a
// harness that fails every build cannot pass the suite.
use core::cell::Cell;
use frame::sync::{Mutex, MutexGuard, Once, SpinLock, SpinLockGuard};

fn sync<T: Sync>() {}
fn send<T: Send>() {}

pub fn controls() {
    sync::<Mutex<Cell<u8>>>();
    send::<Mutex<Cell<u8>>>();
    sync::<SpinLock<Cell<u8>>>();
    sync::<MutexGuard<'static, u8, 0>>();
    sync::<SpinLockGuard<'static, u8, 0>>();
    sync::<Once<u8>>();
    sync::<frame::task::Task>();
    send::<frame::user::UserContext>();
    let _ = frame::task::TaskOptions::new(|| {}).data(7u32);
    let _ = frame::cpu::cpuid(0, 0);
    // Device handles move to driver tasks and are shared with callbacks.
    sync::<frame::io::IoMem>();
    send::<frame::io::IoMem>();
    sync::<frame::io::IoPort>();
    sync::<frame::irq::IrqLine>();
    send::<frame::irq::IrqLine>();
    sync::<frame::pci::PciDevice>();
    send::<frame::pci::PciDevice>();
    sync::<frame::dma::DmaCoherent>();
    send::<frame::dma::DmaStream>();
    // Plain data and shared-heap objects cross into domains.
    fn owned(v: ([u8; 4], Option<u64>)) -> usize {
        v.0.len()
    }
    fn moved(v: frame::domain::RRef<[u8; 16]>) -> frame::domain::RRef<[u8; 16]> {
        v
    }
    let mut stack = frame::domain::DomainStack::new().unwrap();
    let _ = frame::domain::call_isolated(&mut stack, owned, ([1u8; 4], None));
    if let Ok(r) = frame::domain::RRef::new([0u8; 16]) {
        let _ = frame::domain::call_isolated(&mut stack, moved, r);
    }
}

frame::exchangeable_struct! {
    pub struct Owned {
        pub id: u64,
        pub data: alloc::vec::Vec<u8>,
    }
}

pub fn device_controls(line: &frame::irq::IrqLine, d: &frame::dma::DmaCoherent, dev: &frame::pci::PciDevice) {
    let shared = alloc::sync::Arc::new(core::sync::atomic::AtomicU32::new(0));
    line.on_active(move || {
        shared.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    });
    let _ = d.read_val::<u64>(0);
    let _ = dev.config_read_u32(0x10);
}
