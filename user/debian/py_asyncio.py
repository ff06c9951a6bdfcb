# selectors and the asyncio event loop on pipes and subprocesses.
import asyncio, os, selectors
sel = selectors.DefaultSelector()
r, w = os.pipe()
os.set_blocking(r, False)
sel.register(r, selectors.EVENT_READ, "pipe")
print("selector", type(sel).__name__, sel.select(timeout=0))
os.write(w, b"ping")
events = sel.select(timeout=5)
print("ready", [(k.data, bool(m & selectors.EVENT_READ)) for k, m in events], os.read(r, 10))
sel.unregister(r); os.close(r); os.close(w); sel.close()

async def pipe_roundtrip():
    loop = asyncio.get_running_loop()
    r, w = os.pipe()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(r, "rb", 0))
    wt, wp = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(w, "wb", 0))
    for i in range(5):
        wt.write(f"msg {i}\n".encode())
    wt.close()
    lines = [l.decode().strip() async for l in reader]
    transport.close()
    return lines

async def subprocs():
    p = await asyncio.create_subprocess_exec("tr", "a-z", "A-Z", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    out, _ = await p.communicate(b"asyncio subprocess\n")
    shells = await asyncio.gather(*[asyncio.create_subprocess_shell(f"exit {i}") for i in range(4)])
    codes = [await s.wait() for s in shells]
    return out.decode().strip(), p.returncode, codes

async def timers():
    order = []
    async def sleeper(n):
        await asyncio.sleep(n / 100)
        order.append(n)
    await asyncio.gather(*(sleeper(n) for n in (3, 1, 2)))
    try:
        await asyncio.wait_for(asyncio.sleep(10), 0.05)
    except asyncio.TimeoutError:
        order.append("timeout")
    q = asyncio.Queue()
    async def prod():
        for i in range(5): await q.put(i)
        await q.put(None)
    async def cons():
        s = 0
        while (x := await q.get()) is not None: s += x
        return s
    _, s = await asyncio.gather(prod(), cons())
    return order, s

async def main():
    print("pipe", await pipe_roundtrip())
    print("subprocess", await subprocs())
    print("timers", await timers())
    loop = asyncio.get_running_loop()
    print("executor", await loop.run_in_executor(None, sum, range(100)))

asyncio.run(main())
