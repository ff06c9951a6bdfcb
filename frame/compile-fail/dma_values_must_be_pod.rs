// expect: is not satisfied
// A device may write any bytes into a DMA buffer: only Pod values (valid
// for every bit pattern) can be read out of one.
pub fn f(d: &frame::dma::DmaCoherent) {
    let _ = d.read_val::<bool>(0);
}
