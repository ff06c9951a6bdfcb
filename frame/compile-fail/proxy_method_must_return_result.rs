// expect: a domain interface method returns `Result<T, E>` with `E: From<Fault>`
// A call through a proxy can fault: every method must be able to say so.
#[domain_proxy::interface]
pub trait Silent {
    fn size(&self) -> u64;
}
