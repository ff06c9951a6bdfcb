//! Signal dispositions and masks. Delivery comes with the next issue; the
//! state kept here already follows rt_sigaction(2) and rt_sigprocmask(2).

use frame::sync::{level, SpinLock};

pub const NSIG: usize = 64;
pub const SIGKILL: usize = 9;
pub const SIGSTOP: usize = 19;

/// Bits that can never be blocked.
pub const UNBLOCKABLE: u64 = (1 << (SIGKILL - 1)) | (1 << (SIGSTOP - 1));

pub const SIG_DFL: u64 = 0;
pub const SIG_IGN: u64 = 1;

frame::pod_struct! {
    /// The kernel's `struct sigaction` on x86-64.
    #[derive(Debug, Default, PartialEq, Eq)]
    pub struct SigAction {
        pub handler: u64,
        pub flags: u64,
        pub restorer: u64,
        pub mask: u64,
    }
}
const _: () = assert!(core::mem::size_of::<SigAction>() == 32);

pub struct SignalState {
    actions: SpinLock<[SigAction; NSIG], { level::PROCESS }>,
}

impl Default for SignalState {
    fn default() -> Self {
        Self::new()
    }
}

impl SignalState {
    pub fn new() -> Self {
        SignalState { actions: SpinLock::new([SigAction::default(); NSIG]) }
    }

    /// Disposition of `sig` (1-based, already validated).
    pub fn action(&self, sig: usize) -> SigAction {
        self.actions.lock()[sig - 1]
    }

    pub fn set_action(&self, sig: usize, mut act: SigAction) {
        act.mask &= !UNBLOCKABLE;
        self.actions.lock()[sig - 1] = act;
    }

    /// A copy for fork.
    pub fn clone_state(&self) -> SignalState {
        SignalState { actions: SpinLock::new(*self.actions.lock()) }
    }

    /// execve: handlers go back to the default; ignored signals stay ignored.
    pub fn reset_for_exec(&self) {
        for a in self.actions.lock().iter_mut() {
            if a.handler != SIG_IGN {
                *a = SigAction::default();
            }
        }
    }
}
