# expect: exit=0 needs=none samples>=1
# A program that never touches CUDA (nor torch): recorded as usual, and
# the GPU side stays out of the way.
import time


def spin(s):
    t = time.time()
    while time.time() - t < s:
        pass


spin(0.3)
