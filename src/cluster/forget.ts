/**
 * `drumcrawl cluster forget <node>`: a node lost for good (its machine and its disk gone) gives up
 * what it held, so that the other nodes take its partitions (docs/cluster.md, "Failures and
 * membership"). A lease stays with its node while the node is away because the partition's state
 * is on that node's disk; once the operator says the disk is gone, each of its held leases is
 * released with no snapshot (compare-and-set on the revision read), its member record is removed
 * (so the rendezvous placement no longer counts it), and its per-IP registrations end at a slot
 * boundary at least JOIN_MS ahead, as a node leaving an IP ends its own (ip-slots.ts).
 *
 * The partitions restart empty on their new owners: their seeds are injected again, the batches
 * waiting in the stream (and those the lost node held unacknowledged, delivered again after their
 * ack wait) are admitted, and what the lost node alone knew — URLs discovered and not yet fetched,
 * its URLseen — is gone; pages it fetched are fetched again when a link reaches them.
 *
 * A live node (active or leaving, its record written within LIVE_MS) is refused: `cluster leave`
 * moves a live node's partitions with their state. Should a forgotten node come back, it finds
 * its leases not held by it and removes its partition directories before it opens anything
 * (placement.ts), then joins as a new member.
 */
import { CrawlError } from '../errors.js';
import { fromJson, isCasConflict, jsonBytes, type Engine } from './engine/engine.js';
import { JOIN_MS } from './engine/ip-slots.js';
import { LIVE_MS, type CrawlMeta, type Lease, type MemberStatus } from './engine/view.js';

export interface ForgetResult {
  /** partitions whose lease was released */
  released: number[];
  /** partitions released to the node by a hand-off it never took, now free to any node */
  redirected: number[];
  /** IP registrations ended */
  ips: number;
}

/** Retries a compare-and-set step until it applies or has nothing to do (at most 32 tries). */
async function casLoop(step: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 32; i++) {
    try {
      return await step();
    } catch (e) {
      if (!isCasConflict(e)) throw e;
    }
  }
  throw new CrawlError('CRAWL_CLUSTER_LEASE', 'the KV bucket kept changing under cluster forget (32 tries)');
}

export async function forgetNode(e: Engine, meta: CrawlMeta, id: string, now = Date.now()): Promise<ForgetResult> {
  const rec = await e.kv.get(`node.${id}`);
  if (rec === null || rec.operation !== 'PUT') throw new CrawlError('CRAWL_CLUSTER_CONFIG', `no node ${id} in crawl ${meta.crawl}`);
  const m = fromJson<MemberStatus>(rec.value);
  if ((m.state === 'active' || m.state === 'leaving') && now - rec.created.getTime() <= LIVE_MS) {
    throw new CrawlError('CRAWL_CLUSTER_CONFIG', `node ${id} is live (its record is ${now - rec.created.getTime()} ms old): ask it to leave (drumcrawl cluster leave ${id}) instead`);
  }
  const out: ForgetResult = { released: [], redirected: [], ips: 0 };
  for (let p = 0; p < meta.partitions; p++) {
    const key = `lease.${p}`;
    await casLoop(async () => {
      const cur = await e.kv.get(key);
      if (cur === null || cur.operation !== 'PUT') return false;
      const l = fromJson<Lease>(cur.value);
      const at = new Date(now).toISOString();
      if (l.node === id && l.state === 'held') {
        // Its state was on the lost disk: free to any node, nothing to restore — unless the node
        // was still restoring it from a snapshot, which is then still whole in the object store.
        const free: Lease = { node: id, state: 'free', ...(l.snapshot !== undefined ? { snapshot: l.snapshot } : {}), at };
        await e.kv.update(key, jsonBytes(free), cur.revision);
        out.released.push(p);
        return true;
      }
      if (l.state === 'free' && l.to === id) {
        // Handed to the lost node, never taken: the snapshot stays, any node may take it.
        const free: Lease = { node: l.node, state: 'free', ...(l.snapshot !== undefined ? { snapshot: l.snapshot } : {}), at };
        await e.kv.update(key, jsonBytes(free), cur.revision);
        out.redirected.push(p);
        return true;
      }
      return false;
    });
  }
  for await (const key of await e.kv.keys('ip.*')) {
    const ended = await casLoop(async () => {
      const cur = await e.kv.get(key);
      if (cur === null || cur.operation !== 'PUT') return false;
      const reg = fromJson<{ m: { n: string; f: number; u?: number }[] }>(cur.value);
      if (!reg.m.some((x) => x.n === id && x.u === undefined)) return false;
      const u = Math.ceil((now + JOIN_MS) / meta.slotMs) * meta.slotMs;
      await e.kv.update(key, jsonBytes({ m: reg.m.map((x) => (x.n === id && x.u === undefined ? { ...x, u } : x)) }), cur.revision);
      return true;
    });
    if (ended) out.ips++;
  }
  await e.kv.delete(`node.${id}`);
  await e.kv.delete(`leave.${id}`).catch(() => undefined);
  return out;
}
