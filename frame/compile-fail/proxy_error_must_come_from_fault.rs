// expect: the trait bound `u32: From<Fault>` is not satisfied
// The proxy maps a fault into the method's error type with `From`.
#[domain_proxy::interface]
pub trait Sizes {
    fn size(&self) -> Result<u64, u32>;
}
