// expect: cannot be shared between threads safely
use core::cell::Cell;
use frame::sync::SpinLockGuard;

fn sync<T: Sync>() {}

pub fn f() {
    sync::<SpinLockGuard<'static, Cell<u64>, 0>>();
}
