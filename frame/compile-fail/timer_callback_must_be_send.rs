// expect: cannot be sent between threads safely
// A timer callback runs in interrupt context on whatever task was running.
use alloc::boxed::Box;
use alloc::rc::Rc;

pub fn f() {
    let rc = Rc::new(1u8);
    frame::timer::call_at(0, Box::new(move || {
        let _ = &rc;
    }));
}
