//! Values that may cross a domain boundary.

/// Who owns a shared-heap object ([`RRef`](super::RRef)): the kernel, or
/// one incarnation of a domain. Only frame makes these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner(pub(crate) u64);

impl Owner {
    /// The kernel: objects it owns are freed only when dropped.
    pub const KERNEL: Owner = Owner(0);
}

/// A value that owns everything it reaches: no references, no `Arc`, no
/// interior mutability shared with anything outside the value.
///
/// # Safety
/// If a domain is abandoned halfway through changing such a value (a
/// fault), nothing outside the value can observe the change. Shared
/// ownership (`Arc`, `Rc`), references and raw pointers break that, so no
/// type holding them may implement this trait.
///
/// A type that holds [`RRef`](super::RRef)s (directly or in its fields)
/// must forward [`Exchangeable::transfer`] to each of them: the owner an
/// `RRef` records decides which domain's death frees it, so a stale owner
/// is a use after free. [`exchangeable_struct!`](crate::exchangeable_struct)
/// does the forwarding.
pub unsafe trait Exchangeable: Send + 'static {
    /// Records `to` as the owner of every shared-heap object this value
    /// holds: it has just been moved to that domain (into a call, or back
    /// out of one). Plain data holds none.
    #[inline(always)]
    fn transfer(&self, to: Owner) {
        let _ = to;
    }
}

/// Compile-time helper used by [`exchangeable_struct!`](crate::exchangeable_struct).
pub const fn assert_exchangeable<T: Exchangeable>() {}

macro_rules! impl_exchangeable {
    ($($t:ty),*) => { $(
        // SAFETY: plain values that own nothing outside themselves.
        // MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
        unsafe impl Exchangeable for $t {}
    )* };
}
impl_exchangeable!(
    (),
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize
);

// SAFETY: each element is Exchangeable and owned by the array.
// MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
unsafe impl<T: Exchangeable, const N: usize> Exchangeable for [T; N] {
    #[inline(always)]
    fn transfer(&self, to: Owner) {
        self.iter().for_each(|v| v.transfer(to));
    }
}
// SAFETY: an option owns its (Exchangeable) contents.
unsafe impl<T: Exchangeable> Exchangeable for Option<T> {
    #[inline(always)]
    fn transfer(&self, to: Owner) {
        if let Some(v) = self {
            v.transfer(to);
        }
    }
}
// SAFETY: either side is Exchangeable and owned.
unsafe impl<T: Exchangeable, E: Exchangeable> Exchangeable for Result<T, E> {
    #[inline(always)]
    fn transfer(&self, to: Owner) {
        match self {
            Ok(v) => v.transfer(to),
            Err(e) => e.transfer(to),
        }
    }
}
macro_rules! impl_exchangeable_tuple {
    ($($n:ident),+) => {
        // SAFETY: every field is Exchangeable and owned by the tuple.
        unsafe impl<$($n: Exchangeable),+> Exchangeable for ($($n,)+) {
            #[inline(always)]
            #[allow(non_snake_case)]
            fn transfer(&self, to: Owner) {
                let ($($n,)+) = self;
                $($n.transfer(to);)+
            }
        }
    };
}
// Up to eight: the argument lists the generated proxies pack.
impl_exchangeable_tuple!(A);
impl_exchangeable_tuple!(A, B);
impl_exchangeable_tuple!(A, B, C);
impl_exchangeable_tuple!(A, B, C, D);
impl_exchangeable_tuple!(A, B, C, D, E);
impl_exchangeable_tuple!(A, B, C, D, E, F);
impl_exchangeable_tuple!(A, B, C, D, E, F, G);
impl_exchangeable_tuple!(A, B, C, D, E, F, G, H);
// Not `Box`, `Vec` or `String`: made inside a domain, they point into its
// heap, which its death frees wholesale. Data that outlives a call travels
// as an `RRef` (the shared heap) or by value.

// SAFETY: an error code owns nothing.
// MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
unsafe impl Exchangeable for crate::Error {}

/// Declares a struct and implements [`Exchangeable`] for it, after
/// checking at compile time that every field is Exchangeable.
///
/// ```
/// frame::exchangeable_struct! {
///     /// A request crossing into a driver domain.
///     pub struct Request {
///         pub sector: u64,
///         pub count: u32,
///     }
/// }
/// ```
///
/// A field that shares ownership with the outside, or that points into a
/// heap, is refused:
///
/// ```compile_fail
/// frame::exchangeable_struct! {
///     pub struct Shares { pub a: std::sync::Arc<u32> }
/// }
/// ```
#[macro_export]
macro_rules! exchangeable_struct {
    ($(#[$m:meta])* $vis:vis struct $name:ident {
        $($(#[doc = $doc:expr])* $fvis:vis $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$m])*
        $vis struct $name { $($(#[doc = $doc])* $fvis $field: $ty),* }
        const _: () = {
            $( $crate::domain::assert_exchangeable::<$ty>(); )*
        };
        // SAFETY: every field is Exchangeable (checked by the constant
        // above over the exact field list), so the struct owns everything
        // it reaches.
        unsafe impl $crate::domain::Exchangeable for $name {
            #[inline(always)]
            fn transfer(&self, to: $crate::domain::Owner) {
                $( $crate::domain::Exchangeable::transfer(&self.$field, to); )*
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::exchangeable_struct! {
        struct Header {
            id: u64,
            flags: [u8; 4],
        }
    }

    crate::exchangeable_struct! {
        struct Message {
            head: Header,
            payload: [u16; 3],
            status: Result<Option<u32>, crate::Error>,
        }
    }

    fn cross<T: Exchangeable>(v: T) -> T {
        v
    }

    #[test]
    fn owned_values_and_declared_structs_cross() {
        let m = cross(Message {
            head: Header {
                id: 7,
                flags: [1, 0, 0, 1],
            },
            payload: [1, 2, 3],
            status: Ok(Some(9)),
        });
        assert_eq!((m.head.id, m.head.flags), (7, [1, 0, 0, 1]));
        assert_eq!(m.payload, [1, 2, 3]);
        assert_eq!(m.status, Ok(Some(9)));
        m.transfer(Owner::KERNEL);
        assert_eq!(cross((1u32, [2u8; 4], 'x', true, -3i64)).2, 'x');
    }
}
