//! Plain old data: types whose every byte pattern is valid and which have no
//! padding, so they can be copied to and from user memory as bytes.
//!
//! Clients declare such structs with [`pod_struct!`](crate::pod_struct),
//! which checks at compile time that every field is `Pod` and that the
//! struct has no padding bytes.

use core::mem::size_of;

/// # Safety
/// Implementors must be `Copy`, have no padding, and accept every bit
/// pattern (no references, bools, enums or niches).
pub unsafe trait Pod: Copy + Sized + 'static {
    fn new_zeroed() -> Self {
        // SAFETY: all-zero bytes are a valid value of a Pod type.
        unsafe { core::mem::zeroed() }
    }

    fn as_bytes(&self) -> &[u8] {
        // SAFETY: Pod types have no padding, so all size_of bytes are
        // initialised; the slice borrows `self`.
        unsafe { core::slice::from_raw_parts(self as *const Self as *const u8, size_of::<Self>()) }
    }

    fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and any bytes written form a valid Pod value.
        unsafe { core::slice::from_raw_parts_mut(self as *mut Self as *mut u8, size_of::<Self>()) }
    }

    /// Reads a value from the first `size_of::<Self>()` bytes, if there are enough.
    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let mut v = Self::new_zeroed();
        v.as_bytes_mut()
            .copy_from_slice(bytes.get(..size_of::<Self>())?);
        Some(v)
    }
}

macro_rules! impl_pod {
    ($($t:ty),*) => { $(
        // SAFETY: primitive integers accept every bit pattern and have no padding.
        // MIRI: relied on by pod::tests::pod_primitives_and_arrays_have_every_byte_initialised
        unsafe impl Pod for $t {}
    )* };
}
impl_pod!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);
// SAFETY: an array of Pod elements has no padding between elements and
// accepts every bit pattern.
// MIRI: relied on by pod::tests::pod_primitives_and_arrays_have_every_byte_initialised, pod::tests::pod_struct_values_have_every_byte_initialised
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// Compile-time helper used by `pod_struct!`.
pub const fn assert_pod<T: Pod>() {}

/// Declares a `#[repr(C)]` plain-old-data struct and implements [`Pod`] for
/// it, after checking that every field is `Pod` and there is no padding.
///
/// The padding check compares the struct's size with the sum of its field
/// sizes, so it must see exactly the fields the struct has. Attributes on
/// fields are therefore limited to doc comments: a `#[cfg(...)]` on a field
/// is resolved only after the macro has built the sum, and a removed field
/// would hide the padding it leaves behind.
///
/// ```
/// frame::pod_struct! {
///     /// A user-visible record.
///     pub struct Ok1 {
///         /// Documented field.
///         pub a: u32,
///         pub b: [u8; 4],
///     }
/// }
/// ```
///
/// A `cfg` on a field is refused (here the removed field would have hidden
/// three bytes of padding after `a`):
///
/// ```compile_fail
/// frame::pod_struct! {
///     pub struct HiddenPadding {
///         pub a: u8,
///         #[cfg(any())]
///         pub pad: [u8; 3],
///         pub b: u32,
///     }
/// }
/// ```
///
/// So is padding between fields, and padding at the end:
///
/// ```compile_fail
/// frame::pod_struct! { pub struct Gap { pub a: u8, pub b: u32 } }
/// ```
///
/// ```compile_fail
/// frame::pod_struct! { pub struct Tail { pub a: u64, pub b: u8 } }
/// ```
#[macro_export]
macro_rules! pod_struct {
    ($(#[$m:meta])* $vis:vis struct $name:ident {
        $($(#[doc = $doc:expr])* $fvis:vis $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        $vis struct $name { $($(#[doc = $doc])* $fvis $field: $ty),* }
        const _: () = {
            $( $crate::pod::assert_pod::<$ty>(); )*
            assert!(
                ::core::mem::size_of::<$name>() == 0 $(+ ::core::mem::size_of::<$ty>())*,
                "pod_struct: the struct has padding"
            );
        };
        // SAFETY: every field is Pod and the struct has no padding (both
        // checked by the constant above over the exact field list: field
        // attributes other than docs are refused), and it is repr(C).
        // MIRI: relied on by pod::tests::pod_struct_values_have_every_byte_initialised, pod::tests::pod_round_trips_through_bytes
        unsafe impl $crate::pod::Pod for $name {}
    };
}

#[cfg(test)]
mod tests {
    use super::Pod;

    crate::pod_struct! {
        /// Every kind of field the kernel uses: integers of each width,
        /// arrays and a nested Pod struct.
        struct Inner {
            a: u16,
            b: [u8; 2],
            c: i32,
        }
    }

    crate::pod_struct! {
        struct Outer {
            wide: u128,
            /// Fields documented like this are fine.
            x: u64,
            inner: Inner,
            arr: [Inner; 3],
            tail: u64,
            empty: [u64; 0],
        }
    }

    /// Sums every byte (Miri reports a read of an uninitialised padding
    /// byte as undefined behaviour).
    fn byte_sum<T: Pod>(v: &T) -> u64 {
        v.as_bytes().iter().map(|&b| u64::from(b)).sum()
    }

    #[test]
    fn pod_struct_values_have_every_byte_initialised() {
        let inner = Inner {
            a: 0x0101,
            b: [1, 1],
            c: 0x0101_0101,
        };
        let v = Outer {
            wide: 1,
            x: u64::MAX,
            inner,
            arr: [inner; 3],
            tail: 2,
            empty: [],
        };
        assert_eq!(v.as_bytes().len(), 16 + 8 + 8 + 24 + 8);
        assert_eq!(byte_sum(&v), 1 + 8 * 0xff + 8 * 4 + 2);
        assert_eq!(byte_sum(&[inner; 2]), 16);
        assert_eq!(byte_sum(&0u128), 0);
        assert_eq!([0u64; 0].as_bytes().len(), 0);
    }

    #[test]
    fn pod_primitives_and_arrays_have_every_byte_initialised() {
        fn all<T: Pod>(v: T) -> u64 {
            let sum = byte_sum(&v);
            let arr = [v; 3];
            assert_eq!(byte_sum(&arr), 3 * sum);
            assert_eq!(T::from_bytes(v.as_bytes()).map(|w| byte_sum(&w)), Some(sum));
            sum
        }
        assert_eq!(all(0xffu8) + all(-1i8), 2 * 0xff);
        assert_eq!(all(0x0101u16) + all(-1i16), 2 + 2 * 0xff);
        assert_eq!(all(1u32) + all(-1i32), 1 + 4 * 0xff);
        assert_eq!(all(1u64) + all(-1i64), 1 + 8 * 0xff);
        assert_eq!(all(1u128) + all(-1i128), 1 + 16 * 0xff);
        assert_eq!(all(1usize) + all(-1isize), 1 + 8 * 0xff);
        assert_eq!(<[u32; 0] as Pod>::new_zeroed().as_bytes(), &[] as &[u8]);
    }

    #[test]
    fn pod_round_trips_through_bytes() {
        let mut v = <Outer as Pod>::new_zeroed();
        assert_eq!(byte_sum(&v), 0);
        v.as_bytes_mut()[24..26].copy_from_slice(&0xbeefu16.to_ne_bytes());
        assert_eq!(v.inner.a, 0xbeef);
        v.arr[2].c = -2;
        let bytes = v.as_bytes();
        let w = Outer::from_bytes(bytes).unwrap();
        assert_eq!((w.inner.a, w.arr[2].c), (0xbeef, -2));
        // Extra bytes are ignored; too few are refused.
        let mut long = [7u8; 64];
        long[..4].copy_from_slice(&42u32.to_ne_bytes());
        assert_eq!(u32::from_bytes(&long), Some(42));
        assert_eq!(u64::from_bytes(&long[..7]), None);
        assert_eq!(<[u16; 2]>::from_bytes(&[1, 0, 2, 0]), Some([1, 2]));
    }
}
