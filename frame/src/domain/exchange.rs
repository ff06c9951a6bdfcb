//! Values that may cross a domain boundary.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

/// A value that owns everything it reaches: no references, no `Arc`, no
/// interior mutability shared with anything outside the value.
///
/// # Safety
/// If a domain is abandoned halfway through changing such a value (a
/// fault), nothing outside the value can observe the change. Shared
/// ownership (`Arc`, `Rc`), references and raw pointers break that, so no
/// type holding them may implement this trait.
// MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
pub unsafe trait Exchangeable: Send + 'static {}

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
    isize,
    String
);

// SAFETY: each element is Exchangeable and owned by the array.
// MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
unsafe impl<T: Exchangeable, const N: usize> Exchangeable for [T; N] {}
// SAFETY: the box owns its (Exchangeable) contents.
// MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
unsafe impl<T: Exchangeable> Exchangeable for Box<T> {}
// SAFETY: the vector owns its (Exchangeable) elements.
// MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
unsafe impl<T: Exchangeable> Exchangeable for Vec<T> {}
// SAFETY: an option owns its (Exchangeable) contents.
// MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
unsafe impl<T: Exchangeable> Exchangeable for Option<T> {}
// SAFETY: either side is Exchangeable and owned.
// MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
unsafe impl<T: Exchangeable, E: Exchangeable> Exchangeable for Result<T, E> {}
macro_rules! impl_exchangeable_tuple {
    ($($n:ident),+) => {
        // SAFETY: every field is Exchangeable and owned by the tuple.
        // MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
        unsafe impl<$($n: Exchangeable),+> Exchangeable for ($($n,)+) {}
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
///         pub data: Vec<u8>,
///     }
/// }
/// ```
///
/// A field that shares ownership with the outside is refused:
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
        // MIRI: relied on by domain::exchange::tests::owned_values_and_declared_structs_cross
        unsafe impl $crate::domain::Exchangeable for $name {}
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::exchangeable_struct! {
        struct Message {
            id: u64,
            payload: Vec<u8>,
            reply: Option<Box<Message>>,
        }
    }

    fn cross<T: Exchangeable>(v: T) -> T {
        v
    }

    #[test]
    fn owned_values_and_declared_structs_cross() {
        let m = cross(Message {
            id: 7,
            payload: alloc::vec![1, 2, 3],
            reply: Some(Box::new(Message {
                id: 8,
                payload: Vec::new(),
                reply: None,
            })),
        });
        assert_eq!(m.id, 7);
        assert_eq!(m.payload, [1, 2, 3]);
        assert_eq!(m.reply.map(|r| r.id), Some(8));
        assert_eq!(cross((1u32, [2u8; 4], String::from("x"))).2, "x");
    }
}
