//! Process memory management (safe policy on top of frame's `VmSpace`).

pub mod limits;
pub mod vmar;

pub use self::limits::MapLimits;
pub use self::vmar::Vmar;
