# multiprocessing: fork pool, queues, pipes, shared values, processes.
import multiprocessing as mp
def sq(x):
    return x * x
def fail(code):
    raise SystemExit(code)
def child(q, n):
    q.put(sum(range(n)))
def piper(conn):
    conn.send(conn.recv()[::-1]); conn.close()
def inc(v, lock):
    for _ in range(200):
        with lock:
            v.value += 1
if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(3) as pool:
        print("pool.map", pool.map(sq, range(12)))
        print("apply_async", pool.apply_async(sq, (9,)).get(timeout=60))
    q = mp.Queue()
    ps = [mp.Process(target=child, args=(q, n)) for n in (10, 100, 1000)]
    for p in ps: p.start()
    print("queue", sorted(q.get(timeout=60) for _ in ps))
    for p in ps: p.join()
    print("exitcodes", [p.exitcode for p in ps])
    v = mp.Value("i", 0); lock = mp.Lock()
    ps = [mp.Process(target=inc, args=(v, lock)) for _ in range(4)]
    for p in ps: p.start()
    for p in ps: p.join()
    print("shared value", v.value)
    p = mp.Process(target=fail, args=(3,)); p.start(); p.join()
    print("failing child exitcode", p.exitcode)
    # Last: mp.Pipe is a socketpair.
    a, b = mp.Pipe()
    p = mp.Process(target=piper, args=(b,)); p.start()
    a.send("multiprocessing"); print("pipe", a.recv()); p.join()
