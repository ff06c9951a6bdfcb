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
}
