//! Trellis kernel: the Linux personality, in safe Rust on top of `frame`.

#![no_std]
#![no_main]
#![forbid(unsafe_code)]

extern crate alloc;

use frame::mm::{PageFlags, UFrame, VmSpace};
use frame::user::{ReturnReason, UserContext};
use policies::frame_alloc::LockedFrameAllocator;
use policies::heap::SlabHeap;
use policies::sched::RoundRobin;

static FRAME_ALLOCATOR: LockedFrameAllocator = LockedFrameAllocator::new();
static HEAP: SlabHeap = SlabHeap::new();
static SCHEDULER: RoundRobin = RoundRobin::new();

frame::main!(kernel_main);

fn kernel_main() -> ! {
    frame::init(frame::Policies { frame_alloc: &FRAME_ALLOCATOR, heap: &HEAP, scheduler: &SCHEDULER });
    frame::println!("memory up: {} free frames", frame::mm::frame_alloc::free_frames());
    let v = alloc::vec![1u8; 10000];
    frame::println!("heap works: {}", v.len());
    frame::run_first_task(frame::task::TaskOptions::new(first_task))
}

fn first_task() {
    frame::println!("first task running");
    let vm = VmSpace::new().expect("vmspace");
    let code: [u8; 24] = [
        0x48, 0xc7, 0xc0, 0x27, 0, 0, 0, // mov rax, 39
        0x0f, 0x05, // syscall
        0x48, 0xc7, 0xc7, 0x2a, 0, 0, 0, // mov rdi, 42
        0x48, 0xc7, 0xc0, 0x3c, 0, 0, 0, // mov rax, 60
        0x0f,
    ];
    let page = UFrame::alloc_zeroed().expect("frame");
    page.write_bytes(0, &code).unwrap();
    page.write_bytes(24, &[0x05]).unwrap();
    vm.map(0x400000, page, PageFlags::RX).unwrap();
    let mut ctx = UserContext::new();
    ctx.set_rip(0x400000);
    ctx.set_rsp(0x7fff_0000);
    loop {
        match ctx.execute(&vm) {
            ReturnReason::Syscall => {
                let (nr, args) = ctx.syscall();
                frame::println!("syscall {nr} args {:?}", &args[..1]);
                if nr == 60 {
                    frame::println!("trellis: poweroff status={}", args[0]);
                    frame::power_off(args[0] as u32);
                }
                ctx.set_rax(1234);
            }
            ReturnReason::Interrupt => frame::task::preempt_point(),
            ReturnReason::Exception(e) => {
                frame::println!("exception {:?}", e);
                frame::power_off(1);
            }
        }
    }
}
