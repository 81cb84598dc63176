/**
 * Per-IP politeness across the partitions of a node and across nodes (docs/cluster.md,
 * "Politeness across nodes"). Placeholder gate: every IP may go whenever the partition's own
 * heaps say so (the node's shared floor guard still spaces the node's requests to an IP by τs0).
 */
import type { IpGate } from '../frontier/index.js';

export class NodeIpGate implements IpGate {
  earliest(_ip: string, now: number): number {
    return now;
  }

  released(_ip: string, _now: number): void {}

  finished(_ip: string): void {}
}
