# Compare bench/mem results: median VmRSS, native, sums of V8 heaps and ArrayBuffers per bin of
# unique URLs seen, plus the smaps classes at the stop. Usage: python3 compare.py results/mem-*.json
import json, sys, statistics
bins = [0, 0.25e6, 0.5e6, 1e6, 1.5e6, 2e6, 2.5e6, 3e6, 1e9]
for f in sys.argv[1:]:
    d = json.load(open(f))
    print(f"== {f.split('/')[-1]}  ram {d['setup']['ram']} env {d['setup']['env']} node {d['setup'].get('nodeArgs')}  final {d['final']}  peak {d['peakRssMiB']}")
    s = d['series']
    for a, b in zip(bins, bins[1:]):
        xs = [r for r in s if a <= r['urlsSeen'] < b and r['urlsSeen'] > 0]
        if not xs: continue
        med = lambda k: statistics.median(r.get(k, 0) for r in xs)
        print(f"  {a/1e6:4.2f}-{b/1e6:4.2f}M n={len(xs):3d} rss {med('vmRss'):6.0f} heaps {med('all.heapTotal'):5.0f} AB {med('all.arrayBuffers'):5.0f} native {med('native'):5.0f} | main {med('main.heapTotal'):4.0f} parse {med('parse.heapTotal'):4.0f} urlseen {med('drum-urlseen.heapTotal'):3.0f}+{med('drum-urlseen.arrayBuffers'):3.0f} star {med('drum-star.heapTotal'):3.0f} cs {med('drum-contentseen.heapTotal'):3.0f}+{med('drum-contentseen.arrayBuffers'):3.0f} other {med('other.heapTotal'):3.0f}")
    sm = d.get('smapsAtStopMiB', {})
    print('  smaps at stop:', {k: round(v) for k, v in sm.items() if not k.endswith('.count') and v >= 1}, 'arenas', sm.get('threadArenas.count'))
