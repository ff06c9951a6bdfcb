//! Resource limits (getrlimit(2), prlimit(2)).

pub const RLIM_INFINITY: u64 = u64::MAX;
pub const RLIMIT_CPU: usize = 0;
pub const RLIMIT_FSIZE: usize = 1;
pub const RLIMIT_DATA: usize = 2;
pub const RLIMIT_STACK: usize = 3;
pub const RLIMIT_NPROC: usize = 6;
pub const RLIMIT_NOFILE: usize = 7;
pub const RLIMIT_MEMLOCK: usize = 8;
pub const RLIMIT_AS: usize = 9;
pub const RLIMIT_SIGPENDING: usize = 11;
pub const RLIM_NLIMITS: usize = 16;

frame::pod_struct! {
    #[derive(Debug, PartialEq, Eq)]
    pub struct RLimit {
        pub cur: u64,
        pub max: u64,
    }
}

#[derive(Clone, Copy)]
pub struct Limits(pub [RLimit; RLIM_NLIMITS]);

impl Default for Limits {
    /// Linux's defaults for a root shell.
    fn default() -> Self {
        let inf = RLimit { cur: RLIM_INFINITY, max: RLIM_INFINITY };
        let mut l = [inf; RLIM_NLIMITS];
        l[RLIMIT_STACK] = RLimit { cur: 8 * 1024 * 1024, max: RLIM_INFINITY };
        l[RLIMIT_NOFILE] = RLimit { cur: 1024, max: 4096 };
        l[RLIMIT_NPROC] = RLimit { cur: 4096, max: 4096 };
        l[4] = RLimit { cur: 0, max: RLIM_INFINITY }; // RLIMIT_CORE
        l[8] = RLimit { cur: 8 * 1024 * 1024, max: 8 * 1024 * 1024 }; // RLIMIT_MEMLOCK
        l[13] = RLimit { cur: 0, max: 0 }; // RLIMIT_NICE
        l[14] = RLimit { cur: 0, max: 0 }; // RLIMIT_RTPRIO
        Limits(l)
    }
}
