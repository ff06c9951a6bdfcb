// expect: cannot be sent between threads safely
// The entry closure runs on the new task, so what it captures must be Send.
use alloc::rc::Rc;

pub fn f() {
    let rc = Rc::new(1u8);
    let _ = frame::task::TaskOptions::new(move || {
        let _ = &rc;
    });
}
