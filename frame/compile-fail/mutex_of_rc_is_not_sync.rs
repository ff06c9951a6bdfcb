// expect: cannot be sent between threads safely
// A lock makes a `Send` value shareable, never a non-`Send` one.
use alloc::rc::Rc;
use frame::sync::Mutex;

fn sync<T: Sync>() {}

pub fn f() {
    sync::<Mutex<Rc<u8>>>();
}
