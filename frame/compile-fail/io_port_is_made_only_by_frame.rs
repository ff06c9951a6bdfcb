// expect: associated function `new` is private
// Invariant 7 for ports: a client cannot make an IoPort over the PIC, the
// serial console or the PCI configuration ports.
pub fn f() {
    let _ = frame::io::IoPort::new(0xcf8, 8);
}
