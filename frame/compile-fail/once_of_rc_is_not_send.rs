// expect: cannot be sent between threads safely
use alloc::rc::Rc;
use frame::sync::Once;

fn send<T: Send>() {}

pub fn f() {
    send::<Once<Rc<u8>>>();
}
