// expect: cannot be sent between threads safely
use alloc::rc::Rc;
use frame::sync::SpinLock;

fn send<T: Send>() {}

pub fn f() {
    send::<SpinLock<Rc<u8>>>();
}
