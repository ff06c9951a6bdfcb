// expect: function `enable_local` is private
pub fn f() {
    frame::irq::enable_local();
}
