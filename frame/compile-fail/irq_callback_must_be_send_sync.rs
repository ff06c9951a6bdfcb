// expect: cannot be
// An IrqLine callback runs in interrupt context on whatever task was
// running: what it captures must be Send and Sync.
use alloc::rc::Rc;

pub fn f(line: &frame::irq::IrqLine) {
    let rc = Rc::new(1u8);
    line.on_active(move || {
        let _ = &rc;
    });
}
