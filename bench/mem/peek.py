# Quick look at a running probe file: last sample per thread + process RSS (MiB).
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
last = {}
for r in rows: last[r['thread']] = r
tot = ab = 0
for k, r in sorted(last.items()):
    tot += r['heapTotal']; ab += r['arrayBuffers']
    print('%-22s t=%4ds used %6.1f tot %6.1f ab %6.1f ext %6.1f mall %5.1f lim %5.0f' % (k, r['t']/1000, r['heapUsed']/2**20, r['heapTotal']/2**20, r['arrayBuffers']/2**20, r['external']/2**20, r['malloced']/2**20, r['heapLimit']/2**20))
m = last.get('main#0')
if m:
    p = m['proc']; print('RSS %.0f anon %.0f file %.0f threads %d | sum heapTotal %.0f + AB %.0f -> native %.0f' % (p['vmRss']/2**20, p['rssAnon']/2**20, p['rssFile']/2**20, p['threads'], tot/2**20, ab/2**20, (p['vmRss']-tot-ab)/2**20))
    print('main spaces', {k: round(v/2**20,1) for k, v in m['spaces'].items() if v})
