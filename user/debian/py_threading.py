# threading: locks, conditions, queues, barriers, thread-local, pools.
import threading, queue, concurrent.futures
counter = 0
lock = threading.Lock()
def work(n):
    global counter
    for _ in range(n):
        with lock:
            counter += 1
ts = [threading.Thread(target=work, args=(5000,)) for _ in range(8)]
for t in ts: t.start()
for t in ts: t.join()
print("counter", counter)
q = queue.Queue(maxsize=4)
out = []
def producer():
    for i in range(50): q.put(i)
    q.put(None)
def consumer():
    while (item := q.get()) is not None: out.append(item * 2)
p, c = threading.Thread(target=producer), threading.Thread(target=consumer)
p.start(); c.start(); p.join(); c.join()
print("queue", len(out), sum(out))
cond = threading.Condition()
ready = []
def waiter(i):
    with cond:
        cond.wait_for(lambda: ready)
        ready.append(i)
ws = [threading.Thread(target=waiter, args=(i,)) for i in range(4)]
for w in ws: w.start()
with cond:
    ready.append("go"); cond.notify_all()
for w in ws: w.join()
print("condition", sorted(x for x in ready if x != "go"))
barrier = threading.Barrier(5)
ids = []
def b(i):
    ids.append(barrier.wait() >= 0)
bs = [threading.Thread(target=b, args=(i,)) for i in range(5)]
for t in bs: t.start()
for t in bs: t.join()
print("barrier", all(ids), len(ids))
local = threading.local()
res = {}
def loc(i):
    local.v = i
    res[i] = local.v
ls = [threading.Thread(target=loc, args=(i,)) for i in range(6)]
for t in ls: t.start()
for t in ls: t.join()
print("local", res == {i: i for i in range(6)})
with concurrent.futures.ThreadPoolExecutor(max_workers=4) as ex:
    print("pool", list(ex.map(lambda x: x ** 3, range(10))))
ev = threading.Event()
t = threading.Timer(0.05, ev.set); t.start()
print("event", ev.wait(10))
t.join()
sem = threading.BoundedSemaphore(2)
peak = [0, 0]
def s():
    with sem:
        with lock:
            peak[0] += 1; peak[1] = max(peak[1], peak[0])
        threading.Event().wait(0.01)
        with lock:
            peak[0] -= 1
ss = [threading.Thread(target=s) for _ in range(6)]
for t in ss: t.start()
for t in ss: t.join()
print("semaphore peak <= 2:", peak[1] <= 2, "threads left", threading.active_count())
