//! Handles to a domain's interface: what `#[domain_proxy::interface]`
//! implements the interface trait for (the proxy), and what may be passed
//! to another domain so that it can call this one.

use alloc::sync::Arc;
use core::ops::Deref;

use super::Exchangeable;
use super::object::Domain;

/// A shared handle to a domain. The domain lives as long as its last
/// handle (dropping the last one kills it: `Drop for Domain`).
///
/// Clones are cheap (a reference count). Every call through any clone
/// goes through the domain's own lock (`Domain::call`), so a handle is
/// never half-used.
pub struct Handle<T: Send + 'static> {
    domain: Arc<Domain<T>>,
}

impl<T: Send + 'static> Handle<T> {
    /// Makes `domain` callable through handles (and through the generated
    /// proxy of its interface).
    pub fn new(domain: Domain<T>) -> Handle<T> {
        Handle {
            domain: Arc::new(domain),
        }
    }

    /// The domain this handle calls.
    pub fn domain(&self) -> &Domain<T> {
        &self.domain
    }
}

impl<T: Send + 'static> Clone for Handle<T> {
    fn clone(&self) -> Self {
        Handle {
            domain: self.domain.clone(),
        }
    }
}

impl<T: Send + 'static> Deref for Handle<T> {
    type Target = Domain<T>;

    fn deref(&self) -> &Domain<T> {
        &self.domain
    }
}

// SAFETY: a handle shares its domain, but everything the domain holds
// that a half-done change could tear is behind the domain's own lock (its
// root and stack, changed only by a call that holds it) or in atomics (its
// counters, its liveness). A domain abandoned while it holds a handle
// cannot be in the middle of a call through it: the code running then is
// the callee's, whose own fault the callee's call recovers. What the
// abandoned holder loses is the handle's count: the callee then stays
// alive until it is dropped by its other holders' last handle, or forever
// (docs/domains.md, "Proxies", says which handles are reclaimed).
// MIRI: relied on by domain::handle::tests::a_proxy_calls_the_domain_and_maps_faults
unsafe impl<T: Send + 'static> Exchangeable for Handle<T> {}

// SAFETY: a field-less enum: plain data, so an error type that carries the
// fault that ended a call can cross back.
// MIRI: relied on by domain::handle::tests::a_proxy_calls_the_domain_and_maps_faults
unsafe impl Exchangeable for super::Fault {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Fault, RRef};
    use crate::sim;

    #[derive(Debug, PartialEq, Eq)]
    enum CountError {
        Fault(Fault),
        TooBig,
    }

    // SAFETY: a field-less error code and a `Fault` (plain values).
    // MIRI: relied on by domain::handle::tests::a_proxy_calls_the_domain_and_maps_faults
    unsafe impl Exchangeable for CountError {}

    impl From<Fault> for CountError {
        fn from(f: Fault) -> Self {
            CountError::Fault(f)
        }
    }

    #[domain_proxy::interface(frame = crate)]
    trait Counter {
        fn add(&mut self, k: u64) -> Result<u64, CountError>;
        fn get(&self) -> Result<u64, CountError>;
        fn add_both(&mut self, a: u32, b: u64, c: u8) -> Result<(u64, bool), CountError>;
        fn crash(&mut self) -> Result<(), CountError>;
        fn add_block(&mut self, scale: u64, block: &RRef<[u8; 8]>) -> Result<u64, CountError>;
        fn store(&mut self, block: &mut RRef<[u8; 8]>) -> Result<(), CountError>;
        fn take(&mut self, block: RRef<[u8; 8]>) -> Result<RRef<[u8; 8]>, CountError>;
    }

    struct Count(u64);

    impl Counter for Count {
        fn add(&mut self, k: u64) -> Result<u64, CountError> {
            if k > 100 {
                return Err(CountError::TooBig);
            }
            self.0 += k;
            Ok(self.0)
        }
        fn get(&self) -> Result<u64, CountError> {
            Ok(self.0)
        }
        fn add_both(&mut self, a: u32, b: u64, c: u8) -> Result<(u64, bool), CountError> {
            self.0 += u64::from(a) + b + u64::from(c);
            Ok((self.0, c == 0))
        }
        fn crash(&mut self) -> Result<(), CountError> {
            self.0 += 1;
            panic!("injected")
        }
        fn add_block(&mut self, scale: u64, block: &RRef<[u8; 8]>) -> Result<u64, CountError> {
            self.0 += scale * block.iter().map(|&b| u64::from(b)).sum::<u64>();
            Ok(self.0)
        }
        fn store(&mut self, block: &mut RRef<[u8; 8]>) -> Result<(), CountError> {
            *block = RRef::new([0; 8]).map_err(|_| CountError::TooBig)?;
            Ok(())
        }
        fn take(&mut self, mut block: RRef<[u8; 8]>) -> Result<RRef<[u8; 8]>, CountError> {
            block[0] = self.0 as u8;
            Ok(block)
        }
    }

    fn start(n: u64) -> Count {
        Count(n)
    }

    /// Calls through any implementation of the trait: the proxy is one.
    fn twice(c: &mut impl Counter, k: u64) -> Result<u64, CountError> {
        c.add(k)?;
        c.add(k)
    }

    #[test]
    fn a_proxy_calls_the_domain_and_maps_faults() {
        sim::run(|| {
            let mut p: CounterProxy<Count> =
                Handle::new(Domain::new("test-proxy", start, 5u64).unwrap());
            assert_eq!(p.add(2), Ok(7));
            assert_eq!(twice(&mut p, 1), Ok(9));
            assert_eq!(p.get(), Ok(9));
            assert_eq!(
                p.add(101),
                Err(CountError::TooBig),
                "the callee's own error"
            );
            assert_eq!(p.add_both(1, 2, 0), Ok((12, true)));
            let mut other = p.clone();
            assert_eq!(other.add(3), Ok(15), "clones call the same domain");
            assert_eq!(p.get(), Ok(15));
            let mut block = RRef::new([1u8; 8]).unwrap();
            assert_eq!(p.add_block(2, &block), Ok(31), "a shared lend");
            let block2 = p.take(block).unwrap();
            assert_eq!(block2[0], 31, "moved in and out");
            assert_eq!(block2.owner(), crate::domain::Owner::KERNEL);
            block = block2;
            p.store(&mut block).unwrap();
            assert_eq!(*block, [0; 8], "an exclusive lend: replaced");
            assert_eq!(p.crash(), Err(CountError::Fault(Fault::Panic)));
            assert!(!p.is_alive());
            assert_eq!(other.get(), Err(CountError::Fault(Fault::Dead)));
            assert_eq!(
                p.stats()
                    .crashes
                    .load(core::sync::atomic::Ordering::Relaxed),
                1
            );
        });
    }
}
