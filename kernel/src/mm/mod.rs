//! Process memory management (safe policy on top of frame's `VmSpace`).

pub mod vmar;

pub use self::vmar::Vmar;
