//! Process memory management (safe policy on top of frame's `VmSpace`).

pub mod commit;
pub mod limits;
pub mod oom;
pub mod page_cache;
pub mod page_cache_ktest;
pub mod placeholder_ktest;
pub mod user_copy_ktest;
pub mod vmar;

pub use self::limits::MapLimits;
pub use self::vmar::{NoFaults, Vmar};
