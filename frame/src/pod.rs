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
        unsafe impl Pod for $t {}
    )* };
}
impl_pod!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);
// SAFETY: an array of Pod elements has no padding between elements and
// accepts every bit pattern.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// Compile-time helper used by `pod_struct!`.
pub const fn assert_pod<T: Pod>() {}

/// Declares a `#[repr(C)]` plain-old-data struct and implements [`Pod`] for
/// it, after checking that every field is `Pod` and there is no padding.
#[macro_export]
macro_rules! pod_struct {
    ($(#[$m:meta])* $vis:vis struct $name:ident { $($(#[$fm:meta])* $fvis:vis $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        $vis struct $name { $($(#[$fm])* $fvis $field: $ty),* }
        const _: () = {
            $( $crate::pod::assert_pod::<$ty>(); )*
            assert!(
                ::core::mem::size_of::<$name>() == 0 $(+ ::core::mem::size_of::<$ty>())*,
                "pod_struct: the struct has padding"
            );
        };
        // SAFETY: every field is Pod and the struct has no padding (both
        // checked by the constant above), and it is repr(C).
        unsafe impl $crate::pod::Pod for $name {}
    };
}
