// expect: cannot be sent between threads safely
// A spin-lock guard may restore the interrupt flag of the CPU that took it.
use frame::sync::SpinLockGuard;

fn send<T: Send>() {}

pub fn f() {
    send::<SpinLockGuard<'static, u64, 0>>();
}
