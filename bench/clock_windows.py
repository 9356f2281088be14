"""GPU clocks and power while each benchmark run was busy.

    python3 bench/clock_windows.py SAMPLES.csv WINDOWS.txt

SAMPLES.csv: `nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,
utilization.gpu,temperature.gpu --format=csv,noheader,nounits -lms 20`.
WINDOWS.txt: lines `LABEL START END` (epoch seconds, `date +%s.%N`).
For every window, prints per GPU the number of busy samples (utilization
>= 90%) and their median SM clock (MHz), power (W) and temperature (C), so a
difference in time between two runs of the same kernels can be set against a
difference in clock. A sample says what the GPU did over its last ~20 ms;
windows include process start-up, which the utilization filter leaves out.
"""

import statistics
import sys
import time
from datetime import datetime


def read_samples(path):
    samples = []
    for line in open(path):
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 6:
            continue
        try:
            stamp = datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f")
            when = time.mktime(stamp.timetuple()) + stamp.microsecond / 1e6
            gpu, clock, power, util, temp = (float(v) for v in fields[1:6])
        except ValueError:
            continue
        samples.append((when, int(gpu), clock, power, util, temp))
    return samples


def main():
    samples = read_samples(sys.argv[1])
    print(f"{'run':<22} {'gpu':>3} {'busy':>5} {'sm_MHz':>7} {'power_W':>8} {'temp_C':>7}")
    for line in open(sys.argv[2]):
        label, start, end = line.split()
        start, end = float(start), float(end)
        for gpu in sorted({s[1] for s in samples}):
            busy = [s for s in samples if start <= s[0] <= end and s[1] == gpu and s[4] >= 90]
            if not busy:
                print(f"{label:<22} {gpu:>3} {0:>5}")
                continue
            med = lambda k: statistics.median(s[k] for s in busy)
            print(f"{label:<22} {gpu:>3} {len(busy):>5} {med(2):>7.0f} {med(3):>8.0f} {med(5):>7.0f}")


if __name__ == "__main__":
    main()
