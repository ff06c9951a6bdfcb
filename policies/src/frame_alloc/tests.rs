use super::*;
use proptest::prelude::*;
use std::boxed::Box;
use std::collections::BTreeSet;
use std::vec::Vec;

/// One group: 4096 frames.
type Small = BitmapFrameAllocator<1>;
/// Two groups, so runs and searches cross a summary-word boundary.
type Two = BitmapFrameAllocator<2>;

fn small() -> Box<Small> {
    Box::new(Small::empty())
}

fn two() -> Box<Two> {
    Box::new(Two::empty())
}

#[test]
fn empty_allocator_has_nothing() {
    let mut a = small();
    assert_eq!(a.capacity(), 4096);
    assert_eq!((a.free_count(), a.total_count()), (0, 0));
    assert_eq!(a.alloc(1, 1), None);
    assert!(!a.dealloc(0, 1));
    assert!(!a.is_free(0));
}

#[test]
fn add_free_counts_and_clips() {
    let mut a = small();
    assert_eq!(a.add_free(10, 20), 20);
    assert_eq!(a.add_free(25, 10), 5, "overlap is not counted twice");
    assert_eq!(a.add_free(4090, 100), 6, "clipped at capacity");
    assert_eq!(a.add_free(5000, 10), 0, "entirely beyond capacity");
    assert_eq!(a.add_free(usize::MAX - 1, 10), 0, "no overflow");
    assert_eq!(a.add_free(100, 0), 0);
    assert_eq!(a.total_count(), 31);
    assert_eq!(a.free_count(), 31);
    assert!(a.is_free(10) && a.is_free(34) && !a.is_free(35) && !a.is_free(9));
    assert!(a.is_free(4095) && !a.is_free(4096) && !a.is_free(usize::MAX));
}

#[test]
fn readding_allocated_frames_does_not_free_them() {
    let mut a = small();
    a.add_free(0, 4);
    let p = a.alloc(1, 1).unwrap();
    assert_eq!(a.add_free(0, 4), 0);
    assert!(!a.is_free(p));
    assert_eq!(a.free_count(), 3);
}

#[test]
fn frames_never_added_are_never_returned() {
    let mut a = two();
    a.add_free(100, 3);
    a.add_free(5000, 2);
    let mut got: Vec<usize> = (0..5).map(|_| a.alloc(1, 1).unwrap()).collect();
    got.sort();
    assert_eq!(got, [100, 101, 102, 5000, 5001]);
    assert_eq!(a.alloc(1, 1), None);
    assert_eq!(a.free_count(), 0);
    assert_eq!(a.total_count(), 5);
}

#[test]
fn single_allocation_rotates() {
    let mut a = small();
    a.add_free(0, 4);
    assert_eq!(a.alloc(1, 1), Some(0));
    assert_eq!(a.alloc(1, 1), Some(1));
    assert!(a.dealloc(0, 1));
    // The freed frame is not reused at once: the hint moves forward.
    assert_eq!(a.alloc(1, 1), Some(2));
    assert_eq!(a.alloc(1, 1), Some(3));
    // Then the search wraps around.
    assert_eq!(a.alloc(1, 1), Some(0));
    assert_eq!(a.alloc(1, 1), None);
}

#[test]
fn single_allocation_wraps_within_hint_word() {
    let mut a = small();
    a.add_free(0, 64);
    for i in 0..64 {
        assert_eq!(a.alloc(1, 1), Some(i));
    }
    assert!(a.dealloc(5, 1));
    // The hint is 0 after wrapping past the end; frame 5 is found.
    assert_eq!(a.alloc(1, 1), Some(5));
    assert!(a.dealloc(3, 1));
    // The hint (6) word has only frame 3 free, below the hint.
    assert_eq!(a.alloc(1, 1), Some(3));
}

#[test]
fn single_frames_across_groups() {
    let mut a = Box::new(BitmapFrameAllocator::<4>::empty());
    a.add_free(3 * 4096 + 4000, 1);
    a.add_free(7, 1);
    assert_eq!(a.alloc(1, 1), Some(7));
    assert_eq!(a.alloc(1, 1), Some(3 * 4096 + 4000));
    assert_eq!(a.alloc(1, 1), None);
}

#[test]
fn aligned_allocations() {
    let mut a = small();
    a.add_free(3, 200);
    assert_eq!(a.alloc(1, 8), Some(8));
    assert_eq!(a.alloc(4, 4), Some(12));
    assert_eq!(a.alloc(2, 64), Some(64));
    assert_eq!(a.alloc(1, 128), Some(128));
    assert_eq!(a.alloc(64, 64), None, "only 3..203 were added");
    assert_eq!(a.alloc(1, 256), None);
    // Invalid alignments.
    assert_eq!(a.alloc(1, 0), None);
    assert_eq!(a.alloc(1, 3), None);
    assert_eq!(a.alloc(1, 1 << 63), None);
}

#[test]
fn contiguous_runs_cross_word_and_group_boundaries() {
    let mut a = two();
    a.add_free(60, 10);
    assert_eq!(a.alloc(10, 1), Some(60));
    a.add_free(4090, 20);
    assert_eq!(a.alloc(20, 2), Some(4090));
    assert_eq!(a.free_count(), 0);
    assert!(a.dealloc(4090, 20));
    assert!(a.dealloc(60, 10));
    assert_eq!(a.free_count(), 30);
}

#[test]
fn large_contiguous_run() {
    let mut a = two();
    a.add_free(0, 8192);
    assert_eq!(a.alloc(1, 1), Some(0));
    // Hint is 1: the next 8191 frames are a run.
    assert_eq!(a.alloc(8191, 1), Some(1));
    assert_eq!(a.free_count(), 0);
    assert!(a.dealloc(0, 8192));
    assert_eq!(a.alloc(8192, 1), Some(0));
}

#[test]
fn runs_before_the_hint_are_found() {
    let mut a = small();
    a.add_free(0, 100);
    assert_eq!(a.alloc(90, 1), Some(0));
    // Hint is 90; only 10 frames remain after it.
    assert!(a.dealloc(0, 50));
    assert_eq!(a.alloc(20, 1), Some(0));
}

#[test]
fn fragmentation_defeats_runs() {
    let mut a = small();
    for i in (0..200).step_by(2) {
        a.add_free(i, 1);
    }
    assert_eq!(a.free_count(), 100);
    assert_eq!(a.alloc(2, 1), None);
    assert_eq!(a.alloc(1, 2), Some(0));
}

#[test]
fn invalid_counts() {
    let mut a = small();
    a.add_free(0, 10);
    assert_eq!(a.alloc(0, 1), None);
    assert_eq!(a.alloc(11, 1), None);
    assert_eq!(a.alloc(usize::MAX, 1), None);
    assert_eq!(a.free_count(), 10);
}

#[test]
fn bad_deallocs_are_refused_and_harmless() {
    let mut a = small();
    a.add_free(0, 64);
    let p = a.alloc(8, 8).unwrap();
    assert_eq!(p, 0);

    assert!(!a.dealloc(p, 0), "zero count");
    assert!(!a.dealloc(64, 1), "never added");
    assert!(!a.dealloc(4096, 1), "beyond capacity");
    assert!(!a.dealloc(usize::MAX, 2), "overflow");
    assert!(!a.dealloc(p, 9), "range runs into a free frame");
    assert!(!a.dealloc(p + 7, 2), "range runs into a free frame");
    assert_eq!(a.free_count(), 56, "refused calls change nothing");
    assert!((0..8).all(|f| !a.is_free(f)));

    assert!(a.dealloc(p, 8));
    assert!(!a.dealloc(p, 8), "double free");
    assert!(!a.dealloc(p + 3, 1), "double free of one frame");
    assert_eq!(a.free_count(), 64);
}

#[test]
fn partial_frees_of_an_allocation() {
    let mut a = small();
    a.add_free(0, 16);
    assert_eq!(a.alloc(16, 1), Some(0));
    assert!(a.dealloc(4, 4));
    assert!(a.dealloc(0, 4));
    assert!(!a.dealloc(0, 16));
    assert!(a.dealloc(8, 8));
    assert_eq!(a.free_count(), 16);
}

#[test]
fn exhaust_and_refill() {
    let mut a = two();
    a.add_free(0, 5000);
    let mut seen = BTreeSet::new();
    while let Some(p) = a.alloc(1, 1) {
        assert!(seen.insert(p), "frame {p} handed out twice");
    }
    assert_eq!(seen.len(), 5000);
    assert_eq!(a.free_count(), 0);
    for p in &seen {
        assert!(a.dealloc(*p, 1));
    }
    assert_eq!(a.free_count(), 5000);
    assert_eq!(a.total_count(), 5000);
}

#[test]
fn default_is_empty() {
    let a: Box<Small> = Box::default();
    assert_eq!(a.total_count(), 0);
}

#[test]
fn kernel_sized_allocator_in_a_static() {
    use std::sync::Mutex;
    // `new` is const, so the full-size allocator can live in a static, as
    // the kernel keeps it (behind its own lock).
    static ALLOC: Mutex<FrameAllocator> = Mutex::new(BitmapFrameAllocator::new());
    let mut a = ALLOC.lock().unwrap();
    assert_eq!(a.capacity(), MAX_FRAMES);
    assert_eq!(KERNEL_GROUPS, 1024);

    // Two 1 GiB regions, the second one clipped at 16 GiB.
    assert_eq!(a.add_free(0x100, 0x4_0000), 0x4_0000);
    assert_eq!(a.add_free(MAX_FRAMES - 0x100, 0x4_0000), 0x100);
    assert_eq!(a.total_count(), 0x4_0100);

    assert_eq!(a.alloc(1, 1), Some(0x100));
    // A 2 MiB-aligned huge page worth of frames.
    assert_eq!(a.alloc(512, 512), Some(0x200));
    // Take the rest of the low region from the hint on; the next
    // single-frame search must then jump through the summary words to the
    // top of memory.
    let p = a.alloc(0x4_0100 - 0x400, 1).unwrap();
    assert_eq!(p, 0x400);
    assert_eq!(a.alloc(1, 1), Some(MAX_FRAMES - 0x100));
    assert_eq!(a.alloc(1, 1), Some(MAX_FRAMES - 0xff));
    // Left: 0x101..0x200 below the huge page, and the top 0xfe frames.
    assert_eq!(a.free_count(), 0xff + 0xfe);
    assert!(a.dealloc(p, 0x4_0100 - 0x400));
    assert!(a.dealloc(0x200, 512));
    assert_eq!(a.free_count(), 0x4_0100 - 3);
}

/// Reference model: plain sets of frames.
struct Model {
    added: BTreeSet<usize>,
    free: BTreeSet<usize>,
}

impl Model {
    /// Whether an aligned run of `count` free frames exists anywhere.
    fn run_exists(&self, cap: usize, count: usize, align: usize) -> bool {
        // run[i] = number of consecutive free frames starting at i.
        let mut run = std::vec![0usize; cap + 1];
        for i in (0..cap).rev() {
            if self.free.contains(&i) {
                run[i] = run[i + 1] + 1;
            }
        }
        (0..cap).step_by(align).any(|i| run[i] >= count)
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(usize, usize),
    Alloc(usize, u32),
    /// Free a previous allocation, chosen by index.
    FreeAlloc(prop::sample::Index),
    /// Free an arbitrary range (often invalid).
    FreeRange(usize, usize),
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0usize..9000, 0usize..700).prop_map(|(s, c)| Op::Add(s, c)),
        4 => (prop_oneof![3 => Just(1usize), 1 => 1usize..70], 0u32..7)
            .prop_map(|(c, a)| Op::Alloc(c, a)),
        3 => any::<prop::sample::Index>().prop_map(Op::FreeAlloc),
        1 => (0usize..8400, 0usize..20).prop_map(|(s, c)| Op::FreeRange(s, c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn matches_set_model(ops in proptest::collection::vec(arb_op(), 1..120)) {
        let cap = Two::CAPACITY;
        let mut a = two();
        let mut m = Model { added: BTreeSet::new(), free: BTreeSet::new() };
        let mut allocs: Vec<(usize, usize)> = Vec::new();

        for op in ops {
            match op {
                Op::Add(start, count) => {
                    let mut expect = 0;
                    for f in start..(start + count).min(cap) {
                        if m.added.insert(f) {
                            m.free.insert(f);
                            expect += 1;
                        }
                    }
                    prop_assert_eq!(a.add_free(start, count), expect);
                }
                Op::Alloc(count, shift) => {
                    let align = 1usize << shift;
                    match a.alloc(count, align) {
                        Some(p) => {
                            prop_assert_eq!(p % align, 0, "misaligned");
                            for f in p..p + count {
                                // Covers both "handed out twice" and
                                // "never added": only model-free frames
                                // may be returned.
                                prop_assert!(m.free.remove(&f), "frame {} not free", f);
                            }
                            allocs.push((p, count));
                        }
                        None => prop_assert!(
                            !m.run_exists(cap, count, align),
                            "alloc({}, {}) failed although a run exists", count, align
                        ),
                    }
                }
                Op::FreeAlloc(i) => {
                    if allocs.is_empty() {
                        continue;
                    }
                    let (p, count) = allocs.swap_remove(i.index(allocs.len()));
                    let valid = (p..p + count).all(|f| !m.free.contains(&f));
                    prop_assert_eq!(a.dealloc(p, count), valid);
                    if valid {
                        m.free.extend(p..p + count);
                    }
                }
                Op::FreeRange(start, count) => {
                    let valid = count > 0
                        && (start..start + count).all(|f| m.added.contains(&f) && !m.free.contains(&f));
                    prop_assert_eq!(a.dealloc(start, count), valid);
                    if valid {
                        m.free.extend(start..start + count);
                    }
                }
            }
            prop_assert_eq!(a.free_count(), m.free.len());
            prop_assert_eq!(a.total_count(), m.added.len());
        }

        // The bitmap agrees with the model frame by frame.
        for f in 0..cap {
            prop_assert_eq!(a.is_free(f), m.free.contains(&f), "frame {}", f);
        }
        // Free everything still allocated: no leak.
        let used: Vec<usize> = m.added.difference(&m.free).copied().collect();
        for f in used {
            prop_assert!(a.dealloc(f, 1));
        }
        prop_assert_eq!(a.free_count(), m.added.len());
        prop_assert_eq!(a.total_count(), m.added.len());
        // And all of it can be allocated again, each frame once.
        let mut seen = BTreeSet::new();
        while let Some(p) = a.alloc(1, 1) {
            prop_assert!(seen.insert(p));
        }
        prop_assert_eq!(seen, m.added);
    }
}
