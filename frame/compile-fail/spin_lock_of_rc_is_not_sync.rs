// expect: cannot be sent between threads safely
use alloc::rc::Rc;
use frame::sync::SpinLock;

fn sync<T: Sync>() {}

pub fn f() {
    sync::<SpinLock<Rc<u8>>>();
}
