# bench/dump_threads.py READY [THREADS [DEPTH]] — the process bench/dump.sh
# dumps: THREADS threads (100), each DEPTH frames deep (50) in a
# recursion, each frame with a few locals, all asleep; READY is created
# once every thread is at the bottom.
import sys
import threading
import time

ready = sys.argv[1]
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 100
depth = int(sys.argv[3]) if len(sys.argv) > 3 else 50
arrived = threading.Barrier(threads + 1)


def down(n, label="frame", items=(1, 2, 3)):
    count = n * 2
    if n > 1:
        return down(n - 1, label, items) + count
    arrived.wait()
    time.sleep(1000)
    return count


for i in range(threads):
    threading.Thread(target=down, args=(depth - 2,), name="worker-%d" % i, daemon=True).start()
arrived.wait()
open(ready, "w").close()
time.sleep(1000)
