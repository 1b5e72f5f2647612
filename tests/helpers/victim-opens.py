# The victim of a flood (t0706, t0711): opens and reads each file given,
# in order, and prints "right wrong p99_ms max_ms". A file whose name ends
# in .bad should be denied, any other allowed; the other outcome is wrong.
# Run as another uid with python3 -c "$(cat victim-opens.py)": the source
# tree may not be readable by that uid.
import sys, time
lat, wrong = [], 0
for p in sys.argv[1:]:
    t = time.perf_counter()
    try:
        with open(p, 'rb') as f:
            f.read()
        allowed = True
    except PermissionError:
        allowed = False
    lat.append(time.perf_counter() - t)
    wrong += allowed == p.endswith('.bad')
lat.sort()
print(len(lat) - wrong, wrong, round(lat[int(len(lat) * 0.99) - 1] * 1000), round(lat[-1] * 1000))
